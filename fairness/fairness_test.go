package fairness

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestJainMaxMean(t *testing.T) {
	tests := []struct {
		name          string
		x             []float64
		jain, maxMean float64
	}{
		{name: "empty", x: nil, jain: 0, maxMean: 0},
		{name: "all zero", x: []float64{0, 0}, jain: 0, maxMean: 0},
		{name: "equal", x: []float64{5, 5, 5, 5}, jain: 1, maxMean: 1},
		{name: "one takes all", x: []float64{7, 0, 0, 0}, jain: 0.25, maxMean: 4},
		// (1+2+3)² / (3·(1+4+9)) = 36/42; max 3 over mean 2.
		{name: "1 2 3", x: []float64{1, 2, 3}, jain: 6.0 / 7, maxMean: 1.5},
		// (2+2+4+8)² / (4·(4+4+16+64)) = 256/352; max 8 over mean 4.
		{name: "2 2 4 8", x: []float64{2, 2, 4, 8}, jain: 256.0 / 352, maxMean: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Jain(tt.x); !near(got, tt.jain, 1e-12) {
				t.Errorf("Jain = %v, want %v", got, tt.jain)
			}
			if got := MaxMean(tt.x); !near(got, tt.maxMean, 1e-12) {
				t.Errorf("MaxMean = %v, want %v", got, tt.maxMean)
			}
		})
	}
	if got := Jain([]uint64{1, 2, 3}); !near(got, 6.0/7, 1e-12) {
		t.Errorf("Jain of uint64 = %v", got)
	}
	if got := Shares([]int{1, 3}); got[0] != 0.25 || got[1] != 0.75 {
		t.Errorf("Shares = %v", got)
	}
}

// TestExpectedByHand checks the balls-into-bins expectations against cases
// counted by hand.
func TestExpectedByHand(t *testing.T) {
	tests := []struct {
		name          string
		flows, bins   int
		maxMean, coll float64
	}{
		{name: "one bin", flows: 5, bins: 1, maxMean: 1, coll: 1},
		// Same bin with probability 1/2: max 2 or 1, mean 1.
		{name: "2 into 2", flows: 2, bins: 2, maxMean: 1.5, coll: 0.5},
		// 27 outcomes: 3 put all in one bin (max 3), 6 spread (max 1), 18 max 2;
		// E[max] = (9+6+36)/27 over mean 1. Collisions: 21 of 27 outcomes have one.
		{name: "3 into 3", flows: 3, bins: 3, maxMean: 51.0 / 27, coll: 21.0 / 27},
		// X ~ Bin(4, 1/2), max(X, 4-X): 4 w.p. 2/16, 3 w.p. 8/16, 2 w.p. 6/16;
		// E = 44/16 over mean 2.
		{name: "4 into 2", flows: 4, bins: 2, maxMean: 44.0 / 32, coll: 2 - 2*(1.0/16) - 2*(4.0/16)},
		// Max 2 w.p. 1/3, else 1: E = 4/3 over mean 2/3.
		{name: "2 into 3", flows: 2, bins: 3, maxMean: 2, coll: 1.0 / 3},
		{name: "no flows", flows: 0, bins: 4, maxMean: 0, coll: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExpectedMaxMean(tt.flows, tt.bins); !near(got, tt.maxMean, 1e-9) {
				t.Errorf("ExpectedMaxMean(%d, %d) = %v, want %v", tt.flows, tt.bins, got, tt.maxMean)
			}
			if tt.bins > 1 || tt.flows < 2 {
				if got := ExpectedCollisions(tt.flows, tt.bins); !near(got, tt.coll, 1e-9) {
					t.Errorf("ExpectedCollisions(%d, %d) = %v, want %v", tt.flows, tt.bins, got, tt.coll)
				}
			}
		})
	}
	// Jain of expected loads: F/(F+N-1).
	if got := ExpectedJain(3, 3); !near(got, 0.6, 1e-12) {
		t.Errorf("ExpectedJain(3, 3) = %v, want 0.6", got)
	}
}

// simulate is the test's own balls-into-bins: a different generator and
// seed from simulatedMaxMean's. It returns the mean of max/mean, the mean
// Jain's index and collisions, and the standard error of the first.
func simulate(flows, bins, trials int) (maxMean, jain, coll, stderr float64) {
	rng := rand.New(rand.NewChaCha8([32]byte{1, 2, 3}))
	load := make([]int, bins)
	var sum, sq float64
	for range trials {
		clear(load)
		for range flows {
			load[rng.IntN(bins)]++
		}
		m := MaxMean(load)
		sum += m
		sq += m * m
		jain += Jain(load)
		for _, l := range load {
			if l > 1 {
				coll++
			}
		}
	}
	n := float64(trials)
	mean := sum / n
	return mean, jain / n, coll / n, math.Sqrt((sq/n - mean*mean) / n)
}

