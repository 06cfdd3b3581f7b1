package queues

import (
	"cmp"
	"math"
	"net/netip"
	"slices"

	"github.com/xdphash/xdphash/fairness"
	"github.com/xdphash/xdphash/runstats"
)

// maxShares caps FlowReport.Shares: the flow slots of the default consumers,
// enough for the share distribution's chart.
const maxShares = 1024

// FlowID is a flow's full identity, the key of the heavy-hitter sketch: the
// addresses, ports and protocol as the dissector read them.
type FlowID struct {
	Src, Dst     [16]byte
	SPort, DPort uint16
	Proto        uint8
	AddrType     uint8
}

// flowID is r's identity.
func flowID(r *Record) FlowID {
	return FlowID{Src: r.Src, Dst: r.Dst, SPort: r.SPort, DPort: r.DPort, Proto: r.IPProto, AddrType: r.AddrType}
}

// FlowStats is a consumer's fairness accounting of the packets it served, in
// memory bounded by its number of buckets whatever the number of flows: exact
// bytes per bucket (the consumer's flow slots, which are what its
// scheduler treats fairly), whether a bucket served more than one flow hash
// (a collision), a distinct counter of the flow hashes, a heavy-hitter sketch
// of bytes keyed by full flow identity, and the sojourn time histogram.
// Served is called once per packet on the consumer's path: it allocates
// nothing. Only served packets are counted, so that a consumer's enqueue
// path, which a full queue makes the busiest, pays nothing for the report.
type FlowStats struct {
	buckets  []bucketStats
	distinct fairness.Distinct
	top      *fairness.SpaceSaving[FlowID]
	run      flowRun // packets bound for the sketch, held back
	sojourn  fairness.LogHistogram
}

// bucketStats is one bucket: the bytes it served, the first flow hash it
// served and whether another one followed, and the bytes of each of its
// bucketParts. It is 32 bytes, two to a cache line: the consumers'
// per-packet cost is mostly the lines they touch.
type bucketStats struct {
	bytes  uint64
	first  uint32
	served bool // served a packet (of any length)
	shared bool
	// parts splits bytes by other bits of the flow hash (see part), as a
	// finer bound on a flow's bytes for the sketch's prefilter (see Served):
	// a row of a count-min sketch kept in the bucket's cache line. A part
	// saturates at its maximum, which then bounds nothing.
	parts [bucketParts]uint32
}

// bucketParts is the number of parts of a bucket.
const (
	bucketPartBits = 2
	bucketParts    = 1 << bucketPartBits
)

// part is the part of its bucket flow hash h counts in: the top bits of a
// multiplicative hash, which mixes in all of h's bits, those that chose the
// bucket (the high bits for fq_codel, the low bits for fq) and the others.
func part(h uint32) uint32 { return (h * 0x9e3779b1) >> (32 - bucketPartBits) }

// bound is the most bytes the flow of hash h can have served from b.
func (b *bucketStats) bound(h uint32) uint64 {
	if p := b.parts[part(h)]; p != math.MaxUint32 {
		return uint64(p)
	}
	return b.bytes
}

// NewFlowStats returns the accounting of a consumer with buckets flow slots
// and a heavy-hitter sketch of topFlows counters.
func NewFlowStats(buckets, topFlows int) *FlowStats {
	return &FlowStats{
		buckets: make([]bucketStats, buckets),
		top:     fairness.NewSpaceSaving[FlowID](topFlows),
	}
}

