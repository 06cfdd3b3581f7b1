package verify

import (
	"fmt"
	"strings"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

// FlowFunc computes xdphash's view of a frame received with a metadata VLAN
// tag (the zero tag: none): the dissected keys (before direction
// normalisation), the dissector's result and the flow hash.
type FlowFunc func(frame []byte, tag dissect.VLANTag) (keys dissect.FlowKeys, ok bool, flowHash uint32)

// KernelFlow is the FlowFunc of the product: the default dissector flags and the
// kernel flow hash with the given key, as skb_get_hash computes them.
func KernelFlow(key hash.Key) FlowFunc {
	h := hash.NewKernel(key)
	return func(frame []byte, tag dissect.VLANTag) (dissect.FlowKeys, bool, uint32) {
		var k dissect.FlowKeys
		ok := dissect.DissectFrameTagged(&k, frame, tag, dissect.DefaultFlags)
		v, _ := h.Hash(&k)
		return k, ok, v
	}
}

// DissectorFlow is KernelFlow through a Dissector with the given fast-path gates.
func DissectorFlow(key hash.Key, gates dissect.Gates) FlowFunc {
	h := hash.NewKernel(key)
	d := dissect.NewDissector(dissect.DefaultFlags, gates)
	return func(frame []byte, tag dissect.VLANTag) (dissect.FlowKeys, bool, uint32) {
		var k dissect.FlowKeys
		ok, _ := d.DissectFrameTagged(&k, frame, tag)
		v, _ := h.Hash(&k)
		return k, ok, v
	}
}

// Sample is one frame, as received with a metadata VLAN tag or without, with
// both sides' verdicts.
type Sample struct {
	Name       string
	Frame      []byte
	Tag        dissect.VLANTag  // the metadata tag it was received with; zero: none
	Keys       dissect.FlowKeys // xdphash's keys, before direction normalisation
	OK         bool             // xdphash's dissector result
	Hash       uint32           // xdphash's flow hash
	KernelHash uint32           // the running kernel's skb_get_hash
}

// NewSample fills a Sample of an untagged frame from xdphash's side;
// KernelHash is the caller's.
func NewSample(name string, frame []byte, flow FlowFunc, kernelHash uint32) Sample {
	return NewTaggedSample(name, frame, dissect.VLANTag{}, flow, kernelHash)
}

// NewTaggedSample is NewSample for a frame received with tag in its metadata;
// kernelHash is then the kernel's hash of the frame with that tag
// (kernel.HashOracle.HashTagged).
func NewTaggedSample(name string, frame []byte, tag dissect.VLANTag, flow FlowFunc, kernelHash uint32) Sample {
	k, ok, h := flow(frame, tag)
	return Sample{Name: name, Frame: frame, Tag: tag, Keys: k, OK: ok, Hash: h, KernelHash: kernelHash}
}

// Divergence is a pair of frames that the kernel and xdphash group differently.
type Divergence struct {
	A, B       Sample
	KernelSame bool     // the kernel puts A and B in one flow
	Fields     []string // key fields that differ between A and B in xdphash's normalised view
}

// Partition compares the partition of samples by kernel hash with the partition by
// xdphash's hash, and returns one divergence per sample whose class differs: the
// sample paired with the first sample of its kernel class (when xdphash separates
// them) or of its xdphash class (when the kernel separates them).
func Partition(samples []Sample) []Divergence {
	firstByKernel := make(map[uint32]int, len(samples))
	firstByOurs := make(map[uint32]int, len(samples))
	var out []Divergence
	for i := range samples {
		s := &samples[i]
		kFirst, kSeen := firstByKernel[s.KernelHash]
		oFirst, oSeen := firstByOurs[s.Hash]
		if !kSeen {
			firstByKernel[s.KernelHash] = i
			kFirst = i
		}
		if !oSeen {
			firstByOurs[s.Hash] = i
			oFirst = i
		}
		switch {
		case kFirst == oFirst:
		case kFirst != i && samples[kFirst].Hash != s.Hash:
			out = append(out, newDivergence(samples[kFirst], *s))
		default:
			out = append(out, newDivergence(samples[oFirst], *s))
		}
	}
	return out
}

// Pairs compares each pair (base, mutation) on its own: the kernel's same-flow
// verdict against xdphash's. It is immune to the unrelated hash collisions a large
// Partition set can meet.
func Pairs(pairs [][2]Sample) []Divergence {
	var out []Divergence
	for _, p := range pairs {
		if (p[0].KernelHash == p[1].KernelHash) != (p[0].Hash == p[1].Hash) {
			out = append(out, newDivergence(p[0], p[1]))
		}
	}
	return out
}

func newDivergence(a, b Sample) Divergence {
	return Divergence{A: a, B: b, KernelSame: a.KernelHash == b.KernelHash, Fields: DiffFields(&a.Keys, &b.Keys)}
}

// keyField names a member of struct flow_keys for reports.
type keyField struct {
	name     string
	off, len int
}

// hashedFields are the members a flow hash can depend on, in struct order.
var hashedFields = []keyField{
	{"n_proto", dissect.OffNProto, 2},
	{"ip_proto", dissect.OffIPProto, 1},
	{"flow_label", dissect.OffFlowLabel, 4},
	{"vlan_tci", dissect.OffVLANTCI, 2},
	{"vlan_tpid", dissect.OffVLANTPID, 2},
	{"vlan_eth_type", dissect.OffVLANEthType, 2},
	{"keyid", dissect.OffKeyID, 4},
	{"sport", dissect.OffPorts, 2},
	{"dport", dissect.OffPorts + 2, 2},
	{"src", dissect.OffAddrs, 16},
	{"dst", dissect.OffIPv6Dst, 16},
	{"tail", dissect.OffIPv6Dst + 16, 4},
}

// DiffFields lists the hashed key fields in which a and b differ after direction
// normalisation, the view the hash sees (so a frame and its reply differ in
// nothing). An IPv4 "dst" difference shows in bytes 48-51, which lie in "src" of
// the union's IPv6 layout; it is reported as "src/dst".
func DiffFields(a, b *dissect.FlowKeys) []string {
	na, nb := *a, *b
	hash.Consistentify(&na)
	hash.Consistentify(&nb)
	var out []string
	if na.AddrType() != nb.AddrType() {
		out = append(out, "addr_type")
	}
	for _, f := range hashedFields {
		if string(na[f.off:f.off+f.len]) == string(nb[f.off:f.off+f.len]) {
			continue
		}
		name := f.name
		if f.name == "src" && na.AddrType() != dissect.AddrIPv6 {
			name = "src/dst"
		}
		out = append(out, name)
	}
	return out
}

// String describes a divergence for a terminal: both frames, what the kernel said,
// what xdphash said and the fields that separate the two frames.
func (d Divergence) String() string {
	var b strings.Builder
	if d.KernelSame {
		fmt.Fprintf(&b, "kernel: same flow (hash %08x); xdphash: different flows (%08x, %08x)\n",
			d.A.KernelHash, d.A.Hash, d.B.Hash)
	} else {
		fmt.Fprintf(&b, "kernel: different flows (%08x, %08x); xdphash: same flow (%08x)\n",
			d.A.KernelHash, d.B.KernelHash, d.A.Hash)
	}
	if len(d.Fields) == 0 {
		b.WriteString("  fields that differ in xdphash's keys: none\n")
	} else {
		fmt.Fprintf(&b, "  fields that differ in xdphash's keys: %s\n", strings.Join(d.Fields, ", "))
	}
	for _, s := range []Sample{d.A, d.B} {
		tag := ""
		if !s.Tag.IsZero() {
			tag = ", metadata VLAN tag " + s.Tag.String()
		}
		fmt.Fprintf(&b, "  %s (%d bytes%s, ok=%v): %s\n    frame %x\n    keys  %x\n",
			s.Name, len(s.Frame), tag, s.OK, s.Keys.String(), s.Frame, s.Keys[:])
	}
	return b.String()
}
