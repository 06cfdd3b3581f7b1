package bench

import (
	"github.com/xdphash/xdphash/dissect"
)

// Case is one benchmark frame: a shape's representative, or a frame the fast
// paths all decline.
type Case struct {
	Name  string
	Shape dissect.Shape
	Frame []byte
}

// Cases returns one frame per fast-path shape but the tunnel shapes (which
// take their frames only under a descent policy), plus an IPv6/TCP eth_ip
// frame.
func Cases() []Case {
	var cs []Case
	for s := range dissect.NumShapes {
		if _, tunnel := s.Tunnel(); tunnel {
			continue // its frames are its class's only under a descent policy
		}
		cs = append(cs, Case{Name: s.String(), Shape: s, Frame: dissect.SampleFrame(s)})
		if s == dissect.ShapeEthIP {
			cs = append(cs, Case{Name: "eth_ip6", Shape: s, Frame: ethIPv6TCP()})
		}
	}
	return cs
}

// ethIPv6TCP is Ethernet + IPv6 2001:db8::1 -> 2001:db8::2 (label 0) + TCP 1025 -> 80.
func ethIPv6TCP() []byte {
	f := []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x86, 0xdd} // Ethernet, IPv6
	f = append(f, 0x60, 0, 0, 0, 0, 20, 6, 64)                        // IPv6: no label, payload 20, TCP
	f = append(f, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	f = append(f, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)
	f = append(f, 0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0) // TCP
	return f
}

// Mix is the all-shapes mix: every case's frame in turn.
func Mix() [][]byte {
	var m [][]byte
	for _, c := range Cases() {
		m = append(m, c.Frame)
	}
	return m
}