// Served counts a packet the consumer served from bucket after sojourn ns
// in it.
func (s *FlowStats) Served(r *Record, bucket uint32, sojourn int64) {
	b := &s.buckets[bucket]
	// Every hash goes to the distinct counter, and the collision test is a
	// plain or: on many flows, branching on whether the hash is its
	// bucket's first mispredicts often enough to cost more than the add.
	if !b.served {
		b.first, b.served = r.Hash, true
	}
	b.shared = b.shared || r.Hash != b.first
	s.distinct.Add(r.Hash)
	b.bytes += uint64(r.Len)
	p := &b.parts[part(r.Hash)]
	*p = uint32(min(uint64(*p)+uint64(r.Len), math.MaxUint32))
	s.sojourn.Add(sojourn)
	// A flow has served at most its part of its bucket's bytes: while that
	// is no more than the sketch's smallest counter, the flow cannot be a
	// heavy hitter and the sketch need not see it (see SpaceSaving.Min).
	// With many equal flows this skips most of the sketch's work, its
	// costliest part.
	if b.bound(r.Hash) <= s.top.Min() {
		return
	}
	// The heavy flows that do reach it are served a quantum at a time, so
	// their packets come in runs: the sketch sees each run once. (Holding a
	// run back only moves its packets later in the sketch's stream, which
	// keeps its guarantees whatever the order.)
	run := &s.run
	if run.packets > 0 && r.Hash == run.hash && r.Src == run.id.Src && r.Dst == run.id.Dst &&
		r.SPort == run.id.SPort && r.DPort == run.id.DPort && r.IPProto == run.id.Proto && r.AddrType == run.id.AddrType {
		run.packets++
		run.bytes += uint64(r.Len)
		return
	}
	s.flushRun()
	*run = flowRun{id: flowID(r), hash: r.Hash, packets: 1, bytes: uint64(r.Len)}
}

// flowRun is packets of one flow served one after another, not yet in the
// sketch.
type flowRun struct {
	id             FlowID
	hash           uint32
	packets, bytes uint64
}

// flushRun adds the pending run to the sketch.
func (s *FlowStats) flushRun() {
	if run := &s.run; run.packets > 0 {
		s.top.Add(run.id, run.hash, run.bytes, run.packets)
		run.packets = 0
	}
}

// Report summarises the flows: Jain's index and the shares are over the
// buckets that served traffic, the fairness the consumer's scheduler gives;
// flows colliding in a bucket share its slot, as in the kernel.
func (s *FlowStats) Report() runstats.FlowReport {
	s.flushRun()
	r := runstats.FlowReport{Slots: len(s.buckets), Active: int(s.distinct.Estimate())}
	var bytes []uint64
	var total uint64
	for _, b := range s.buckets {
		if b.shared {
			r.Collisions++
		}
		if b.served {
			bytes = append(bytes, b.bytes)
			total += b.bytes
		}
	}
	r.Buckets, r.Served = len(bytes), len(bytes)
	r.Jain = fairness.Jain(bytes)
	slices.SortFunc(bytes, func(a, b uint64) int { return cmp.Compare(b, a) })
	for _, b := range bytes[:min(len(bytes), maxShares)] {
		r.Shares = append(r.Shares, float64(b)/float64(total))
	}
	for _, c := range s.top.Top() {
		id := Record{Src: c.Key.Src, Dst: c.Key.Dst, AddrType: c.Key.AddrType}
		r.Top = append(r.Top, runstats.TopFlow{
			Hash: c.Hash,
			Src:  addrString(id.SrcAddr()), Dst: addrString(id.DstAddr()),
			SPort: c.Key.SPort, DPort: c.Key.DPort, Proto: c.Key.Proto,
			Packets: c.Packets, Bytes: c.Bytes,
			ErrorBytes: c.ErrorBytes, ErrorPackets: c.ErrorPackets,
		})
	}
	return r
}

// SojournNs is the sojourn time percentiles of ConsumerReport: p50, p90,
// p95, p99 and max; nil when nothing was served.
func (s *FlowStats) SojournNs() map[string]int64 {
	if s.sojourn.Count() == 0 {
		return nil
	}
	return map[string]int64{
		"p50": s.sojourn.Quantile(0.5),
		"p90": s.sojourn.Quantile(0.9),
		"p95": s.sojourn.Quantile(0.95),
		"p99": s.sojourn.Quantile(0.99),
		"max": s.sojourn.Max(),
	}
}

// addrString prints a TopFlow address: "" for non-IP flows.
func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}
