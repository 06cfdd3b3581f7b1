package hash

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// frameSpec builds an Ethernet frame for FromFrame's tests.
type frameSpec struct {
	vlans    int    // VLAN tags before the IP header
	l3       string // "ipv4", "ipv6" or "arp"
	proto    byte   // the IP protocol (IPv4) or the last next header (IPv6)
	frag     bool   // IPv4 MF set; IPv6 a fragment header
	hopByHop bool   // IPv6: a hop-by-hop options header first
	ah       bool   // IPv6: an authentication header first
	options  int    // IPv4: 4-byte words of options (IHL 5 + options)
	src, dst netip.AddrPort
}

func (s frameSpec) frame() []byte {
	be := binary.BigEndian
	b := make([]byte, 12, 128)
	for range s.vlans {
		b = be.AppendUint16(b, etherTypeVLAN)
		b = be.AppendUint16(b, 7)
	}
	switch s.l3 {
	case "ipv4":
		b = be.AppendUint16(b, etherTypeIPv4)
		ip := make([]byte, 20+4*s.options)
		ip[0] = 0x45 + byte(s.options)
		ip[9] = s.proto
		if s.frag {
			be.PutUint16(ip[6:], 0x2000)
		}
		copy(ip[12:], s.src.Addr().AsSlice())
		copy(ip[16:], s.dst.Addr().AsSlice())
		b = append(b, ip...)
	case "ipv6":
		b = be.AppendUint16(b, etherTypeIPv6)
		ip := make([]byte, 40)
		ip[0] = 0x60
		next := s.proto
		var ext []byte
		if s.frag {
			ext = append(ext, next, 0, 0, 1, 0, 0, 0, 1) // offset 0, more fragments
			next = protoFragment
		}
		if s.ah {
			ext = append([]byte{next, 4, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 1}, make([]byte, 12)...) // 24 bytes: (4+2)*4
			next = protoAH
		}
		if s.hopByHop {
			ext = append([]byte{next, 0, 1, 4, 0, 0, 0, 0}, ext...) // a PadN option
			next = protoHopOpts
		}
		ip[6] = next
		copy(ip[8:], s.src.Addr().AsSlice())
		copy(ip[24:], s.dst.Addr().AsSlice())
		b = append(append(b, ip...), ext...)
	default:
		b = be.AppendUint16(b, 0x0806)
		return append(b, make([]byte, 28)...)
	}
	b = be.AppendUint16(b, s.src.Port())
	b = be.AppendUint16(b, s.dst.Port())
	return append(b, make([]byte, 16)...)
}

// TestToeplitzFromFrame checks the NIC's view against Microsoft's
// verification suite: the outermost addresses, with the ports where the
// NIC hashes them.
func TestToeplitzFromFrame(t *testing.T) {
	tz := defaultToeplitz(t)
	noPorts := NICFields{}
	for _, tt := range msSuite {
		l3 := "ipv4"
		if tt.src.Addr().Is6() {
			l3 = "ipv6"
		}
		for _, c := range []struct {
			name   string
			spec   frameSpec
			fields NICFields
			want   uint32
		}{
			{"tcp", frameSpec{l3: l3, proto: protoTCP}, DefaultNICFields, tt.withTCP},
			{"udp", frameSpec{l3: l3, proto: protoUDP}, DefaultNICFields, tt.withTCP},
			{"tcp behind two VLAN tags", frameSpec{l3: l3, proto: protoTCP, vlans: 2}, DefaultNICFields, tt.withTCP},
			{"tcp, fields without ports", frameSpec{l3: l3, proto: protoTCP}, noPorts, tt.ipOnly},
			{"fragment", frameSpec{l3: l3, proto: protoUDP, frag: true}, DefaultNICFields, tt.ipOnly},
			{"gre: the outer addresses", frameSpec{l3: l3, proto: 47}, DefaultNICFields, tt.ipOnly},
			{"ip in ip: the outer addresses", frameSpec{l3: l3, proto: 41}, DefaultNICFields, tt.ipOnly},
		} {
			c.spec.src, c.spec.dst = tt.src, tt.dst
			got, ok := tz.FromFrame(c.spec.frame(), c.fields, SymmetricNone)
			if !ok || got != c.want {
				t.Errorf("%v -> %v, %s: %#08x, %v; want %#08x, true", tt.src, tt.dst, c.name, got, ok, c.want)
			}
		}
		more := []frameSpec{{l3: "ipv4", proto: protoTCP, options: 2}}
		if l3 == "ipv6" {
			more = []frameSpec{{l3: l3, proto: protoTCP, hopByHop: true}, {l3: l3, proto: protoUDP, ah: true}, {l3: l3, proto: protoTCP, hopByHop: true, ah: true}}
		}
		for _, spec := range more {
			spec.src, spec.dst = tt.src, tt.dst
			if got, ok := tz.FromFrame(spec.frame(), DefaultNICFields, SymmetricNone); !ok || got != tt.withTCP {
				t.Errorf("%v -> %v, %+v: %#08x, %v; want the ports behind the options, %#08x", tt.src, tt.dst, spec, got, ok, tt.withTCP)
			}
		}
	}
	for _, c := range []struct {
		name  string
		frame []byte
	}{
		{"arp", frameSpec{l3: "arp"}.frame()},
		{"runt", make([]byte, 10)},
		{"truncated ipv4", frameSpec{l3: "ipv4", proto: protoTCP, src: msSuite[0].src, dst: msSuite[0].dst}.frame()[:30]},
	} {
		if h, ok := tz.FromFrame(c.frame, DefaultNICFields, SymmetricNone); ok {
			t.Errorf("%s: %#08x, true; want no hash", c.name, h)
		}
	}
}

