package pktgen

import (
	"net"
	"slices"
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

var steeringDst = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}

// flowShares is each flow's share of a cycle's frames, largest first.
func flowShares(tb testing.TB, p Profile) []float64 {
	tb.Helper()
	s, err := NewSchedule(p, MACs{Dst: steeringDst})
	if err != nil {
		tb.Fatal(err)
	}
	count := map[uint32]int{}
	for _, k := range s.table.Order {
		count[s.frameFlow[k]]++
	}
	var out []float64
	for _, c := range count {
		out = append(out, float64(c)/float64(s.Len()))
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// TestElephantsProfile: 16 flows of about 3% each carry half the frames.
func TestElephantsProfile(t *testing.T) {
	p, err := Builtin("elephants")
	if err != nil {
		t.Fatal(err)
	}
	shares := flowShares(t, p)
	var elephants float64
	for i, s := range shares[:16] {
		if s < 0.029 || s > 0.034 {
			t.Errorf("elephant %d carries %.4f of the frames, want about 0.031", i, s)
		}
		elephants += s
	}
	if elephants < 0.499 || elephants > 0.501 || shares[16] > 0.001 {
		t.Errorf("elephants carry %.4f, the largest mouse %.5f; want 0.5 and under 0.001", elephants, shares[16])
	}
}

// TestCollideProfile: every MPLS frame has the same kernel flow hash under
// any key, and the MPLS frames are 30% of the cycle.
func TestCollideProfile(t *testing.T) {
	p, err := Builtin("collide")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := p.Frames(steeringDst)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []hash.Key{{}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}} {
		h := hash.NewKernel(key)
		buckets := map[uint32]int{} // bucket of a 128-entry table -> frames
		var mpls, mplsHash = 0, uint32(0)
		for _, f := range frames {
			var keys dissect.FlowKeys
			dissect.DissectFrame(&keys, f, dissect.DefaultFlags)
			v, _ := h.Hash(&keys)
			buckets[v%128]++
			if keys.NProto() != 0x8847 {
				continue
			}
			if mpls > 0 && v != mplsHash {
				t.Fatalf("key %v: MPLS frames hash to %#x and %#x", key, mplsHash, v)
			}
			mpls, mplsHash = mpls+1, v
		}
		if share := float64(mpls) / float64(len(frames)); share < 0.299 || share > 0.301 {
			t.Errorf("key %v: MPLS frames are %.4f of the cycle, want 0.3", key, share)
		}
		var heaviest int
		for _, n := range buckets {
			heaviest = max(heaviest, n)
		}
		if heaviest != buckets[mplsHash%128] {
			t.Errorf("key %v: the heaviest bucket is not the MPLS one", key)
		}
	}
}
