package dissect_test

import (
	"fmt"
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// FuzzParseGates: a gate list either fails with an error or names only
// shapes, and reads back from its String as itself; and a Dissector with
// those gates gives every shape's sample frame and near miss the slow
// path's keys, with descent off, under each tunnel alone and under all of
// them (descentPolicies, as FuzzFastSlow runs): the gates never change a
// key byte under any descent setting. A tunnel list read from the second
// input is held to the same round trip, and is one more setting.
func FuzzParseGates(f *testing.F) {
	for _, s := range []string{"all", "none", "eth_ip", "vlan,qinq", "eth_ip,eth_ip", "gre, mpls", "vxlan,gtpu", "gtpu", "bogus", ""} {
		for _, ts := range []string{"none", "all", "gtpu", "vxlan,geneve", "bogus"} {
			f.Add(s, ts)
		}
	}
	frames := gateFuzzFrames()
	f.Fuzz(func(t *testing.T, s, tunnels string) {
		g, err := dissect.ParseGates(s)
		if err != nil {
			return
		}
		if g&^dissect.AllGates != 0 {
			t.Fatalf("ParseGates(%q) = %b: bits past the shapes", s, g)
		}
		back, err := dissect.ParseGates(g.String())
		if err != nil || back != g {
			t.Fatalf("ParseGates(%q) = %v, whose String %q reads back as %v, %v", s, g, g.String(), back, err)
		}
		policies := append([]dissect.Descent{{}}, descentPolicies...)
		if ts, err := dissect.ParseTunnels(tunnels); err == nil {
			if ts&^dissect.AllTunnels != 0 {
				t.Fatalf("ParseTunnels(%q) = %b: bits past the tunnels", tunnels, ts)
			}
			if back, err := dissect.ParseTunnels(ts.String()); err != nil || back != ts {
				t.Fatalf("ParseTunnels(%q) = %v, whose String %q reads back as %v, %v", tunnels, ts, ts.String(), back, err)
			}
			policies = append(policies, corpusDescent(ts))
		}
		for _, p := range policies {
			d := dissect.NewDissector(dissect.DefaultFlags, g)
			d.SetDescent(p)
			for _, fr := range frames {
				var want, got dissect.FlowKeys
				wantOK := dissect.DissectFrameDescend(&want, fr.data, dissect.DefaultFlags, p)
				ok, path := d.DissectFrame(&got, fr.data)
				if ok != wantOK || got != want {
					t.Fatalf("gates %v, descend %v, %s: path %v keys %x, slow path %x", g, p, fr.name, path, got[:], want[:])
				}
			}
		}
	})
}

type namedFrame struct {
	name string
	data []byte
}

// gateFuzzFrames are every shape's sample frame and near miss.
func gateFuzzFrames() []namedFrame {
	var fs []namedFrame
	for s := range dissect.NumShapes {
		fs = append(fs, namedFrame{s.String() + " sample", dissect.SampleFrame(s)})
		if m, ok := dissect.NearMissFrame(s); ok {
			fs = append(fs, namedFrame{fmt.Sprintf("%v near miss", s), m})
		}
	}
	return fs
}
