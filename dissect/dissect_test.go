package dissect

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// frame concatenates header byte slices into one buffer, padded with zeros to size
// when size is larger (the BPF selftest packets are all 82 bytes).
func frame(size int, parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	for len(b) < size {
		b = append(b, 0)
	}
	return b
}

// Headers of the kernel's BPF flow dissector selftest packets (kernel-fidelity §9): zero MACs
// and addresses, IPv4 byte 0 = 05 (version nibble 0), TCP ports 80 -> 8080 written
// as the raw host integers, so the wire bytes are 50 00 and 90 1f.
var (
	selftestEth = func(etype uint16) []byte {
		b := make([]byte, 14)
		binary.BigEndian.PutUint16(b[12:], etype)
		return b
	}
	selftestIPv4 = func(proto byte, fragOff uint16) []byte {
		b := make([]byte, 20)
		b[0] = 0x05 // IHL 5, version nibble 0
		binary.BigEndian.PutUint16(b[2:], 123)
		binary.BigEndian.PutUint16(b[6:], fragOff)
		b[9] = proto
		return b
	}
	selftestIPv6 = func(next byte, label uint32) []byte {
		b := make([]byte, 40)
		binary.BigEndian.PutUint32(b[0:], label)
		binary.BigEndian.PutUint16(b[4:], 123)
		b[6] = next
		return b
	}
	selftestTCP = func(sport, dport uint16) []byte {
		b := make([]byte, 20)
		binary.LittleEndian.PutUint16(b[0:], sport) // host integers into network fields
		binary.LittleEndian.PutUint16(b[2:], dport)
		b[12] = 5 << 4
		return b
	}
	vlanTag = func(tci, etype uint16) []byte {
		return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, tci), etype)
	}
)

// keysWant builds an expected FlowKeys from the fields a test cares about.
type keysWant struct {
	thoff    uint16
	addrType AddrType
	flags    ControlFlags
	nProto   uint16
	ipProto  uint8
	label    uint32
	vlan     []byte // 8 bytes at offset 16
	keyID    []byte // 4 bytes at offset 32
	ports    []byte // 4 bytes at offset 36
	addrs    []byte // from offset 44
}

func (w keysWant) keys() FlowKeys {
	var k FlowKeys
	binary.LittleEndian.PutUint16(k[OffTHoff:], w.thoff)
	binary.LittleEndian.PutUint16(k[OffAddrType:], uint16(w.addrType))
	binary.LittleEndian.PutUint32(k[OffFlags:], uint32(w.flags))
	binary.BigEndian.PutUint16(k[OffNProto:], w.nProto)
	k[OffIPProto] = w.ipProto
	binary.LittleEndian.PutUint32(k[OffFlowLabel:], w.label)
	copy(k[OffVLANTCI:], w.vlan)
	copy(k[OffKeyID:], w.keyID)
	copy(k[OffPorts:], w.ports)
	copy(k[OffAddrs:], w.addrs)
	return k
}

var tcp80to8080 = []byte{0x50, 0x00, 0x90, 0x1f}