// TestExpectedAgainstSimulation checks both ways ExpectedMaxMean computes
// (the exact sum, the seeded simulation) against an independent simulation,
// within four standard errors.
func TestExpectedAgainstSimulation(t *testing.T) {
	tests := []struct {
		flows, bins int
		exact       bool // which way ExpectedMaxMean takes
	}{
		{flows: 16, bins: 4, exact: true},
		{flows: 100, bins: 8, exact: true},
		{flows: 40, bins: 1024, exact: true},
		{flows: 1000, bins: 2, exact: true},
		{flows: 300, bins: 64, exact: false},
		{flows: 20000, bins: 16, exact: false},
		{flows: 10000, bins: 1024, exact: false},
	}
	for _, tt := range tests {
		if got := exactCost(tt.flows, tt.bins) <= exactBudget; got != tt.exact {
			t.Errorf("%d into %d: exact %v, want %v", tt.flows, tt.bins, got, tt.exact)
		}
		trials := max(400, 2_000_000/tt.flows)
		want, jain, coll, se := simulate(tt.flows, tt.bins, trials)
		got := ExpectedMaxMean(tt.flows, tt.bins)
		if math.Abs(got-want) > 4*se+1e-3*want {
			t.Errorf("ExpectedMaxMean(%d, %d) = %.4f, simulation %.4f ± %.4f", tt.flows, tt.bins, got, want, se)
		}
		if tt.exact && tt.flows+tt.bins <= 200 {
			// The exact sum and the simulation branch must agree too (on
			// small cases: the simulation's 2·10^7 throws are slow under -race).
			if sim := simulatedMaxMean(tt.flows, tt.bins); math.Abs(sim-got) > 0.01*got {
				t.Errorf("%d into %d: simulatedMaxMean %.4f, exact %.4f", tt.flows, tt.bins, sim, got)
			}
		}
		// Ratio of expectations vs expectation of the ratio: close when the
		// load per bin is not tiny.
		if ej := ExpectedJain(tt.flows, tt.bins); tt.flows >= 10*tt.bins && math.Abs(ej-jain) > 0.01 {
			t.Errorf("ExpectedJain(%d, %d) = %.4f, simulation %.4f", tt.flows, tt.bins, ej, jain)
		}
		if ec := ExpectedCollisions(tt.flows, tt.bins); math.Abs(ec-coll) > 0.02*ec+0.05 {
			t.Errorf("ExpectedCollisions(%d, %d) = %.3f, simulation %.3f", tt.flows, tt.bins, ec, coll)
		}
	}
}

func TestExpectedMaxMeanCached(t *testing.T) {
	a := ExpectedMaxMean(50000, 12)
	if allocs := testing.AllocsPerRun(10, func() { ExpectedMaxMean(50000, 12) }); allocs != 0 {
		t.Errorf("a cached expectation allocates %v times", allocs)
	}
	if b := ExpectedMaxMean(50000, 12); a != b {
		t.Errorf("second answer %v, first %v", b, a)
	}
}

func TestLogHistogram(t *testing.T) {
	var h LogHistogram
	if h.Quantile(0.5) != 0 || h.Max() != 0 {
		t.Errorf("empty histogram: p50 %d, max %d", h.Quantile(0.5), h.Max())
	}
	for v := int64(1); v <= 100; v++ {
		h.Add(v)
	}
	tests := []struct {
		q    float64
		want int64
	}{
		{q: 0, want: 1},      // the first value, exact below 8
		{q: 0.05, want: 5},   // rank 5: exact
		{q: 0.5, want: 51},   // rank 50 lies in [48, 51]: 48 = 0b110000, 8 sub-buckets of 32..63
		{q: 0.9, want: 95},   // rank 90 lies in [88, 95]
		{q: 0.99, want: 100}, // rank 99 lies in [96, 103], capped at the max
		{q: 1, want: 100},
	}
	for _, tt := range tests {
		if got := h.Quantile(tt.q); got != tt.want {
			t.Errorf("Quantile(%v) = %d, want %d", tt.q, got, tt.want)
		}
	}
	if h.Count() != 100 || h.Max() != 100 {
		t.Errorf("count %d max %d", h.Count(), h.Max())
	}
	// Every bucket's bounds: upper(i)+1 starts bucket i+1.
	for i := range histBuckets - 1 {
		if histBucket(histUpper(i)) != i || histBucket(histUpper(i)+1) != i+1 {
			t.Fatalf("bucket %d: upper %d maps to %d, next to %d", i, histUpper(i), histBucket(histUpper(i)), histBucket(histUpper(i)+1))
		}
	}
	if histBucket(math.MaxInt64) != histBuckets-1-(1<<histSubBits) || histBucket(math.MaxUint64) != histBuckets-1 {
		t.Errorf("top buckets %d %d of %d", histBucket(math.MaxInt64), histBucket(math.MaxUint64), histBuckets)
	}
	if allocs := testing.AllocsPerRun(100, func() { h.Add(12345) }); allocs != 0 {
		t.Errorf("Add allocates %v times", allocs)
	}
}

