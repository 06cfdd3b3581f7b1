package rebalance_test

import (
	"net"
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
				t.Logf("%s, %d buckets, key %x: max/mean %.3f -> %.3f in %d moves (%.1f%% of the load), bound %.3f",
					name, size, key[0], res.Before, res.After, res.Moves, 100*float64(res.Moved)/float64(len(frames)), res.Bound)
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
