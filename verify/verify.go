package verify

import (
	"bytes"
	"fmt"
	"math"
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

// Partition compares the partition of samples by kernel hash with the
// partition by xdphash's hash (Partitioner over a slice, keeping every
// counted divergence).
func Partition(samples []Sample) []Divergence {
	p := NewPartitioner(len(samples))
	for i := range samples {
		p.Add(samples[i])
	}
	return p.Result().Divergences
}

// MaxFlows bounds the flows a Partitioner holds: what it takes in memory is
// bounded by it (a few hundred bytes a flow), not by the number of samples.
const MaxFlows = 1 << 20

// Partitioner compares the partition of a stream of samples by kernel hash
// with the partition by xdphash's hash, holding one sample (without its
// frame) per flow, the flow's first.
//
// Both hashes are 32 bits: among many flows, two different flows share a
// hash by chance (about n²/2³³ pairs among n flows). A pair that one side
// merges and the other separates is then a divergence only when collisions
// cannot explain it:
//   - xdphash merges two frames whose keys are equal (normalised), and the
//     kernel separates them: always a divergence;
//   - xdphash merges two frames whose keys differ (its hash collides, or the
//     hash is wrong), or the kernel merges two frames xdphash separates (the
//     kernel's hash collides, or xdphash's keys are wrong): counted, per
//     side, only when that many are unlikely (below 1%) from collisions
//     among the flows seen, else reported as explained by collisions.
type Partitioner struct {
	keep     int
	maxFlows int
	byKernel map[uint32]int32 // kernel hash -> its flow's first sample in reps
	byOurs   map[uint32]int32 // xdphash hash -> its flow's first sample in reps
	reps     []Sample

	same      []Divergence // equal keys that the kernel separates
	oursMerge []Divergence // different keys that xdphash's hash merges
	kernMerge []Divergence // flows the kernel merges that xdphash separates
	counts    [3]int       // of same, oursMerge, kernMerge
	expected  [2]float64   // collisions expected on xdphash's side, the kernel's
	samples   int
	unchecked int
}

// NewPartitioner returns a Partitioner that keeps the first keep divergences
// of each kind (with both samples) and counts the others.
func NewPartitioner(keep int) *Partitioner {
	return &Partitioner{keep: keep, maxFlows: MaxFlows, byKernel: map[uint32]int32{}, byOurs: map[uint32]int32{}}
}

// Add takes in one sample; it keeps s.Frame only in a divergence it keeps.
func (p *Partitioner) Add(s Sample) {
	p.samples++
	k, kSeen := p.byKernel[s.KernelHash]
	o, oSeen := p.byOurs[s.Hash]
	switch {
	case !kSeen && !oSeen:
		if len(p.reps) >= p.maxFlows {
			p.unchecked++
			return
		}
		p.expected[0] += float64(len(p.byOurs)) / (1 << 32)
		p.expected[1] += float64(len(p.byKernel)) / (1 << 32)
		p.newFlow(s, true, true)
	case kSeen && !oSeen:
		// A new flow to xdphash that the kernel puts in an earlier one.
		p.expected[1] += float64(len(p.byKernel)) / (1 << 32)
		p.record(2, p.reps[k], s)
		p.newFlow(s, false, true)
	case oSeen && p.reps[o].KernelHash != s.KernelHash:
		// xdphash's flow, another to the kernel.
		rep := p.reps[o]
		if sameKeys(&rep.Keys, &s.Keys) {
			p.record(0, rep, s)
		} else {
			p.record(1, rep, s)
		}
		if !kSeen {
			p.expected[0] += float64(len(p.byOurs)) / (1 << 32)
			p.newFlow(s, true, false)
		}
	}
}

// newFlow holds s, without its frame, as the first of a flow.
func (p *Partitioner) newFlow(s Sample, kernel, ours bool) {
	if len(p.reps) >= p.maxFlows {
		p.unchecked++
		return
	}
	s.Frame = nil
	i := int32(len(p.reps))
	p.reps = append(p.reps, s)
	if kernel {
		p.byKernel[s.KernelHash] = i
	}
	if ours {
		p.byOurs[s.Hash] = i
	}
}

func (p *Partitioner) record(kind int, a, b Sample) {
	p.counts[kind]++
	list := [...]*[]Divergence{&p.same, &p.oursMerge, &p.kernMerge}[kind]
	if len(*list) < p.keep {
		b.Frame = bytes.Clone(b.Frame)
		*list = append(*list, newDivergence(a, b))
	}
}

// sameKeys reports whether a and b are one flow to the kernel's hash: equal
// hashed regions after direction normalisation.
func sameKeys(a, b *dissect.FlowKeys) bool {
	na, nb := *a, *b
	hash.Consistentify(&na)
	hash.Consistentify(&nb)
	return bytes.Equal(hash.Region(&na), hash.Region(&nb))
}

// PartitionResult is what a Partitioner found.
type PartitionResult struct {
	Samples   int // samples taken in
	Flows     int // flows held
	Unchecked int // samples of new flows past MaxFlows, not compared

	// Divergences are the counted ones that were kept, Count all counted.
	Divergences []Divergence
	Count       int

	// Collision is what the hashes' collisions may explain, per side:
	// xdphash's hash merging different keys, the kernel merging flows
	// xdphash separates.
	Collision [2]CollisionCheck
}

// CollisionCheck compares the pairs that one side's hash merges and the
// other side separates with the number its 32-bit collisions make likely.
type CollisionCheck struct {
	Pairs     int     // pairs seen
	Expected  float64 // pairs expected from collisions among the flows seen
	Explained bool    // Pairs is not unlikely (p >= 1%) from collisions: not counted
}

// Result returns what the samples so far show.
func (p *Partitioner) Result() PartitionResult {
	r := PartitionResult{Samples: p.samples, Flows: len(p.reps), Unchecked: p.unchecked}
	r.Divergences = append(r.Divergences, p.same...)
	r.Count = p.counts[0]
	for side, list := range [][]Divergence{p.oursMerge, p.kernMerge} {
		c := CollisionCheck{Pairs: p.counts[side+1], Expected: p.expected[side]}
		c.Explained = c.Pairs > 0 && poissonAtLeast(c.Pairs, c.Expected) >= 0.01
		if !c.Explained {
			r.Count += c.Pairs
			r.Divergences = append(r.Divergences, list...)
		}
		r.Collision[side] = c
	}
	return r
}

// poissonAtLeast is P(X >= m) for X Poisson with mean mean.
func poissonAtLeast(m int, mean float64) float64 {
	if m <= 0 {
		return 1
	}
	if mean <= 0 {
		return 0
	}
	if float64(m) > mean+40*math.Sqrt(mean)+40 {
		return 0
	}
	// 1 - P(X < m), summing the terms in log space.
	var below float64
	for k := range m {
		below += math.Exp(float64(k)*math.Log(mean) - mean - lgamma(float64(k)+1))
	}
	return max(0, 1-below)
}

func lgamma(x float64) float64 { v, _ := math.Lgamma(x); return v }

// PairCounter compares pairs (base, mutation) one at a time, keeping the
// first divergences and counting all.
type PairCounter struct {
	Keep        int
	Divergences []Divergence // the first Keep
	Count       int
}

// Add compares one pair; it keeps the frames only in a divergence it keeps.
func (c *PairCounter) Add(a, b Sample) {
	if (a.KernelHash == b.KernelHash) == (a.Hash == b.Hash) {
		return
	}
	c.Count++
	if len(c.Divergences) < c.Keep {
		a.Frame, b.Frame = bytes.Clone(a.Frame), bytes.Clone(b.Frame)
		c.Divergences = append(c.Divergences, newDivergence(a, b))
	}
}

// Pairs compares each pair (base, mutation) on its own: the kernel's same-flow
// verdict against xdphash's. It is immune to the unrelated hash collisions a large
// Partition set can meet.
func Pairs(pairs [][2]Sample) []Divergence {
	c := PairCounter{Keep: len(pairs)}
	for _, p := range pairs {
		c.Add(p[0], p[1])
	}
	return c.Divergences
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
		if s.Frame == nil {
			// The first frame of a flow is held without its bytes.
			fmt.Fprintf(&b, "  %s (ok=%v%s): %s\n    frame not kept (the first of its flow)\n    keys  %x\n",
				s.Name, s.OK, tag, s.Keys.String(), s.Keys[:])
			continue
		}
		fmt.Fprintf(&b, "  %s (%d bytes%s, ok=%v): %s\n    frame %x\n    keys  %x\n",
			s.Name, len(s.Frame), tag, s.OK, s.Keys.String(), s.Frame, s.Keys[:])
	}
	return b.String()
}
