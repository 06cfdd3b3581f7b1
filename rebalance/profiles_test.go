package rebalance_test

import (
	"math"
	"net"
	"slices"
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/rebalance"
)

// TestProfiles rebalances one cycle of the built-in profiles made for it,
// counted in packets per bucket under the kernel hash with several keys,
// over 4 workers from the default round-robin table: the table must end
// within the threshold or at the bound, never worse than it started, and
// stay put when the same load comes again.
func TestProfiles(t *testing.T) {
	keys := []hash.Key{{}, {1}, {2}, {3}, {4}}
	for _, name := range []string{"elephants", "collide"} {
		p, err := pktgen.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		frames, err := p.Frames(net.HardwareAddr{0x02, 0, 0, 0, 0, 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{128, 512, 2048} {
			for _, key := range keys {
				const workers = 4
				h := hash.NewKernel(key)
				load := make([]uint64, size)
				for _, f := range frames {
					var k dissect.FlowKeys
					dissect.DissectFrame(&k, f, dissect.DefaultFlags)
					v, _ := h.Hash(&k)
					load[v%uint32(size)]++
				}
				reta, err := hash.NewRETA(size, workers, nil)
				if err != nil {
					t.Fatal(err)
				}
				cur := reta.AppendEntries(nil)
				r, err := rebalance.New(rebalance.Config{Size: size, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				next := make([]uint16, size)
				res, err := r.Rebalance(next, cur, load)
				if err != nil {
					t.Fatal(err)
				}
				mean := float64(len(frames)) / workers
				target := max(uint64(1.05*mean), uint64(math.Round(res.Bound*mean)))
				fewest := fewestMoves(cur, load, workers, target)
				t.Logf("%s, %d buckets, key %x: max/mean %.3f -> %.3f in %d moves (at least %d needed; %.1f%% of the load), bound %.3f",
					name, size, key[0], res.Before, res.After, res.Moves, fewest, 100*float64(res.Moved)/float64(len(frames)), res.Bound)
				if res.Moves < fewest {
					t.Errorf("%d moves, fewer than the %d any table needs", res.Moves, fewest)
				}
				if res.After > res.Before || !(res.Balanced || res.AtBound) {
					t.Errorf("%s, %d buckets, key %x: %+v: want balanced or at the bound", name, size, key[0], res)
				}
				// The same load again: a table within the threshold or at the
				// bound stays as it is.
				if again, err := r.Rebalance(cur, next, load); err != nil || again.Moves != 0 {
					t.Errorf("%s, %d buckets, key %x: the same load again moved %d buckets (error %v)", name, size, key[0], again.Moves, err)
				}
				if name == "collide" && res.Bound < 1.2 {
					t.Errorf("collide, %d buckets, key %x: bound %.3f, want the MPLS bucket's 1.2 at least", size, key[0], res.Bound)
				}
			}
		}
	}
}

// fewestMoves is a lower bound on the moves of any table that brings every
// worker under target: each worker above it must give up buckets carrying
// its excess at least (a bucket coming in only adds to it), and no fewer of
// them than its heaviest buckets that carry that much.
func fewestMoves(cur []uint16, load []uint64, workers int, target uint64) int {
	moves := 0
	for w := range workers {
		var mine []uint64
		var sum uint64
		for b, v := range cur {
			if int(v) == w {
				mine = append(mine, load[b])
				sum += load[b]
			}
		}
		slices.Sort(mine)
		for i := len(mine) - 1; sum > target && i >= 0; i-- {
			sum -= mine[i]
			moves++
		}
	}
	return moves
}