func TestDistinct(t *testing.T) {
	tests := []struct {
		n   int
		tol float64 // relative
	}{
		{n: 0},
		{n: 1},
		{n: 10},
		{n: 256},
		{n: 257, tol: 0.02}, // past the exact set: the HyperLogLog's linear counting
		{n: 300, tol: 0.02},
		{n: 5000, tol: 0.05},
		{n: 200000, tol: 0.05},
	}
	for _, tt := range tests {
		var d Distinct
		for i := range tt.n {
			h := uint32(i) * 0x01000193 // distinct hashes, spread
			d.Add(h)
			d.Add(h) // repeats do not count
		}
		got := float64(d.Estimate())
		if math.Abs(got-float64(tt.n)) > tt.tol*float64(tt.n) {
			t.Errorf("%d distinct: estimate %v", tt.n, got)
		}
	}
	// Hashes that differ only in their high bits (what reciprocal_scale looks
	// at) or only in their low bits still count apart.
	var hi, lo Distinct
	for i := range uint32(100) {
		hi.Add(i << 24)
		lo.Add(i)
	}
	if e1, e2 := hi.Estimate(), lo.Estimate(); e1 != 100 || e2 != 100 {
		t.Errorf("high-bit hashes: %d, low-bit hashes: %d, want 100", e1, e2)
	}
	if allocs := testing.AllocsPerRun(100, func() { lo.Add(7) }); allocs != 0 {
		t.Errorf("Add allocates %v times", allocs)
	}
}

func TestSpaceSavingByHand(t *testing.T) {
	s := NewSpaceSaving[string](2)
	s.Add("a", 1, 5, 1)
	s.Add("b", 2, 3, 1)
	// c takes over b's counter, the smallest: 3 + 1 bytes, 3 of them error.
	s.Add("c", 3, 1, 1)
	s.Add("a", 1, 5, 1)
	got := s.Top()
	want := []Counter[string]{
		{Key: "a", Hash: 1, Bytes: 10, Packets: 2},
		{Key: "c", Hash: 3, Bytes: 4, Packets: 2, ErrorBytes: 3, ErrorPackets: 1},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Top (-want +got)\n-%+v\n+%+v", want, got)
	}
}

// TestSpaceSavingGuarantees feeds a skewed stream with many colliding hashes
// (so the table's probing and deletion are exercised) and checks the
// algorithm's promises against exact counts.
//
// With filter, keys are first summed into 64 buckets and a key is added only
// while its bucket's total exceeds Min, as the consumers do: the promises
// must hold all the same.
func TestSpaceSavingGuarantees(t *testing.T) {
	for _, filter := range []bool{false, true} {
		t.Run(fmt.Sprint("filter=", filter), func(t *testing.T) { testSpaceSaving(t, filter) })
	}
}

