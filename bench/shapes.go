package bench

import (
	"encoding/binary"

	"github.com/xdphash/xdphash/dissect"
)

// KernelShapes returns the frames of the instruction table of issue 17, on
// which the kernel's own C dissector was counted: one per common shape, named
// after its headers. Addresses from 198.18.0.0/15 and 2001:db8::/32, locally
// administered MACs, ports 1025 -> 80.
func KernelShapes() []Case {
	const (
		tcp = 6
		udp = 17
	)
	eth := func(etype uint16) []byte {
		b := []byte{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0, 0}
		binary.BigEndian.PutUint16(b[12:], etype)
		return b
	}
	// ipv4 is a header without options whose total length covers payload bytes.
	ipv4 := func(proto byte, payload int) []byte {
		n := 20 + payload
		return []byte{0x45, 0, byte(n >> 8), byte(n), 0, 1, 0x40, 0, 64, proto, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2}
	}
	// ipv6 is a header with flow label 0 whose payload length covers payload bytes.
	ipv6 := func(next byte, payload int) []byte {
		b := make([]byte, 40)
		b[0] = 0x60
		binary.BigEndian.PutUint16(b[4:], uint16(payload))
		b[6], b[7] = next, 64
		copy(b[8:], []byte{0x20, 0x01, 0x0d, 0xb8, 15: 1})
		copy(b[24:], []byte{0x20, 0x01, 0x0d, 0xb8, 15: 2})
		return b
	}
	tcpHdr := []byte{0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0}
	udpHdr := []byte{0x04, 0x01, 0x00, 0x50, 0, 8, 0, 0}
	tag := func(vid, etype uint16) []byte {
		return []byte{byte(vid >> 8), byte(vid), byte(etype >> 8), byte(etype)}
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	return []Case{
		{"eth+IPv4+TCP", dissect.ShapeEthIP, cat(eth(0x0800), ipv4(tcp, 20), tcpHdr)},
		{"eth+IPv6+TCP", dissect.ShapeEthIP, cat(eth(0x86dd), ipv6(tcp, 20), tcpHdr)},
		{"802.1Q+IPv4+UDP", dissect.ShapeVLAN, cat(eth(0x8100), tag(100, 0x0800), ipv4(udp, 8), udpHdr)},
		{"QinQ+IPv4+TCP", dissect.ShapeQinQ, cat(eth(0x88a8), tag(10, 0x8100), tag(100, 0x0800), ipv4(tcp, 20), tcpHdr)},
		// PPPoE session 0x1234, length 42, PPP protocol IPv4.
		{"PPPoE+IPv4+TCP", dissect.ShapePPPoE, cat(eth(0x8864), []byte{0x11, 0, 0x12, 0x34, 0, 42, 0x00, 0x21}, ipv4(tcp, 20), tcpHdr)},
		// One label 100, bottom of stack, TTL 64.
		{"MPLS+IPv4+UDP", dissect.ShapeMPLS, cat(eth(0x8847), []byte{0x00, 0x06, 0x41, 0x40}, ipv4(udp, 8), udpHdr)},
		{"IPv4+IPIP+TCP", dissect.ShapeIPIP, cat(eth(0x0800), ipv4(4, 40), ipv4(tcp, 20), tcpHdr)},
		// GRE with the key flag, protocol IPv4, key 7.
		{"IPv4+GRE(key)+IPv4+UDP", dissect.ShapeGRE, cat(eth(0x0800), ipv4(47, 36), []byte{0x20, 0, 0x08, 0, 0, 0, 0, 7}, ipv4(udp, 8), udpHdr)},
		{"IPv6+IPv6+TCP", dissect.ShapeIPIP, cat(eth(0x86dd), ipv6(41, 60), ipv6(tcp, 20), tcpHdr)},
	}
}
