package bench

import (
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// TestKernelShapes holds the instruction table's frames to what their names
// say: each reaches its ports (MPLS stops at its label) and its shape's fast
// path takes it.
func TestKernelShapes(t *testing.T) {
	for _, c := range KernelShapes() {
		var k dissect.FlowKeys
		ok, p := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates).DissectFrame(&k, c.Frame)
		if p != dissect.FastPath(c.Shape) || !ok {
			t.Errorf("%s: path %v ok %v, want fast:%v", c.Name, p, ok, c.Shape)
		}
		if c.Shape == dissect.ShapeMPLS {
			if k.NProto() != dissect.EtherTypeMPLSUC {
				t.Errorf("%s: n_proto %#x", c.Name, k.NProto())
			}
			continue
		}
		if k.SrcPort() != 1025 || k.DstPort() != 80 {
			t.Errorf("%s: ports %d -> %d, want 1025 -> 80", c.Name, k.SrcPort(), k.DstPort())
		}
	}
}