// TestToeplitzFromFrameDeclared: the ports as the device declared it hashed
// them, whatever the protocol; none to take behind a fragment.
func TestToeplitzFromFrameDeclared(t *testing.T) {
	tz := defaultToeplitz(t)
	for _, tt := range msSuite {
		l3 := "ipv4"
		if tt.src.Addr().Is6() {
			l3 = "ipv6"
		}
		for _, c := range []struct {
			name      string
			spec      frameSpec
			withPorts bool
			want      uint32
			ok        bool
		}{
			{"tcp declared l3", frameSpec{l3: l3, proto: protoTCP}, false, tt.ipOnly, true},
			{"tcp declared l4", frameSpec{l3: l3, proto: protoTCP}, true, tt.withTCP, true},
			{"gre declared l4: the 4 bytes after the header", frameSpec{l3: l3, proto: 47}, true, tt.withTCP, true},
			{"fragment declared l4", frameSpec{l3: l3, proto: protoUDP, frag: true}, true, 0, false},
		} {
			c.spec.src, c.spec.dst = tt.src, tt.dst
			got, ok := tz.FromFrameDeclared(c.spec.frame(), c.withPorts, SymmetricNone)
			if ok != c.ok || ok && got != c.want {
				t.Errorf("%v -> %v, %s: %#08x, %v; want %#08x, %v", tt.src, tt.dst, c.name, got, ok, c.want, c.ok)
			}
		}
	}
}

// TestToeplitzFromFrameShortIHL: an IPv4 header whose IHL is below 5 is
// hashed as virtio-net in QEMU hashes it: the addresses where IPv4 has
// them, the "ports" at the offset the IHL gives.
func TestToeplitzFromFrameShortIHL(t *testing.T) {
	tz := defaultToeplitz(t)
	tt := msSuite[0]
	f := frameSpec{l3: "ipv4", proto: protoTCP, src: tt.src, dst: tt.dst}.frame()
	f[14] = 0x41 // IHL 1: the ports at byte 4 of the IP header
	in := append(append([]byte(nil), f[26:34]...), f[18:22]...)
	if got, ok := tz.FromFrame(f, DefaultNICFields, SymmetricNone); !ok || got != tz.Hash(in) {
		t.Errorf("IHL 1: %#08x, %v; want %#08x", got, ok, tz.Hash(in))
	}
}

func TestToeplitzFromFrameAllocs(t *testing.T) {
	tz := defaultToeplitz(t)
	frame := frameSpec{l3: "ipv6", proto: protoTCP, vlans: 1, src: msSuite[len(msSuite)-1].src, dst: msSuite[len(msSuite)-1].dst}.frame()
	if n := testing.AllocsPerRun(100, func() {
		tz.FromFrame(frame, DefaultNICFields, SymmetricNone)
		tz.FromFrameDeclared(frame, true, SymmetricNone)
	}); n != 0 {
		t.Errorf("FromFrame: %v allocations per frame, want 0", n)
	}
}
