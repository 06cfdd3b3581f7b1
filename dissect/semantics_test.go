package dissect

import (
	"encoding/binary"
	"testing"
)

// Rules of kernel-fidelity §5 and §6 that the selftest packets do not reach, one named case
// each. Frames are built from the selftest headers (zero addresses) unless the rule
// needs more.
func TestKernelRules(t *testing.T) {
	tcp := selftestTCP(80, 8080)
	ipv4 := func(proto byte) []byte { return selftestIPv4(proto, 0) }
	pppoe := func(proto uint16) []byte {
		return binary.BigEndian.AppendUint16([]byte{0x11, 0, 0, 1, 0, 0}, proto)
	}
	gre := func(flagsVer, proto uint16, words ...uint32) []byte {
		b := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, flagsVer), proto)
		for _, w := range words {
			b = binary.BigEndian.AppendUint32(b, w)
		}
		return b
	}
	labelled6 := func(next byte) []byte {
		b := selftestIPv6(next, 0)
		for i := range 16 {
			b[8+i], b[24+i] = 0xa0+byte(i), 0xb0+byte(i)
		}
		return b
	}
	tests := []struct {
		name  string
		pkt   []byte
		ok    bool
		check func(k *FlowKeys) bool
	}{
		{"ihl below 5 is bad", frame(0, selftestEth(0x0800), func() []byte { b := ipv4(6); b[0] = 0x44; return b }(), tcp), false,
			func(k *FlowKeys) bool { return k.THoff() == 14 && k.AddrType() == AddrNone && k.IPProto() == 0 }},
		{"ihl past the end: ports 0, thoff clamped", frame(0, selftestEth(0x0800), func() []byte { b := ipv4(6); b[0] = 0x4f; return b }(), tcp[:4]), true,
			func(k *FlowKeys) bool { return k.THoff() == 38 && k.PortsWord() == 0 && k.IPProto() == 6 }},
		{"padding read as ports", frame(60, selftestEth(0x0800), ipv4(6)), true,
			func(k *FlowKeys) bool { return k.THoff() == 34 && k.PortsWord() == 0 }},
		{"ipv4 non-first fragment", frame(0, selftestEth(0x0800), selftestIPv4(6, 0x0001), tcp), true,
			func(k *FlowKeys) bool { return k.Flags() == FlagIsFragment && k.PortsWord() == 0 }},
		{"ah spi at offset 4", frame(0, selftestEth(0x0800), ipv4(51), []byte{6, 4, 0, 0, 0xde, 0xad, 0xbe, 0xef}), true,
			func(k *FlowKeys) bool { return k.SrcPort() == 0xdead && k.DstPort() == 0xbeef }},
		{"icmp has no ports", frame(0, selftestEth(0x0800), ipv4(1), []byte{8, 0, 0, 0, 0x12, 0x34, 0, 1}), true,
			func(k *FlowKeys) bool { return k.PortsWord() == 0 && k.IPProto() == 1 }},
		{"ipv4 protocol 0 is no extension header", frame(0, selftestEth(0x0800), ipv4(0), tcp), true,
			func(k *FlowKeys) bool { return k.THoff() == 34 && k.IPProto() == 0 }},
		{"ipv6 hop-by-hop then tcp", frame(0, selftestEth(0x86dd), selftestIPv6(0, 0), []byte{6, 0, 0, 0, 0, 0, 0, 0}, tcp), true,
			func(k *FlowKeys) bool { return k.THoff() == 62 && k.IPProto() == 6 && k.SrcPort() == 0x5000 }},
		{"ipv6 routing header cut off is bad", frame(0, selftestEth(0x86dd), selftestIPv6(43, 0), []byte{60, 1, 0, 0, 0, 0, 0, 0}, []byte{6}), false,
			func(k *FlowKeys) bool { return k.THoff() == 63 && k.IPProto() == 60 }}, // nhoff 70 clamped to the length
		{"ipv6 flow label stops before extension headers", frame(0, selftestEth(0x86dd), selftestIPv6(44, 0x12345), []byte{6, 0, 0, 0, 0, 0, 0, 0}, tcp), true,
			func(k *FlowKeys) bool {
				return k.THoff() == 54 && k.IPProto() == 44 && k.FlowLabel() == 0x12345 && k.Flags() == 0
			}},
		{"4in6 keeps stale outer address bytes", frame(0, selftestEth(0x86dd), labelled6(4), ipv4(6), tcp), true,
			func(k *FlowKeys) bool {
				return k.AddrType() == AddrIPv4 && k.THoff() == 74 && k[52] == 0xa8 && k[75] == 0xbf && k.Flags() == FlagEncapsulation
			}},
		{"6in4 overwrites all addresses", frame(0, selftestEth(0x0800), ipv4(41), labelled6(6), tcp), true,
			func(k *FlowKeys) bool { return k.AddrType() == AddrIPv6 && k[44] == 0xa0 && k.THoff() == 74 }},
		{"mpls in ip stops at the label", frame(0, selftestEth(0x0800), ipv4(137), []byte{0, 0, 0x11, 0x40}, tcp), true,
			func(k *FlowKeys) bool {
				return k.NProto() == EtherTypeMPLSUC && k.IPProto() == 137 && k.THoff() == 38 && k.Flags() == 0
			}},
		{"gre routing bit: good, not entered", frame(0, selftestEth(0x0800), ipv4(47), gre(0x4000, 0x0800), ipv4(6), tcp), true,
			func(k *FlowKeys) bool {
				return k.NProto() == 0x0800 && k.THoff() == 34 && k.Flags() == 0 && k.IPProto() == 47
			}},
		{"gre version 2: good, proto unchanged", frame(0, selftestEth(0x0800), ipv4(47), gre(0x0002, 0x86dd), ipv4(6), tcp), true,
			func(k *FlowKeys) bool { return k.NProto() == 0x0800 && k.Flags() == 0 }},
		{"gre v1 without pptp: proto taken, not entered", frame(0, selftestEth(0x0800), ipv4(47), gre(0x0001, 0x0800), ipv4(6), tcp), true,
			func(k *FlowKeys) bool { return k.NProto() == 0x0800 && k.Flags() == 0 && k.THoff() == 34 }},
		{"gre key cut off: bad with proto taken", frame(0, selftestEth(0x0800), ipv4(47), gre(0x2000, 0x86dd), []byte{0, 0}), false,
			func(k *FlowKeys) bool { return k.NProto() == 0x86dd && k.KeyID() == 0 && k.Flags() == 0 }},
		{"gre csum key seq", frame(0, selftestEth(0x0800), ipv4(47), gre(0xb000, 0x0800, 0xffff0000, 0x01020304, 9), ipv4(6), tcp), true,
			func(k *FlowKeys) bool {
				return k.KeyID() == 0x01020304 && k.THoff() == 34+16+20 && k.SrcPort() == 0x5000
			}},
		{"pptp keeps only the call id", frame(0, selftestEth(0x0800), ipv4(47), gre(0x3081, 0x880b, 0x00281234, 1, 2), []byte{0xff, 0x03, 0x00, 0x21}, ipv4(6), tcp), true,
			func(k *FlowKeys) bool { return k.KeyID() == 0x1234 && k.THoff() == 34+20+20 && k.NProto() == 0x0800 }},
		{"pptp other ppp protocol is bad", frame(0, selftestEth(0x0800), ipv4(47), gre(0x2001, 0x880b, 0x00281234), []byte{0xff, 0x03, 0xc0, 0x21}, tcp), false,
			func(k *FlowKeys) bool { return k.NProto() == 0x880b && k.Flags() == FlagEncapsulation }},
		{"gre teb reads the inner ethertype", frame(0, selftestEth(0x0800), ipv4(47), gre(0, 0x6558), selftestEth(0x8100), vlanTag(7, 0x0800), ipv4(6), tcp), true,
			func(k *FlowKeys) bool { return k.VLANID() == 7 && k.VLANTPID() == 0x8100 && k.THoff() == 34+4+14+4+20 }},
		{"erspan payload is bad with n_proto set", frame(0, selftestEth(0x0800), ipv4(47), gre(0x1000, 0x88be, 1), tcp), false,
			func(k *FlowKeys) bool { return k.NProto() == 0x88be && k.IPProto() == 47 }},
		{"pppoe ipv6", frame(0, selftestEth(0x8864), pppoe(0x0057), selftestIPv6(17, 0), tcp), true,
			func(k *FlowKeys) bool { return k.NProto() == 0x86dd && k.THoff() == 62 && k.SrcPort() == 0x5000 }},
		{"pppoe compressed protocol is bad (6.18)", frame(0, selftestEth(0x8864), []byte{0x11, 0, 0, 1, 0, 0, 0x21}, ipv4(6), tcp), false,
			func(k *FlowKeys) bool { return k.NProto() == 0x8864 && k.THoff() == 22 }},
		{"pppoe valid non-ip protocol (lcp) is good", frame(0, selftestEth(0x8864), pppoe(0xc021)), true,
			func(k *FlowKeys) bool { return k.NProto() == 0x8864 }},
		{"pppoe even protocol is bad after the header", frame(0, selftestEth(0x8864), pppoe(0x0022)), false,
			func(k *FlowKeys) bool { return k.NProto() == 0x8864 && k.THoff() == 22 }},
		{"pppoe bad version", frame(0, selftestEth(0x8864), func() []byte { b := pppoe(0x0021); b[0] = 0x21; return b }(), ipv4(6)), false,
			func(k *FlowKeys) bool { return k.THoff() == 14 }},
		{"mpls stops after one label", frame(0, selftestEth(0x8847), []byte{0, 0, 0x10, 0x40}, []byte{0, 0, 0x21, 0x40}), true,
			func(k *FlowKeys) bool { return k.THoff() == 18 && k.NProto() == 0x8847 }},
		{"truncated mpls is still good", frame(0, selftestEth(0x8848)), true,
			func(k *FlowKeys) bool { return k.THoff() == 14 }},
		{"fcoe needs 38 bytes", frame(0, selftestEth(0x8906), make([]byte, 37)), false,
			func(k *FlowKeys) bool { return k.THoff() == 14 }},
		{"fcoe", frame(0, selftestEth(0x8906), make([]byte, 38)), true,
			func(k *FlowKeys) bool { return k.THoff() == 52 }},
		{"tipc key is the source node", frame(0, selftestEth(0x88ca), []byte{0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}), true,
			func(k *FlowKeys) bool {
				return k.AddrType() == AddrTIPC && k.TIPCKey() == 0x01020304 && k.THoff() == 14
			}},
		{"batman unicast", frame(0, selftestEth(0x4305), []byte{0x40, 15, 0, 0, 0, 0, 0, 0, 0, 0}, selftestEth(0x0800), ipv4(6), tcp), true,
			func(k *FlowKeys) bool {
				return k.Flags() == FlagEncapsulation && k.THoff() == 38+20 && k.SrcPort() == 0x5000
			}},
		{"batman wrong version", frame(0, selftestEth(0x4305), []byte{0x40, 14, 0, 0, 0, 0, 0, 0, 0, 0}, selftestEth(0x0800)), false,
			func(k *FlowKeys) bool { return k.Flags() == 0 }},
		{"hsr tag then ipv4, no encapsulation flag", frame(0, selftestEth(0x892f), []byte{0, 0, 0, 0, 0x08, 0x00}, ipv4(17), tcp), true,
			func(k *FlowKeys) bool { return k.Flags() == 0 && k.THoff() == 40 && k.IPProto() == 17 }},
		{"ptp", frame(0, selftestEth(0x88f7), make([]byte, 34)), true,
			func(k *FlowKeys) bool { return k.THoff() == 48 }},
		{"arp", frame(0, selftestEth(0x0806), make([]byte, 28)), true,
			func(k *FlowKeys) bool { return k.THoff() == 14 && k.NProto() == 0x0806 }},
		{"802.3 llc", frame(0, selftestEth(0x0030), []byte{0xaa, 0xaa, 3}), false,
			func(k *FlowKeys) bool { return k.NProto() == EtherType8022 }},
		{"lldp is unknown", frame(0, selftestEth(0x88cc), make([]byte, 20)), false,
			func(k *FlowKeys) bool { return k.NProto() == 0x88cc && k.THoff() == 14 }},
		{"frame shorter than ethernet", []byte{1, 2, 3}, false,
			func(k *FlowKeys) bool { return k.THoff() == 3 && k.NProto() == 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var k FlowKeys
			ok := DissectFrame(&k, tc.pkt, DefaultFlags)
			if ok != tc.ok || !tc.check(&k) {
				t.Errorf("ok=%v (want %v), keys %x", ok, tc.ok, k[:])
			}
		})
	}
}