// TestSelftestPackets runs the packets of the kernel's BPF flow dissector selftest
// through the C dissector's semantics (kernel-fidelity §9, last column).
func TestSelftestPackets(t *testing.T) {
	const (
		P = FlagParse1stFrag
		L = FlagStopAtFlowLabel
		E = FlagStopAtEncap
	)
	ipipPkt := frame(82, selftestEth(0x0800), selftestIPv4(4, 0), selftestIPv4(6, 0), selftestTCP(80, 8080))
	tests := []struct {
		name  string
		pkt   []byte
		flags Flags
		ok    bool
		want  keysWant
	}{
		{"ipv4", frame(82, selftestEth(0x0800), selftestIPv4(6, 0), selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 34, addrType: AddrIPv4, nProto: 0x0800, ipProto: 6, ports: tcp80to8080}},
		{"ipv6", frame(82, selftestEth(0x86dd), selftestIPv6(6, 0), selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 54, addrType: AddrIPv6, nProto: 0x86dd, ipProto: 6, ports: tcp80to8080}},
		{"802.1q-ipv4", frame(82, selftestEth(0x8100), vlanTag(0, 0x0800), selftestIPv4(6, 0), selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 38, addrType: AddrIPv4, nProto: 0x0800, ipProto: 6, ports: tcp80to8080,
				vlan: []byte{0, 0, 0x81, 0x00, 0x08, 0x00}}},
		{"802.1ad-ipv6", frame(82, selftestEth(0x88a8), vlanTag(0, 0x8100), vlanTag(0, 0x86dd), selftestIPv6(6, 0), selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 62, addrType: AddrIPv6, nProto: 0x86dd, ipProto: 6, ports: tcp80to8080,
				vlan: []byte{0, 0, 0x88, 0xa8, 0x81, 0x00}}},
		{"ipv4-frag", frame(82, selftestEth(0x0800), selftestIPv4(6, 0x2000), selftestTCP(80, 8080)), P, true,
			keysWant{thoff: 34, addrType: AddrIPv4, flags: FlagIsFragment | FlagFirstFrag, nProto: 0x0800, ipProto: 6}},
		{"ipv4-no-frag", frame(82, selftestEth(0x0800), selftestIPv4(6, 0x2000), selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 34, addrType: AddrIPv4, flags: FlagIsFragment | FlagFirstFrag, nProto: 0x0800, ipProto: 6}},
		{"ipv6-frag", frame(82, selftestEth(0x86dd), selftestIPv6(44, 0), []byte{6, 0, 0, 0, 0, 0, 0, 0}, selftestTCP(80, 8080)), P, true,
			keysWant{thoff: 62, addrType: AddrIPv6, flags: FlagIsFragment | FlagFirstFrag, nProto: 0x86dd, ipProto: 6}},
		{"ipv6-no-frag", frame(82, selftestEth(0x86dd), selftestIPv6(44, 0), []byte{6, 0, 0, 0, 0, 0, 0, 0}, selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 62, addrType: AddrIPv6, flags: FlagIsFragment | FlagFirstFrag, nProto: 0x86dd, ipProto: 6}},
		{"ipv6-flow-label", frame(82, selftestEth(0x86dd), selftestIPv6(6, 0xbeeef), selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 54, addrType: AddrIPv6, nProto: 0x86dd, ipProto: 6, label: 0xbeeef, ports: tcp80to8080}},
		{"ipv6-no-flow-label", frame(82, selftestEth(0x86dd), selftestIPv6(6, 0xbeeef), selftestTCP(80, 8080)), L, true,
			keysWant{thoff: 54, addrType: AddrIPv6, nProto: 0x86dd, ipProto: 6, label: 0xbeeef}},
		{"ipv6-empty-flow-label", frame(82, selftestEth(0x86dd), selftestIPv6(6, 0), selftestTCP(80, 8080)), L, true,
			keysWant{thoff: 54, addrType: AddrIPv6, nProto: 0x86dd, ipProto: 6, ports: tcp80to8080}},
		{"ipip-encap", ipipPkt, 0, true,
			keysWant{thoff: 54, addrType: AddrIPv4, flags: FlagEncapsulation, nProto: 0x0800, ipProto: 6, ports: tcp80to8080}},
		{"ipip-no-encap", ipipPkt, E, true,
			keysWant{thoff: 34, addrType: AddrIPv4, flags: FlagEncapsulation, nProto: 0x0800, ipProto: 4}},
		{"ip-gre", frame(82, selftestEth(0x0800), selftestIPv4(47, 0), []byte{0, 0, 0x08, 0x00}, selftestIPv4(6, 0), selftestTCP(80, 8080)), 0, true,
			keysWant{thoff: 58, addrType: AddrIPv4, flags: FlagEncapsulation, nProto: 0x0800, ipProto: 6, ports: tcp80to8080}},
		// The inner IPv4 header is read as GRE: flags 05 00, protocol 00 67 (its tot_len).
		{"ip-gre-no-encap", frame(82, selftestEth(0x0800), selftestIPv4(47, 0), func() []byte {
			b := selftestIPv4(6, 0)
			binary.BigEndian.PutUint16(b[2:], 103)
			return b
		}(), selftestTCP(80, 8080)), E, true,
			keysWant{thoff: 38, addrType: AddrIPv4, flags: FlagEncapsulation, nProto: 0x0067, ipProto: 47}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got FlowKeys
			ok := DissectFrame(&got, tc.pkt, tc.flags)
			want := tc.want.keys()
			if ok != tc.ok || got != want {
				t.Errorf("ok=%v, want %v; keys (-want +got):\n-%s\n+%s", ok, tc.ok, hex.EncodeToString(want[:]), hex.EncodeToString(got[:]))
			}
		})
	}
}

// The IPv4/TCP packet of kernel-fidelity §6.4 (192.168.1.10:12345 -> 10.0.0.1:80) given at
// nhoff 0, as on receive, truncated at every length.
func TestIPv4TCPTruncation(t *testing.T) {
	pkt := []byte{
		0x45, 0x00, 0x00, 0x28, 0x00, 0x00, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00, // IPv4, proto 6
		0xc0, 0xa8, 0x01, 0x0a, // 192.168.1.10
		0x0a, 0x00, 0x00, 0x01, // 10.0.0.1
		0x30, 0x39, 0x00, 0x50, // TCP 12345 -> 80
		0, 0, 0, 0, 0, 0, 0, 0, 0x50, 0x02, 0, 0, 0, 0, 0, 0,
	}
	addrs := pkt[12:20]
	for n := 0; n <= len(pkt); n++ {
		var want keysWant
		wantOK := true
		switch {
		case n < 20:
			wantOK = false
			want = keysWant{thoff: 0, nProto: 0x0800}
		case n < 24:
			want = keysWant{thoff: 20, addrType: AddrIPv4, nProto: 0x0800, ipProto: 6, addrs: addrs}
		default:
			want = keysWant{thoff: 20, addrType: AddrIPv4, nProto: 0x0800, ipProto: 6, addrs: addrs, ports: pkt[20:24]}
		}
		var got FlowKeys
		ok := Dissect(&got, pkt[:n], EtherTypeIPv4, 0, DefaultFlags)
		if w := want.keys(); ok != wantOK || got != w {
			t.Errorf("len %d: ok=%v want %v; keys (-want +got):\n-%x\n+%x", n, ok, wantOK, w[:], got[:])
		}
	}
}

