package dissect

// sampleFrames holds one frame per shape that its fast path accepts: the frames
// auto mode calibrates with, and the benchmarks' and tests' representatives.
// Addresses from 198.18.0.0/15 and 2001:db8::/32, locally administered MACs, TCP
// 1025 -> 80.
var sampleFrames = func() [NumShapes][]byte {
	eth := func(etype uint16) []byte {
		return []byte{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, byte(etype >> 8), byte(etype)}
	}
	// ipv4 is a header whose total length covers payload bytes after it.
	ipv4 := func(proto byte, payload int) []byte {
		n := 20 + payload
		return []byte{0x45, 0, byte(n >> 8), byte(n), 0, 1, 0x40, 0, 64, proto, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2}
	}
	tcp := []byte{0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	return [NumShapes][]byte{
		ShapeEthIP: cat(eth(0x0800), ipv4(6, 20), tcp),
		ShapeVLAN:  cat(eth(0x8100), []byte{0x00, 0x64, 0x08, 0x00}, ipv4(6, 20), tcp),
		ShapeQinQ:  cat(eth(0x88a8), []byte{0x00, 0x0a, 0x81, 0x00}, []byte{0x00, 0x64, 0x08, 0x00}, ipv4(6, 20), tcp),
		ShapePPPoE: cat(eth(0x8864), []byte{0x11, 0, 0x12, 0x34, 0, 42, 0x00, 0x21}, ipv4(6, 20), tcp),
		ShapeMPLS:  cat(eth(0x8847), []byte{0x00, 0x06, 0x41, 0x40}, ipv4(6, 20), tcp),
		ShapeIPIP:  cat(eth(0x0800), ipv4(4, 40), ipv4(6, 20), tcp),
		ShapeGRE:   cat(eth(0x0800), ipv4(47, 48), []byte{0x20, 0, 0x08, 0, 0, 0, 0, 7}, ipv4(6, 20), tcp),
		// UDP 49152 -> 4789 (length 8+8+14+40), VXLAN VNI 42, an inner
		// Ethernet header.
		ShapeVXLAN: cat(eth(0x0800), ipv4(17, 70), []byte{0xc0, 0x00, 0x12, 0xb5, 0, 70, 0, 0},
			[]byte{0x08, 0, 0, 0, 0, 0, 42, 0}, eth(0x0800), ipv4(6, 20), tcp),
		// UDP 2152 -> 2152 (length 8+8+40), a G-PDU of 40 bytes, TEID 7.
		ShapeGTPU: cat(eth(0x0800), ipv4(17, 56), []byte{0x08, 0x68, 0x08, 0x68, 0, 56, 0, 0},
			[]byte{0x30, 0xff, 0, 40, 0, 0, 0, 7}, ipv4(6, 20), tcp),
	}
}()

// SampleFrame returns a copy of the sample frame of shape s, a frame its fast
// path accepts (a tunnel shape's: under a policy entering its tunnel).
func SampleFrame(s Shape) []byte {
	return append([]byte(nil), sampleFrames[s%NumShapes]...)
}

// NearMissFrame returns a frame of s's class that its fast path declines: the
// sample with its innermost IPv4 header given one option word (IHL 6). It is
// false for MPLS, whose fast path covers its whole class. A tunnel shape's
// is of its class, and declined, under a policy entering its tunnel.
func NearMissFrame(s Shape) ([]byte, bool) {
	if s == ShapeMPLS {
		return nil, false
	}
	f := SampleFrame(s)
	// Every IP sample ends with IPv4 (20 bytes) + TCP (20 bytes).
	ip := len(f) - 40
	f[ip] = 0x46
	return append(f[:ip+20:ip+20], append([]byte{1, 1, 1, 1}, f[ip+20:]...)...), true
}
