package hash

import (
	"fmt"

	"github.com/xdphash/xdphash/dissect"
)

// Kind selects the flow hash of each packet.
type Kind uint8

const (
	// KindKernel is skb_get_hash: the kernel's SipHash over the flow keys.
	KindKernel Kind = iota
	// KindToeplitz is the NIC's RSS hash, which the driver hands the kernel
	// as skb->hash so that RPS uses it instead of computing its own.
	KindToeplitz
	// KindAuto is skb_get_hash on a host whose device gives a hash: the
	// device's hash when it covers the ports (the kernel keeps it as
	// skb->hash with l4_hash set), the kernel's SipHash otherwise
	// (Steering.HashDevice).
	KindAuto
	// KindDevice is the device's hash, whatever it covers; a frame without
	// one hashes to 0 (Steering.HashDevice).
	KindDevice
)

var kindNames = [...]string{KindKernel: "kernel", KindToeplitz: "toeplitz", KindAuto: "auto", KindDevice: "device"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kernel"
}

// SteerKind selects how a flow hash picks a worker.
type SteerKind uint8

const (
	// SteerRPS is get_rps_cpu: reciprocal_scale(hash, workers), the hash's
	// high bits.
	SteerRPS SteerKind = iota
	// SteerRETA is a NIC's RSS indirection table over the workers, indexed by
	// the hash's low bits.
	SteerRETA
)

func (k SteerKind) String() string {
	if k == SteerRETA {
		return "reta"
	}
	return "rps"
}

// SteerConfig describes the hash and the steering.
type SteerConfig struct {
	Workers int // at least 1

	Hash     Kind
	Key      Key      // KindKernel's SipHash key
	RSSKey   []byte   // KindToeplitz's key, 40 or 52 bytes; nil means DefaultRSSKey
	Symmetry Symmetry // KindToeplitz's symmetric transform

	Steer       SteerKind
	RETASize    int   // SteerRETA's table size, a power of two; 0 means DefaultRETASize
	RETAWeights []int // SteerRETA's per-worker weights (ethtool -X weight); nil means round robin
	// RETATable, when set, is SteerRETA's table itself (a device's, from
	// kernel.ReadRSS), entries being workers; RETASize and RETAWeights are
	// then unused.
	RETATable []uint32
}

// Steering hashes dissected keys and picks a worker for the hash. Its methods
// are called per packet: a switch on the configured kind, no interface call.
// It holds no mutable state, so receive loops may share it.
type Steering struct {
	hashKind Kind
	kernel   Kernel
	toeplitz *Toeplitz
	sym      Symmetry
	steer    SteerKind
	rps      RPSMap
	reta     *RETA
	workers  int
}

// NewSteering checks cfg and builds its tables.
func NewSteering(cfg SteerConfig) (*Steering, error) {
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("create steering: %w: %d workers, want at least 1", ErrSteering, cfg.Workers)
	}
	s := &Steering{hashKind: cfg.Hash, sym: cfg.Symmetry, steer: cfg.Steer, workers: cfg.Workers}
	switch cfg.Hash {
	case KindKernel, KindAuto, KindDevice:
		// Auto and device compute the kernel's hash where the device gave
		// none (auto) and for the device-hash check.
		s.kernel = NewKernel(cfg.Key)
	case KindToeplitz:
		key := cfg.RSSKey
		if key == nil {
			key = DefaultRSSKey[:]
		}
		t, err := NewToeplitz(key)
		if err != nil {
			return nil, fmt.Errorf("create steering: %w", err)
		}
		s.toeplitz = t
	default:
		return nil, fmt.Errorf("create steering: %w: hash kind %d", ErrSteering, cfg.Hash)
	}
	switch cfg.Steer {
	case SteerRPS:
		// The map lists worker indices: worker i stands for the i-th CPU of
		// the map in ascending order, as the kernel's map lists CPUs.
		idx := make([]int, cfg.Workers)
		for i := range idx {
			idx[i] = i
		}
		m, err := NewRPSMap(idx)
		if err != nil {
			return nil, fmt.Errorf("create steering: %w", err)
		}
		s.rps = m
	case SteerRETA:
		r, err := NewRETA(cfg.RETASize, cfg.Workers, cfg.RETAWeights)
		if cfg.RETATable != nil {
			r, err = NewRETAFromTable(cfg.RETATable, cfg.Workers)
		}
		if err != nil {
			return nil, fmt.Errorf("create steering: %w (hint: --reta-weights takes one weight per worker)", err)
		}
		s.reta = r
	default:
		return nil, fmt.Errorf("create steering: %w: steer kind %d", ErrSteering, cfg.Steer)
	}
	return s, nil
}

