package hash

import "github.com/xdphash/xdphash/dissect"

// Source says where a packet's flow hash came from.
type Source uint8

// The hash sources.
const (
	// SourceNone: no hash (KindDevice, and the device gave none); the hash
	// is 0.
	SourceNone Source = iota
	// SourceKernel: the kernel's SipHash, computed here.
	SourceKernel
	// SourceToeplitz: the Toeplitz RSS hash, computed here.
	SourceToeplitz
	// SourceDevice: the device's hash, from the frame's XDP metadata.
	SourceDevice

	NumSources = iota
)

var sourceNames = [NumSources]string{"none", "kernel", "toeplitz", "device"}

// String is "none", "kernel", "toeplitz" or "device".
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "unknown"
}

// Kind is the hash kind this steering was built with.
func (s *Steering) Kind() Kind { return s.hashKind }

// Own is the source of the hash that Hash computes: SourceToeplitz for
// KindToeplitz, SourceKernel for the others.
func (s *Steering) Own() Source {
	if s.hashKind == KindToeplitz {
		return SourceToeplitz
	}
	return SourceKernel
}

// HashDevice returns the flow hash of a packet with keys whose device gave
// hash dev (has), covering the ports when devL4, and where that hash came
// from. KindAuto takes the device's hash when it covers the ports, as
// skb_get_hash returns an l4_hash skb->hash without dissecting, and computes
// the kernel's otherwise; KindDevice takes the device's hash always, and 0
// (SourceNone) when there is none; KindKernel and KindToeplitz compute their
// own whatever the device says.
func (s *Steering) HashDevice(keys *dissect.FlowKeys, dev uint32, devL4, has bool) (h uint32, l4 bool, src Source) {
	if s.TakesDevice(devL4, has) {
		if has {
			return dev, devL4, SourceDevice
		}
		return 0, false, SourceNone
	}
	h, l4 = s.Hash(keys)
	return h, l4, s.Own()
}

// TakesDevice tells whether HashDevice, given what the device said (a hash,
// has, covering the ports, devL4), answers from it rather than computing its
// own hash: a receive loop hashes the frames it does not take together
// (HashBatch).
func (s *Steering) TakesDevice(devL4, has bool) bool {
	switch s.hashKind {
	case KindAuto:
		return has && devL4
	case KindDevice:
		return true
	}
	return false
}
