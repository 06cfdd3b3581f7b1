package dissect_test

import (
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// FuzzParseGates: a gate list either fails with an error or names only
// shapes, and reads back from its String as itself.
func FuzzParseGates(f *testing.F) {
	for _, s := range []string{"all", "none", "eth_ip", "vlan,qinq", "eth_ip,eth_ip", "gre, mpls", "bogus", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
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
	})
}
