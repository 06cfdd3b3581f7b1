package queues

import (
	"math"
	"testing"

	"github.com/xdphash/xdphash/hash"
)

// TestFlowStats feeds FlowStats by hand: three buckets, one of them shared
// by two flows (a third one's packet was dropped) and one by six, and checks
// every measure of the report.
func TestFlowStats(t *testing.T) {
	s := NewFlowStats(16, 4)
	type pkt struct {
		flow   int // fairRec's flow: its identity and hash
		bucket uint32
		size   uint32
		served bool
	}
	var pkts []pkt
	for range 3 {
		pkts = append(pkts, pkt{flow: 1, bucket: 1, size: 1000, served: true}) // 3000 bytes
	}
	pkts = append(pkts, pkt{flow: 2, bucket: 2, size: 500, served: true})  // shares bucket 2
	pkts = append(pkts, pkt{flow: 3, bucket: 2, size: 500, served: true})  // with flow 2: 1000 bytes
	pkts = append(pkts, pkt{flow: 4, bucket: 2, size: 500, served: false}) // dropped: not counted
	for f := 10; f < 16; f++ {
		pkts = append(pkts, pkt{flow: f, bucket: 7, size: 250, served: true}) // six flows: 1500 bytes
	}
	for i, p := range pkts {
		r := fairRec(p.flow, p.size)
		if p.served {
			s.Served(&r, p.bucket, int64(i)*1000)
		}
	}
	rep := s.Report()
	// Served bytes per bucket: 3000, 1000, 1500. Jain = 5500² / (3·(3000² +
	// 1000² + 1500²)) = 30250000 / 36750000.
	if rep.Slots != 16 || rep.Buckets != 3 || rep.Served != 3 || rep.Collisions != 2 || rep.Active != 9 {
		t.Errorf("slots %d buckets %d served %d collisions %d active %d, want 16 3 3 2 9", rep.Slots, rep.Buckets, rep.Served, rep.Collisions, rep.Active)
	}
	if want := 30250000.0 / 36750000; math.Abs(rep.Jain-want) > 1e-12 {
		t.Errorf("Jain %v, want %v", rep.Jain, want)
	}
	wantShares := []float64{3000.0 / 5500, 1500.0 / 5500, 1000.0 / 5500}
	for i, w := range wantShares {
		if i >= len(rep.Shares) || math.Abs(rep.Shares[i]-w) > 1e-12 {
			t.Fatalf("shares %v, want %v", rep.Shares, wantShares)
		}
	}
	// Four counters for nine flows: flow 1 (3000 bytes) holds one exactly.
	top := rep.Top[0]
	if len(rep.Top) != 4 || top.Src != "198.18.0.1" || top.Dst != "198.19.0.1" || top.SPort != 10001 || top.DPort != 80 ||
		top.Proto != 6 || top.Bytes != 3000 || top.Packets != 3 || top.ErrorBytes != 0 {
		t.Errorf("top flows %+v, want flow 1 first with 3000 bytes exactly", rep.Top)
	}
	// Sojourns 0, 1000, ..., 11000 ns but for packet 5 (not served).
	soj := s.SojournNs()
	if soj["max"] != 11000 || soj["p50"] < 5000 || soj["p50"] > 7000 {
		t.Errorf("sojourn percentiles %v", soj)
	}
	if NewFlowStats(4, 4).SojournNs() != nil {
		t.Errorf("sojourn percentiles of nothing served are not nil")
	}
}

// TestFlowStatsHeavyHitters checks the sketch's guarantees through
// FlowStats's prefilter and held-back runs: three flows of over a quarter of
// the bytes each among 3,000 mice, in runs of one to eight packets as a fair
// scheduler serves them, each hold a counter, and a counter's bytes bound its
// flow's from above, less its error bytes from below.
func TestFlowStatsHeavyHitters(t *testing.T) {
	s := NewFlowStats(256, 16)
	truth := map[uint16]uint64{} // by source port
	x := uint32(1)
	for range 200_000 {
		x = x*1664525 + 1013904223
		f := 100 + int(x>>8)%3000
		if x>>28 < 5 { // 5 in 16 packets: the three elephants, 1000 bytes each
			f = int(x>>20) % 3
		}
		size := uint32(100)
		if f < 3 {
			size = 1000
		}
		r := fairRec(f, size)
		r.Hash = fmix32(uint32(f))
		for range 1 + int(x>>4)%8 {
			s.Served(&r, hash.ReciprocalScale(r.Hash, 256), 0)
			truth[r.SPort] += uint64(size)
		}
	}
	found := 0
	for _, top := range s.Report().Top {
		want, ok := truth[top.SPort]
		if !ok {
			t.Fatalf("top flow %+v was never served", top)
		}
		if top.Bytes < want || top.Bytes-top.ErrorBytes > want {
			t.Errorf("flow %d: %d bytes counted with %d error bytes, served %d", top.SPort, top.Bytes, top.ErrorBytes, want)
		}
		if top.SPort < 10003 {
			found++
		}
	}
	if found != 3 {
		t.Errorf("%d of the 3 heavy flows hold a counter", found)
	}
}

// TestBucketBoundSaturates checks that a bucket part that cannot count any
// more bounds nothing: the bound falls back to the bucket's bytes.
func TestBucketBoundSaturates(t *testing.T) {
	var b bucketStats
	h := uint32(0x12345678)
	b.parts[part(h)] = math.MaxUint32 - 10
	b.bytes = 1 << 40
	if got := b.bound(h); got != math.MaxUint32-10 {
		t.Errorf("bound %d, want the part's %d", got, uint64(math.MaxUint32-10))
	}
	s := NewFlowStats(1, 1)
	s.buckets[0] = b
	r := fairRec(1, 100)
	r.Hash = h
	s.Served(&r, 0, 0)
	if got, want := s.buckets[0].bound(h), uint64(1<<40+100); got != want {
		t.Errorf("bound of a saturated part %d, want the bucket's %d", got, want)
	}
}

// BenchmarkFlowStatsServed is the fairness accounting alone, per served
// packet, on the stream of BenchmarkFQCodelWorker (1,000 flows, one packet
// per run): the part of a fair consumer's cost that is the report's.
func BenchmarkFlowStatsServed(b *testing.B) {
	recs := benchRecords(64 * 64)
	s := NewFlowStats(DefaultFlows, DefaultTopFlows)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := &recs[i%len(recs)]
		s.Served(r, r.Hash>>22, 1000)
	}
}