// TestReDispatchBound checks that the 16th re-dispatch request ends the dissection
// as a success with the state of that moment (kernel-fidelity §5.2).
func TestReDispatchBound(t *testing.T) {
	ipv4udp := append(selftestIPv4(17, 0), 0x04, 0x00, 0x00, 0x35, 0, 8, 0, 0)
	for tags := 13; tags <= 18; tags++ {
		parts := [][]byte{selftestEth(0x8100)}
		for i := 1; i <= tags; i++ {
			next := uint16(0x8100)
			if i == tags {
				next = 0x0800
			}
			parts = append(parts, vlanTag(uint16(i), next))
		}
		parts = append(parts, ipv4udp)
		pkt := frame(0, parts...)
		var k FlowKeys
		ok := DissectFrame(&k, pkt, DefaultFlags)
		if !ok {
			t.Errorf("%d tags: result false, want true", tags)
		}
		// Tags up to 15 re-dispatch into IPv4 (16 dispatches at most: 15 tags and IPv4).
		reached := tags <= 15
		if got := k.AddrType() == AddrIPv4; got != reached {
			t.Errorf("%d tags: IPv4 reached = %v, want %v (keys %x)", tags, got, reached, k[:])
		}
		if !reached {
			// Stopped after tag 16: proto is the type inside it, nhoff just past it.
			wantProto := uint16(0x8100)
			if tags == 16 {
				wantProto = 0x0800
			}
			if k.NProto() != wantProto || int(k.THoff()) != 14+16*4 {
				t.Errorf("%d tags: n_proto %#x thoff %d, want %#x %d", tags, k.NProto(), k.THoff(), wantProto, 14+16*4)
			}
		}
		if k.VLANID() != 1 || k.VLANTPID() != 0x8100 {
			t.Errorf("%d tags: VLAN key id %d tpid %#x, want the first tag", tags, k.VLANID(), k.VLANTPID())
		}
	}
}

func TestVLANKeyDropsDEI(t *testing.T) {
	// id 0xabc, DEI 1, priority 5: TCI 0xbabc on the wire, stored without DEI as
	// 0xaabc, little-endian bc aa.
	pkt := frame(0, selftestEth(0x8100), vlanTag(5<<13|vlanDEIBit|0xabc, 0x0800), selftestIPv4(6, 0), selftestTCP(1, 2))
	var k FlowKeys
	DissectFrame(&k, pkt, DefaultFlags)
	if got, want := k[OffVLANTCI:OffVLANTCI+2], []byte{0xbc, 0xaa}; !bytes.Equal(got, want) {
		t.Errorf("VLAN TCI bytes %x, want %x", got, want)
	}
	if k.VLANID() != 0xabc || k.VLANPriority() != 5 {
		t.Errorf("VLAN id %#x prio %d", k.VLANID(), k.VLANPriority())
	}
}

func TestEthProtocol(t *testing.T) {
	tests := []struct {
		name  string
		frame []byte
		want  uint16
	}{
		{"short", make([]byte, 13), 0},
		{"ethertype", frame(0, selftestEth(0x86dd)), 0x86dd},
		{"lowest ethertype", frame(0, selftestEth(0x0600)), 0x0600},
		{"802.3 raw IPX", frame(0, selftestEth(0x05dc), []byte{0xff, 0xff}), EtherType8023},
		{"802.3 LLC", frame(0, selftestEth(0x05dc), []byte{0xaa, 0xaa, 0x03}), EtherType8022},
		{"802.3 no payload", frame(0, selftestEth(0x0010)), EtherType8022},
	}
	for _, tc := range tests {
		if got := EthProtocol(tc.frame); got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

func TestDissectAllocations(t *testing.T) {
	pkt := frame(0, selftestEth(0x0800), selftestIPv4(6, 0), selftestTCP(80, 8080))
	var k FlowKeys
	if n := testing.AllocsPerRun(1000, func() { DissectFrame(&k, pkt, DefaultFlags) }); n != 0 {
		t.Errorf("DissectFrame allocates %v times per frame, want 0", n)
	}
}
