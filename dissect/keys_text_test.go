package dissect

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// keysWith returns keys with the fields set: addresses (as they lie in
// the union), ports, n_proto, ip_proto and thoff.
func keysWith(at AddrType, src, dst netip.Addr, sport, dport, nproto uint16, proto uint8, thoff uint16) FlowKeys {
	var k FlowKeys
	binary.LittleEndian.PutUint16(k[OffAddrType:], uint16(at))
	binary.LittleEndian.PutUint16(k[OffTHoff:], thoff)
	binary.BigEndian.PutUint16(k[OffNProto:], nproto)
	k[OffIPProto] = proto
	binary.BigEndian.PutUint16(k[OffPorts:], sport)
	binary.BigEndian.PutUint16(k[OffPorts+2:], dport)
	switch at {
	case AddrIPv4:
		s, d := src.As4(), dst.As4()
		copy(k[OffIPv4Src:], s[:])
		copy(k[OffIPv4Dst:], d[:])
	case AddrIPv6:
		s, d := src.As16(), dst.As16()
		copy(k[OffIPv6Src:], s[:])
		copy(k[OffIPv6Dst:], d[:])
	}
	return k
}

// TestFlowKeysText pins the one spelling of keys as text (xdphash
// dissect's text lines and verify's divergences).
func TestFlowKeysText(t *testing.T) {
	v4 := keysWith(AddrIPv4, netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2"), 1025, 80, EtherTypeIPv4, 6, 34)
	v6 := keysWith(AddrIPv6, netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2"), 53, 33000, EtherTypeIPv6, 17, 54)
	binary.LittleEndian.PutUint32(v6[OffFlowLabel:], 0x12345)
	tagged := v4
	binary.LittleEndian.PutUint16(tagged[OffVLANTCI:], 5<<13|100)
	binary.BigEndian.PutUint16(tagged[OffVLANTPID:], EtherTypeVLAN)
	binary.BigEndian.PutUint16(tagged[OffVLANEthType:], EtherTypeIPv4)
	gre := v4
	binary.BigEndian.PutUint32(gre[OffKeyID:], 0xabc)
	binary.LittleEndian.PutUint32(gre[OffFlags:], 0x3)
	arp := keysWith(AddrNone, netip.Addr{}, netip.Addr{}, 0, 0, 0x0806, 0, 14)
	tipc := keysWith(AddrTIPC, netip.Addr{}, netip.Addr{}, 0, 0, 0x88ca, 0, 14)
	binary.BigEndian.PutUint32(tipc[OffTIPCKey:], 0x01020304)
	// IPv4 addresses with another n_proto: a frame whose outer header says MPLS.
	mpls := keysWith(AddrIPv4, netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2"), 0, 0, 0x8847, 1, 38)

	for _, tt := range []struct {
		name string
		keys FlowKeys
		want string
	}{
		{"ipv4 tcp", v4, "ipv4 198.18.0.1:1025 > 198.18.0.2:80 proto 6 thoff 34"},
		{"ipv6 udp, flow label", v6, "ipv6 [2001:db8::1]:53 > [2001:db8::2]:33000 proto 17 thoff 54 label 0x12345"},
		{"vlan", tagged, "ipv4 198.18.0.1:1025 > 198.18.0.2:80 proto 6 thoff 34 vlan 100 prio 5 tpid 0x8100 type 0x0800"},
		{"gre key, flags", gre, "ipv4 198.18.0.1:1025 > 198.18.0.2:80 proto 6 thoff 34 flags 0x3 keyid 0x00000abc"},
		{"no addresses", arp, "none n_proto 0x0806 proto 0 thoff 14"},
		{"tipc", tipc, "tipc key 0x01020304 n_proto 0x88ca proto 0 thoff 14"},
		{"n_proto not implied", mpls, "ipv4 198.18.0.1:0 > 198.18.0.2:0 n_proto 0x8847 proto 1 thoff 38"},
	} {
		if got := tt.keys.String(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if got := string(tt.keys.AppendTo([]byte("x "))); got != "x "+tt.want {
			t.Errorf("%s: AppendTo appends %q, want %q", tt.name, got, "x "+tt.want)
		}
	}
}

// TestFlowKeysTextDissected: the text of dissected keys names what the
// frame holds, and appending it to a buffer with room allocates nothing.
func TestFlowKeysTextDissected(t *testing.T) {
	var k FlowKeys
	DissectFrame(&k, SampleFrame(ShapeEthIP), DefaultFlags)
	want := k.AddrType().String() + " " + netip.AddrPortFrom(k.Src(), k.SrcPort()).String() + " > " +
		netip.AddrPortFrom(k.Dst(), k.DstPort()).String()
	if got := k.String(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("%q, want it to start %q", got, want)
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { buf = k.AppendTo(buf[:0]) }); n != 0 {
		t.Errorf("AppendTo allocates %v times", n)
	}
}
