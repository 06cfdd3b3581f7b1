package dissect

import (
	"encoding/binary"
	"testing"
)

// Benchmark frames, one per shape the fast paths will target. Addresses from
// 198.18.0.0/15 and 2001:db8::/32, locally administered MACs.
var benchShapes = func() []struct {
	name  string
	frame []byte
} {
	eth := func(etype uint16) []byte {
		b := []byte{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0, 0}
		binary.BigEndian.PutUint16(b[12:], etype)
		return b
	}
	ipv4 := func(proto byte) []byte {
		return []byte{0x45, 0, 0, 40, 0, 1, 0x40, 0, 64, proto, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2}
	}
	ipv6 := func(next byte) []byte {
		b := make([]byte, 40)
		b[0] = 0x60
		b[6], b[7] = next, 64
		copy(b[8:], []byte{0x20, 0x01, 0x0d, 0xb8, 15: 1})
		copy(b[24:], []byte{0x20, 0x01, 0x0d, 0xb8, 15: 2})
		return b
	}
	tcp := []byte{0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0}
	cat := func(parts ...[]byte) []byte { return frame(0, parts...) }
	return []struct {
		name  string
		frame []byte
	}{
		{"eth_ipv4_tcp", cat(eth(0x0800), ipv4(6), tcp)},
		{"eth_ipv6_tcp", cat(eth(0x86dd), ipv6(6), tcp)},
		{"vlan_ipv4_tcp", cat(eth(0x8100), vlanTag(100, 0x0800), ipv4(6), tcp)},
		{"qinq_ipv4_tcp", cat(eth(0x88a8), vlanTag(10, 0x8100), vlanTag(100, 0x0800), ipv4(6), tcp)},
		{"pppoe_ipv4_tcp", cat(eth(0x8864), []byte{0x11, 0, 0x12, 0x34, 0, 42, 0x00, 0x21}, ipv4(6), tcp)},
		{"mpls_ipv4_tcp", cat(eth(0x8847), []byte{0x00, 0x06, 0x41, 0x40}, ipv4(6), tcp)},
		{"ipip_ipv4_tcp", cat(eth(0x0800), ipv4(4), ipv4(6), tcp)},
		{"6in6_ipv6_tcp", cat(eth(0x86dd), ipv6(41), ipv6(6), tcp)},
		{"gre_key_ipv4_tcp", cat(eth(0x0800), ipv4(47), []byte{0x20, 0, 0x08, 0, 0, 0, 0, 7}, ipv4(6), tcp)},
	}
}()

// BenchmarkSlowPath measures the generic dissector per shape, in ns per frame.
func BenchmarkSlowPath(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			var k FlowKeys
			b.ReportAllocs()
			b.SetBytes(int64(len(s.frame)))
			for b.Loop() {
				DissectFrame(&k, s.frame, DefaultFlags)
			}
		})
	}
}

func TestBenchShapesDissect(t *testing.T) {
	// The benchmark frames must reach their transport header, or the figures measure
	// something else. MPLS is the exception: the default dissector stops at the label.
	for _, s := range benchShapes {
		var k FlowKeys
		if s.name == "mpls_ipv4_tcp" {
			if !DissectFrame(&k, s.frame, DefaultFlags) || k.NProto() != EtherTypeMPLSUC || k.THoff() != 18 {
				t.Errorf("%s: keys %x", s.name, k[:])
			}
			continue
		}
		if !DissectFrame(&k, s.frame, DefaultFlags) || k.IPProto() != 6 || k.SrcPort() != 1025 || k.DstPort() != 80 {
			t.Errorf("%s: keys %x", s.name, k[:])
		}
	}
}

// BenchmarkFastPath measures each shape's fast path alone on its sample frame.
func BenchmarkFastPath(b *testing.B) {
	for s := range NumShapes {
		f := SampleFrame(s)
		b.Run(s.String(), func(b *testing.B) {
			var k FlowKeys
			b.ReportAllocs()
			for b.Loop() {
				runFast(s, &k, f)
			}
		})
	}
}

// BenchmarkDeclined measures a fast path declining a frame of another shape.
func BenchmarkDeclined(b *testing.B) {
	for s := range NumShapes {
		f := SampleFrame((s + 1) % NumShapes)
		b.Run(s.String(), func(b *testing.B) {
			var k FlowKeys
			for b.Loop() {
				runFast(s, &k, f)
			}
		})
	}
}

// BenchmarkDissector measures a Dissector with every gate open on each shape's
// sample frame: what a receive loop pays per frame.
func BenchmarkDissector(b *testing.B) {
	for s := range NumShapes {
		f := SampleFrame(s)
		b.Run(s.String(), func(b *testing.B) {
			d := NewDissector(DefaultFlags, AllGates)
			var k FlowKeys
			b.ReportAllocs()
			for b.Loop() {
				d.DissectFrame(&k, f)
			}
		})
	}
}