func testSpaceSaving(t *testing.T, filter bool) {
	const k = 16
	s := NewSpaceSaving[int](k)
	exact := map[int]uint64{}
	var buckets [64]uint64
	rng := rand.New(rand.NewPCG(1, 2))
	var total uint64
	skipped := 0
	for range 200000 {
		key := int(rng.ExpFloat64() * 20) // a few keys dominate
		if rng.IntN(4) == 0 {
			key = 1000 + rng.IntN(5000) // and a long tail
		}
		w := uint64(64 + rng.IntN(1450))
		exact[key] += w
		total += w
		b := &buckets[key%len(buckets)]
		*b += w
		if filter && *b <= s.Min() {
			skipped++
			continue
		}
		s.Add(key, uint32(key%7), w, 1) // only 7 distinct hashes: long probe runs
	}
	if filter && skipped == 0 {
		t.Errorf("the filter skipped nothing")
	}
	top := s.Top()
	if len(top) != k {
		t.Fatalf("%d counters, want %d", len(top), k)
	}
	found := map[int]bool{}
	for i, c := range top {
		found[c.Key] = true
		if c.Bytes < exact[c.Key] || c.Bytes-c.ErrorBytes > exact[c.Key] {
			t.Errorf("key %d: counted %d (error %d), true %d", c.Key, c.Bytes, c.ErrorBytes, exact[c.Key])
		}
		if i > 0 && top[i-1].Bytes < c.Bytes {
			t.Errorf("Top not sorted at %d", i)
		}
	}
	for key, b := range exact {
		if b > total/k && !found[key] {
			t.Errorf("key %d with %d of %d bytes (> total/k) has no counter", key, b, total)
		}
	}
	// The table holds every counter once, and min is the smallest.
	inTable := 0
	for _, c := range s.table {
		if c != 0 {
			inTable++
		}
	}
	if inTable != k {
		t.Fatalf("%d counters in the table, want %d", inTable, k)
	}
	if s.Min() != slices.Min(s.bytes) {
		t.Fatalf("Min %d, smallest count %d", s.Min(), slices.Min(s.bytes))
	}
	if allocs := testing.AllocsPerRun(100, func() { s.Add(99999, 3, 100, 1) }); allocs != 0 {
		t.Errorf("Add allocates %v times", allocs)
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// BenchmarkSpaceSavingAdd measures Add in a sketch of 64 counters: keys that
// hold a counter (held: 4 heavy keys added over and over), and keys that
// take one over (takeover: 6,000 equal keys in turn, every Add evicting the
// smallest counter).
func BenchmarkSpaceSavingAdd(b *testing.B) {
	type key [36]byte // the size of a flow's identity
	keys := make([]key, 6000)
	hashes := make([]uint32, len(keys))
	x := uint32(7)
	for i := range keys {
		x = x*1664525 + 1013904223
		hashes[i] = x
		keys[i][0], keys[i][1] = byte(i), byte(i>>8)
	}
	for _, tt := range []struct {
		name string
		keys int
	}{{"held", 4}, {"takeover", len(keys)}} {
		b.Run(tt.name, func(b *testing.B) {
			s := NewSpaceSaving[key](64)
			for k := range 64 {
				s.Add(keys[k], hashes[k], 1000, 1)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := (i * 7919) % tt.keys
				s.Add(keys[k], hashes[k], 1000, 1)
			}
		})
	}
}

// TestExpectedMaxMeanLarge: past the simulated range the normal
// approximation agrees with the simulation where both apply, and a run's
// claim of a hundred million flows costs no more than a few thousand.
func TestExpectedMaxMeanLarge(t *testing.T) {
	for _, bins := range []int{2, 16, 1024} {
		sim, norm := simulatedMaxMean(maxSimulatedFlows, bins), normalMaxMean(maxSimulatedFlows, bins)
		if math.Abs(sim-norm) > 0.01*sim {
			t.Errorf("%d flows into %d bins: simulated %.4f, normal %.4f", maxSimulatedFlows, bins, sim, norm)
		}
	}
	if got := ExpectedMaxMean(100_000_000, 4); got < 1 || got > 1.001 {
		t.Errorf("1e8 flows into 4 bins: %v, want just above 1", got)
	}
}

// TestExactCostBounded: deciding whether the exact sum is affordable costs
// at most the budget's steps, whatever the flows (a run.json may claim
// 10^15 flows on each of 1024 workers), and the estimate is still given.
func TestExactCostBounded(t *testing.T) {
	for _, tt := range []struct{ flows, bins int }{
		{1e15, 1024}, {1 << 40, 1024}, {5e6, 1024}, {1e9, 2}, {300, 64},
	} {
		cost, steps := exactCostSteps(tt.flows, tt.bins, exactBudget)
		if steps > exactBudget+1 {
			t.Errorf("%d into %d: %d steps to count the cost, want at most %d", tt.flows, tt.bins, steps, int(exactBudget)+1)
		}
		if cost <= exactBudget {
			continue
		}
		if v := ExpectedMaxMean(tt.flows, tt.bins); !(v >= 1) || math.IsInf(v, 0) {
			t.Errorf("ExpectedMaxMean(%d, %d) = %v, want a finite max/mean of at least 1", tt.flows, tt.bins, v)
		}
	}
}