// Hash returns keys' flow hash and whether it covers the transport ports
// (skb->l4_hash). For KindToeplitz the ports are hashed, as NICs hash them
// by default, for unfragmented TCP and UDP only, and l4 says so; keys without
// IP addresses hash to 0, for which NICs report no hash. KindAuto and
// KindDevice compute the kernel's hash here; HashDevice chooses between it and
// the device's.
func (s *Steering) Hash(keys *dissect.FlowKeys) (h uint32, l4 bool) {
	if s.hashKind != KindToeplitz {
		return s.kernel.Hash(keys)
	}
	withPorts := nicHashesPorts(keys)
	h = s.toeplitz.FromKeys(keys, withPorts, s.sym)
	return h, withPorts && h != 0
}

// HashBatch sets hashes[i] and l4[i] to what Hash returns for keys[i], for
// every i; hashes and l4 must be at least as long as keys. The kernel's hash
// runs a batch at a time (Kernel.HashBatch); Toeplitz one key at a time.
func (s *Steering) HashBatch(keys []dissect.FlowKeys, hashes []uint32, l4 []bool) {
	if s.hashKind != KindToeplitz {
		s.kernel.HashBatch(keys, hashes, l4)
		return
	}
	hashes, l4 = hashes[:len(keys)], l4[:len(keys)]
	for i := range keys {
		hashes[i], l4[i] = s.Hash(&keys[i])
	}
}

// nicHashesPorts is the default RSS field set of NICs ("ethtool -n DEV
// rx-flow-hash tcp4" shows it): ports for unfragmented TCP and UDP, the
// addresses alone otherwise.
func nicHashesPorts(keys *dissect.FlowKeys) bool {
	const ipProtoTCP, ipProtoUDP = 6, 17
	p := keys.IPProto()
	return (p == ipProtoTCP || p == ipProtoUDP) && keys.Flags()&dissect.FlagIsFragment == 0
}

// Worker returns the worker of a packet with flow hash h that came in on
// receive queue queue. A hash of 0 (a NIC's "no hash": only KindToeplitz
// gives it) steers nowhere in get_rps_cpu, and the packet stays on the CPU
// that received it: here worker queue % workers.
func (s *Steering) Worker(h uint32, queue int) int {
	if s.steer == SteerRETA {
		if h == 0 {
			return queue % s.workers
		}
		return s.reta.Queue(h)
	}
	if w := s.rps.CPU(h); w >= 0 {
		return w
	}
	return queue % s.workers
}

// Workers is the number of workers steered to.
func (s *Steering) Workers() int { return s.workers }

// NewRSSSpread returns the function a NIC's RSS applies to a frame to pick
// one of queues receive queues: the Toeplitz hash (key nil means
// DefaultRSSKey) of the outer addresses and, for unfragmented TCP and
// UDP, ports, through a default indirection table (weights nil) or a
// weighted one. A NIC parses no tunnel, so the frame is dissected with
// FLOW_DISSECTOR_F_STOP_BEFORE_ENCAP, and past an IPv6 flow label; frames
// without IP addresses (no RSS hash) go to queue 0, as NICs put them.
//
// It is what pipeline's RSS stage calls per frame to spread a single stream
// (a capture, synthetic templates) over virtual queues; the function is not
// safe for concurrent use.
func NewRSSSpread(key []byte, sym Symmetry, queues int, weights []int) (func(frame []byte) int, error) {
	if key == nil {
		key = DefaultRSSKey[:]
	}
	t, err := NewToeplitz(key)
	if err != nil {
		return nil, fmt.Errorf("create RSS spread: %w", err)
	}
	reta, err := NewRETA(0, queues, weights)
	if err != nil {
		return nil, fmt.Errorf("create RSS spread: %w", err)
	}
	var keys dissect.FlowKeys
	return func(frame []byte) int {
		dissect.DissectFrame(&keys, frame, dissect.FlagStopBeforeEncap)
		h := t.FromKeys(&keys, nicHashesPorts(&keys), sym)
		if h == 0 {
			return 0
		}
		return reta.Queue(h)
	}, nil
}
