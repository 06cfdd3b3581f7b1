package reorder

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type timedEvent struct {
	id     uint64
	tag    Tag
	at     int64
	served bool
}

// TestTimedMoveReordersK: a flow's packets 1 and 2 wait on an old worker
// (finishing at 10 and 20) while the new worker serves 3, 4, 5 at 5, 15, 25:
// 3 and 4 count, whatever order the finishes are reported in; with packet 2
// dropped at 30, all three do.
func TestTimedMoveReordersK(t *testing.T) {
	for _, tc := range []struct {
		name  string
		drop2 bool
		want  uint64
	}{{"served", false, 2}, {"dropped late", true, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			at2 := int64(20)
			if tc.drop2 {
				at2 = 30
			}
			events := []timedEvent{{7, 1, 10, true}, {7, 2, at2, !tc.drop2}, {7, 3, 5, true}, {7, 4, 15, true}, {7, 5, 25, true}}
			for _, order := range [][]int{{0, 1, 2, 3, 4}, {2, 3, 4, 0, 1}, {4, 2, 0, 3, 1}} {
				c, err := NewTimed(4, 4)
				if err != nil {
					t.Fatal(err)
				}
				for range events {
					c.Arrive(7)
				}
				for _, i := range order {
					e := events[i]
					c.Finish(e.id, e.tag, e.at, e.served)
				}
				if st := c.Stats(); st.Reordered != tc.want || !st.Exact() || c.fused != 0 || c.pused != 0 {
					t.Errorf("order %v: %+v, %d flows and %d finishes left; want %d reordered, exact, nothing left", order, st, c.fused, c.pused, tc.want)
				}
			}
		})
	}
}

// TestTimedMatchesBruteForce: random flows over random workers, finishes
// reported in random order, against the definition computed over all pairs.
func TestTimedMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		type pkt struct {
			flow   uint64
			tag    Tag
			at     int64
			served bool
		}
		var pkts []pkt
		c, err := NewTimed(64, 4096)
		if err != nil {
			t.Fatal(err)
		}
		// Each flow's packets on one worker finish in arrival order.
		last := map[[2]uint64]int64{}
		for range 300 {
			f, w := uint64(rng.IntN(5)), uint64(rng.IntN(3))
			tag, ok := c.Arrive(f)
			if !ok {
				t.Fatal("flow table full")
			}
			at := last[[2]uint64{f, w}] + int64(rng.IntN(20))
			last[[2]uint64{f, w}] = at
			pkts = append(pkts, pkt{f, tag, at, rng.IntN(8) != 0})
		}
		var want uint64
		for i, p := range pkts {
			if !p.served {
				continue
			}
			for _, q := range pkts[:i] {
				if q.flow == p.flow && q.at > p.at {
					want++
					break
				}
			}
		}
		for _, i := range rng.Perm(len(pkts)) {
			p := pkts[i]
			c.Finish(p.flow, p.tag, p.at, p.served)
		}
		if st := c.Stats(); st.Reordered != want || !st.Exact() || c.fused != 0 {
			t.Fatalf("round %d: %+v, %d flows left; want %d reordered", round, st, c.fused, want)
		}
	}
}

func TestTimedZeroAllocs(t *testing.T) {
	c, err := NewTimed(1024, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() {
		a, _ := c.Arrive(3)
		b, _ := c.Arrive(3)
		c.Finish(3, b, 2, true)
		c.Finish(3, a, 1, true)
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestTimedCountInFlight(t *testing.T) {
	c, err := NewTimed(16, 16)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{1, 5, 5, 2, 9} {
		c.Arrive(id)
	}
	c.Finish(2, 1, 10, true) // flow 2 has nothing in flight any more
	counts := make([]int, 4)
	c.CountInFlight(3, counts)
	if want := []int{0, 3, 0, 0}; !slices.Equal(counts, want) {
		t.Errorf("counts %v, want %v (flows 1, 5, 9 in bucket 1)", counts, want)
	}
}
