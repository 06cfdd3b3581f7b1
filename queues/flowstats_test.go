package queues

import (
	"math"
	"testing"
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
