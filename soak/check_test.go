package soak

import (
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/runstats"
)

func TestCheckMemory(t *testing.T) {
	const mib = 1 << 20
	flat := func(n int, heap uint64, g int) []MemPoint {
		ps := make([]MemPoint, n)
		for i := range ps {
			ps[i] = MemPoint{HeapInuse: heap, Sys: 2 * heap, Goroutines: g}
		}
		return ps
	}
	growing := flat(20, 10*mib, 10)
	for i := range growing {
		growing[i].HeapInuse += uint64(i) * mib
	}
	leaking := flat(20, 10*mib, 10)
	for i := range leaking {
		leaking[i].Goroutines += i
	}
	// Warm-up may grow as it likes: only what follows it counts.
	warm := flat(20, 10*mib, 10)
	warm[0].HeapInuse, warm[1].HeapInuse = mib, 50*mib
	for _, tt := range []struct {
		name   string
		points []MemPoint
		want   string
	}{
		{"flat", flat(20, 10*mib, 10), "PASS"},
		{"too short to judge", flat(3, 10*mib, 10), "SKIP"},
		{"heap grows", growing, "FAIL"},
		{"goroutines leak", leaking, "FAIL"},
		{"warm-up ignored", warm, "PASS"},
		{"within tolerance", append(flat(10, 10*mib, 10), flat(10, 11*mib, 10)...), "PASS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if c := checkMemory(tt.points); c.Verdict() != tt.want {
				t.Errorf("%s, want %s: %s", c.Verdict(), tt.want, c.Detail)
			}
		})
	}
}

func TestCheckAccounting(t *testing.T) {
	st := func(received, processed, ring, ringFull uint64) *runstats.RunStats {
		return &runstats.RunStats{
			Queues: []runstats.QueueReport{{Stats: runstats.QueueStats{RxRingFull: ringFull}}},
			Accounting: runstats.Accounting{Received: received, Processed: processed,
				Dropped: map[runstats.DropReason]uint64{runstats.DropRingFull: ring}, Balanced: received == processed+ring},
		}
	}
	for _, tt := range []struct {
		name string
		sent uint64
		l    LinkDeltas
		st   *runstats.RunStats
		want bool
	}{
		{"exact", 100, LinkDeltas{PeerTxPackets: 98, PeerTxDropped: 2, HostRxPackets: 98, HostRxDropped: 7}, st(93, 90, 3, 5), true},
		{"a frame unaccounted on the veth", 100, LinkDeltas{PeerTxPackets: 97, PeerTxDropped: 2, HostRxPackets: 97, HostRxDropped: 7}, st(92, 89, 3, 5), false},
		{"frames left in the AF_XDP ring", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100, HostRxDropped: 5}, st(90, 87, 3, 5), false},
		{"engine unbalanced", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100}, st(100, 99, 0, 0), false},
		{"nothing sent", 0, LinkDeltas{}, st(0, 0, 0, 0), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if c := checkAccounting(tt.sent, tt.l, tt.st); c.Pass != tt.want {
				t.Errorf("pass %v, want %v:\n%s", c.Pass, tt.want, c.Detail)
			}
		})
	}
}

// TestCheckSamples feeds the check samples made as a receive loop makes
// them, then corrupts a hash and a worker.
func TestCheckSamples(t *testing.T) {
	key := hash.RandomKey()
	steer, err := hash.NewSteering(hash.SteerConfig{Workers: 3, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	var samples []pipeline.Sample
	var keys dissect.FlowKeys
	for _, f := range corpus.Bases() {
		dissect.DissectFrame(&keys, f.Data, dissect.DefaultFlags)
		h, _ := steer.Hash(&keys)
		samples = append(samples, pipeline.Sample{Queue: 1, Worker: steer.Worker(h, 1), Hash: h, Frame: f.Data})
	}
	hc, sc, _ := checkSamples(samples, uint64(len(samples)), key, 3)
	if !hc.Pass || !sc.Pass {
		t.Fatalf("good samples: %s; %s", hc.Detail, sc.Detail)
	}
	samples[0].Hash++
	samples[1].Worker = (samples[1].Worker + 1) % 3
	hc, sc, sum := checkSamples(samples, uint64(len(samples)), key, 3)
	if hc.Pass || sc.Pass || sum.HashMismatch != 1 || sum.SteerMismatch < 1 {
		t.Errorf("corrupted samples passed: %+v; %s; %s", sum, hc.Detail, sc.Detail)
	}
	if hc, _, _ := checkSamples(nil, 0, key, 3); hc.Pass {
		t.Error("no samples: want a failed check")
	}
}

// TestResultCount: a skipped check is not a pass, and Passed says so.
func TestResultCount(t *testing.T) {
	r := &Result{Checks: []Check{{Pass: true}, {Skipped: true}, {Pass: false}}}
	if f, s := r.Count(); f != 1 || s != 1 || r.Passed() {
		t.Errorf("failed %d, skipped %d, passed %v; want 1, 1, false", f, s, r.Passed())
	}
	r.Checks = r.Checks[:2]
	if f, s := r.Count(); f != 0 || s != 1 || r.Passed() {
		t.Errorf("failed %d, skipped %d, passed %v; want 0, 1, false", f, s, r.Passed())
	}
	r.Checks = r.Checks[:1]
	if !r.Passed() {
		t.Error("one passed check: not passed")
	}
}

// TestChecksInterruptedBeforeTraffic: a soak stopped by a signal before it
// sent anything skips accounting, hash and steering (nothing was checked);
// one that ran its course without traffic fails them.
func TestChecksInterruptedBeforeTraffic(t *testing.T) {
	st := &runstats.RunStats{}
	st.Account()
	hc, sc, _ := checkSamples(nil, 0, hash.Key{}, 2)
	for _, tt := range []struct {
		interrupted bool
		want        string
	}{{true, "SKIP"}, {false, "FAIL"}} {
		checks := runChecks(0, LinkDeltas{}, st, hc, sc, nil, tt.interrupted)
		for _, c := range checks[:3] {
			if c.Verdict() != tt.want {
				t.Errorf("interrupted %v, no traffic: %q is %s, want %s (%s)", tt.interrupted, c.Name, c.Verdict(), tt.want, c.Detail)
			}
		}
	}
}
