package dissect_test

import (
	"math"
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// BenchmarkAutoGate times what auto mode chooses between, per shape: a
// Dissector under auto mode with the shape's gate open, and with it closed,
// on the shape's sample frame (hit: the fast path accepts it) and on its near
// miss (miss: the fast path declines it; no such frame for MPLS). The window
// is never reached, so no gate flips while a benchmark runs. S = closed − open
// on the hit and C = open − closed on the miss are dissect.DefaultCosts;
// docs/fast-paths.md gives the command that measures them.
func BenchmarkAutoGate(b *testing.B) {
	for s := range dissect.NumShapes {
		if _, tunnel := s.Tunnel(); tunnel {
			continue // auto mode leaves the tunnel gates alone
		}
		frames := map[string][]byte{"hit": dissect.SampleFrame(s)}
		if miss, ok := dissect.NearMissFrame(s); ok {
			frames["miss"] = miss
		}
		for _, kind := range []string{"hit", "miss"} {
			f, ok := frames[kind]
			if !ok {
				continue
			}
			for _, open := range []bool{true, false} {
				gates, state := dissect.NoGates, "closed"
				if open {
					gates, state = gates.With(s), "open"
				}
				b.Run(s.String()+"/"+kind+"/"+state, func(b *testing.B) {
					d := dissect.NewDissector(dissect.DefaultFlags, gates)
					d.EnableAuto(dissect.AutoConfig{Window: math.MaxInt})
					var k dissect.FlowKeys
					b.ReportAllocs()
					for b.Loop() {
						d.DissectFrame(&k, f)
					}
					if d.Gates() != gates {
						b.Fatalf("auto mode changed the gates to %v", d.Gates())
					}
				})
			}
		}
	}
}
