package corpus

import (
	"fmt"
	"net/netip"
	"slices"
)

// Addresses come from the benchmarking ranges 198.18.0.0/15 and the
// documentation prefix 2001:db8::/32; tunnels use a second pair inside.
const (
	v4A, v4B     = "198.18.0.1", "198.19.0.2"
	v4InA, v4InB = "198.18.1.1", "198.19.1.2"
	v6A, v6B     = "2001:db8::1", "2001:db8:1::2"
	v6InA, v6InB = "2001:db8:a::1", "2001:db8:b::2"
)

// Locally administered MACs of inner Ethernet headers (GRE-TEB, batman-adv).
var (
	macC = [6]byte{0x02, 0, 0, 0, 0, 0x03}
	macD = [6]byte{0x02, 0, 0, 0, 0, 0x04}
)

func ip4(src, dst string) IPv4 {
	return IPv4{ID: 1, Frag: 0x4000, TTL: 64, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst)}
}

func ip6(src, dst string) IPv6 {
	return IPv6{HopLimit: 64, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst)}
}

func tcp() TCP { return TCP{Src: 1025, Dst: 80, Seq: 1, Flags: 0x02} }
func udp() UDP { return UDP{Src: 1025, Dst: 53} }

// data is an 8-byte application payload.
func data() Payload { return Payload("xdphash!") }

// ms joins mutation lists.
func ms(lists ...[]mutation) []mutation { return slices.Concat(lists...) }

// families lists every shape of the corpus with its mutations.
func families() []family {
	return slices.Concat(
		transportFamilies(),
		ipv4HeaderFamilies(),
		ipv6HeaderFamilies(),
		vlanFamilies(),
		pppoeFamilies(),
		mplsFamilies(),
		greFamilies(),
		pptpFamilies(),
		tunnelFamilies(),
		udpTunnelFamilies(),
		depthFamilies(),
		linkFamilies(),
	)
}

// Mutation sets shared by many families. A prefix "outer." selects the
// outermost header of the kind, no prefix the innermost.

func portMuts() []mutation {
	return []mutation{
		set("l4.sport", 0, 1, 53, 1024, 1026, 65535),
		set("l4.dport", 0, 81, 443, 8080, 65535),
		swap(swapPorts),
	}
}

func swapMuts() []mutation {
	return []mutation{swap(swapAll), swap(swapAddrs)}
}

func tunnelSwapMuts() []mutation {
	return []mutation{swap(swapAll), swap(swapInner), swap(swapAddrs)}
}

// ipv4Muts changes the addresses and the fields the dissector must ignore.
func ipv4Muts(p string) []mutation {
	return []mutation{
		addr(p+"ipv4.src", "198.18.0.9", "198.18.255.1", "198.19.255.254"),
		addr(p+"ipv4.dst", "198.19.0.3", "198.18.0.2"),
		set(p+"ipv4.ttl", 1, 255),
		set(p+"ipv4.csum", 0, 0xffff),
		set(p+"ipv4.totlen", 0, 20, 0xffff),
		set(p+"ipv4.tos", 0xb8),
		set(p+"ipv4.id", 0xffff),
		set(p+"ipv4.ver", 0, 6, 15),
	}
}

// ipv4StructureMuts changes what the dissector decides on: the fragment word
// (DF, MF, offset, reserved bit), IHL and the protocol.
func ipv4StructureMuts(p string) []mutation {
	return []mutation{
		set(p+"ipv4.frag", 0x0000, 0x2000, 0x2001, 0x0001, 0x00b9, 0x1000, 0x3fff, 0x6000, 0xc000),
		set(p+"ipv4.ihl", 0, 1, 4, 6, 7, 15),
		set(p+"ipv4.proto", 6, 17, 1, 254),
	}
}

func ipv6Muts(p string) []mutation {
	return []mutation{
		addr(p+"ipv6.src", "2001:db8::9", "2001:db8:ffff::1", "2001:db8::1:0:0:1"),
		addr(p+"ipv6.dst", "2001:db8:1::3", "2001:db8::"),
		set(p+"ipv6.tc", 0xb8),
		set(p+"ipv6.hlim", 1, 255),
		set(p+"ipv6.plen", 0, 0xffff),
		set(p+"ipv6.ver", 0, 4),
	}
}

func ipv6StructureMuts(p string) []mutation {
	return []mutation{
		set(p+"ipv6.label", 1, 0x12345, 0xfffff),
		set(p+"ipv6.next", 6, 17, 59, 0, 44),
	}
}

// transport is an IP payload shape shared by the IPv4 and IPv6 families.
type transport struct {
	name   string
	layers func(v6 bool) []Layer
	muts   []mutation
}

func transports() []transport {
	portsAnd := func(extra ...mutation) []mutation { return ms(portMuts(), extra) }
	return []transport{
		{"tcp", func(bool) []Layer { return []Layer{tcp(), data()} }, portsAnd(
			set("tcp.seq", 0xdeadbeef), set("tcp.flags", 0x12, 0x11), set("tcp.csum", 0xbeef),
			fill("payload", 0, 0xff))},
		{"udp", func(bool) []Layer { return []Layer{udp(), data()} }, portsAnd(
			set("udp.len", 0, 0xffff), set("udp.csum", 0xffff), fill("payload", 0, 0xff))},
		{"udplite", func(bool) []Layer { return []Layer{UDP{Src: 1025, Dst: 5004, Lite: true}, data()} }, portsAnd(
			set("udp.cscov", 8), fill("payload", 0xff))},
		{"sctp", func(bool) []Layer { return []Layer{SCTP{Src: 1025, Dst: 36412, Tag: 1}, data()} }, portsAnd(
			set("sctp.tag", 0x12345678), set("sctp.csum", 1))},
		{"dccp", func(bool) []Layer { return []Layer{DCCP{Src: 1025, Dst: 5001, Type: 1, Seq: 1}} }, portsAnd(
			set("dccp.type", 0x01), set("dccp.seq", 99))},
		{"esp", func(bool) []Layer { return []Layer{ESP{SPI: 0x1000, Seq: 1}, data()} }, []mutation{
			set("esp.spi", 0, 1, 0x100, 0x10000, 0xffffffff), set("esp.seq", 99), fill("payload", 0xff)}},
		{"ah/tcp", func(bool) []Layer { return []Layer{AH{SPI: 0x2000, Seq: 1}, tcp(), data()} }, []mutation{
			set("ah.spi", 0, 1, 0x100, 0xffffffff), set("ah.seq", 99), set("ah.next", 17), fill("ah.icv", 0xff),
			set("l4.sport", 1026, 65535), set("l4.dport", 443), swap(swapPorts)}},
		{"icmp", func(v6 bool) []Layer { return []Layer{ICMP{V6: v6, Type: 8, ID: 7, Seq: 1}, data()} }, []mutation{
			set("icmp.type", 0, 3, 11, 128), set("icmp.code", 1), set("icmp.id", 0, 0xffff), set("icmp.seq", 2),
			fill("payload", 0xff)}},
		{"proto253", func(bool) []Layer { return []Layer{IPPayload{Protocol: 253, Data: []byte("experimental")}} }, []mutation{
			fill("payload", 0, 0xff)}},
	}
}

// transportFamilies: Ethernet + IPv4 or IPv6 + each transport, with every
// single-field change of the IP header.
func transportFamilies() []family {
	var fs []family
	for _, tr := range transports() {
		fs = append(fs, family{
			name:   "ipv4/" + tr.name,
			layers: append([]Layer{Ethernet{}, ip4(v4A, v4B)}, tr.layers(false)...),
			muts:   ms(tr.muts, ipv4Muts(""), ipv4StructureMuts(""), swapMuts()),
		})
		fs = append(fs, family{
			name:   "ipv6/" + tr.name,
			layers: append([]Layer{Ethernet{}, ip6(v6A, v6B)}, tr.layers(true)...),
			muts:   ms(tr.muts, ipv6Muts(""), ipv6StructureMuts(""), swapMuts()),
		})
	}
	// The representatives cut at every byte from the IP header on.
	fs[0].muts = append(fs[0].muts, truncs())
	fs[3].muts = append(fs[3].muts, truncs())
	return fs
}

// Record Route option filling the 40 bytes of options (IHL 15).
var recordRoute = append([]byte{0x07, 39, 4}, make([]byte, 37)...)

func ipv4HeaderFamilies() []family {
	withOpts := func(opts []byte) IPv4 {
		ip := ip4(v4A, v4B)
		ip.Options = opts
		return ip
	}
	frag := func(word uint16, proto uint8) IPv4 {
		ip := ip4(v4A, v4B)
		ip.Frag, ip.Protocol = word, proto
		return ip
	}
	optMuts := func() []mutation {
		return ms(portMuts(), swapMuts(), []mutation{
			fill("ipv4.opts", 0x00, 0x01, 0xff),
			set("ipv4.ihl", 4, 5, 6, 7, 15),
		})
	}
	fragMuts := func() []mutation {
		return ms(portMuts(), swapMuts(), ipv4Muts(""), []mutation{
			set("ipv4.frag", 0x0000, 0x4000, 0x2000, 0x2001, 0x0001, 0x00b9, 0x1fff, 0x3fff, 0xa000),
			fill("payload", 0, 0xff),
		})
	}
	return []family{
		{"ipv4+opts4/tcp", []Layer{Ethernet{}, withOpts([]byte{1, 1, 1, 0}), tcp(), data()}, optMuts()},
		{"ipv4+opts8/udp", []Layer{Ethernet{}, withOpts([]byte{0x94, 4, 0, 0, 1, 1, 1, 0}), udp(), data()}, optMuts()},
		{"ipv4+opts40/tcp", []Layer{Ethernet{}, withOpts(recordRoute), tcp(), data()}, ms(optMuts(), []mutation{truncs()})},
		// Fragments: first (MF, offset 0), middle and last. A fragment's
		// ports are never read, so port changes must not matter.
		{"ipv4-frag-first/udp", []Layer{Ethernet{}, frag(0x2000, 0), udp(), data()}, fragMuts()},
		{"ipv4-frag-first/tcp", []Layer{Ethernet{}, frag(0x2000, 0), tcp(), data()}, fragMuts()},
		{"ipv4-frag-middle/udp", []Layer{Ethernet{}, frag(0x2010, ipProtoUDP), udp(), data()}, fragMuts()},
		{"ipv4-frag-last/tcp", []Layer{Ethernet{}, frag(0x0020, ipProtoTCP), tcp(), data()}, fragMuts()},
		// Protocol 6 but the datagram ends at the IP header: Ethernet
		// padding sits where the ports would be and is read as ports.
		{"ipv4/tcp-missing", []Layer{Ethernet{}, frag(0x4000, ipProtoTCP)}, []mutation{
			pad(0x00, 4, 26), pad(0x01, 4, 26), set("ipv4.totlen", 40)}},
		{"ipv6/udp-missing", []Layer{Ethernet{}, IPv6{NextHeader: ipProtoUDP, HopLimit: 64,
			Src: netip.MustParseAddr(v6A), Dst: netip.MustParseAddr(v6B)}}, []mutation{
			pad(0x00, 4, 6), pad(0x01, 4, 6), set("ipv6.plen", 8)}},
		// IPv4 protocol 0 is not a hop-by-hop header: only IPv6 skips
		// extension headers, so the ports stay zero.
		{"ipv4/proto0/hbh/tcp", []Layer{Ethernet{}, frag(0x4000, ipProtoHopByHop), IPv6Options{Type: ipProtoHopByHop}, tcp(), data()},
			ms(portMuts(), []mutation{set("hbh.len", 1), set("ipv4.proto", 6)})},
	}
}

func ipv6HeaderFamilies() []family {
	hbh := IPv6Options{Type: ipProtoHopByHop}
	rt := IPv6Options{Type: ipProtoRouting, Len: 2}
	dst := IPv6Options{Type: ipProtoDestOpts, Len: 1}
	labelled := ip6(v6A, v6B)
	labelled.FlowLabel = 0x12345
	extMuts := func(ext string, extra ...mutation) []mutation {
		return ms(portMuts(), swapMuts(), []mutation{
			set(ext+".len", 0, 1, 3, 0xff),
			set(ext+".next", 6, 17, 59, 0, 60),
			fill(ext+".data", 0, 0xff),
			set("ipv6.label", 1),
			addr("ipv6.src", "2001:db8::9"),
		}, extra)
	}
	fragMuts := func(extra ...mutation) []mutation {
		return ms(portMuts(), swapMuts(), []mutation{
			set("frag.off", 0, 1, 10, 0x1fff),
			set("frag.m", 0, 1),
			set("frag.id", 0, 0xffffffff),
			set("frag.res", 0xff),
			set("frag.next", 6, 17, 60),
			addr("ipv6.dst", "2001:db8:1::3"),
		}, extra)
	}
	return []family{
		{"ipv6+hbh/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), hbh, tcp(), data()}, extMuts("hbh")},
		{"ipv6+rt/udp", []Layer{Ethernet{}, ip6(v6A, v6B), rt, udp(), data()}, extMuts("rt")},
		{"ipv6+dstopt/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), dst, tcp(), data()}, extMuts("dstopt")},
		{"ipv6+dstopt/sctp", []Layer{Ethernet{}, ip6(v6A, v6B), dst, SCTP{Src: 1025, Dst: 36412}}, extMuts("dstopt")},
		{"ipv6+hbh+rt+dstopt/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), hbh, rt, dst, tcp(), data()},
			extMuts("rt", set("hbh.len", 2), set("dstopt.next", 17, 44), truncs())},
		{"ipv6+hbh+dstopt/esp", []Layer{Ethernet{}, ip6(v6A, v6B), hbh, dst, ESP{SPI: 0x1000, Seq: 1}, data()},
			[]mutation{set("esp.spi", 1, 0xffffffff), set("hbh.len", 1), set("dstopt.next", 51), swap(swapAll)}},
		{"ipv6+dstopt+ah/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), dst, AH{SPI: 0x2000}, tcp(), data()},
			ms(portMuts(), []mutation{set("ah.spi", 1, 0xffffffff), set("dstopt.next", 6)})},
		{"ipv6+frag-first/udp", []Layer{Ethernet{}, ip6(v6A, v6B), IPv6Fragment{More: true, ID: 7}, udp(), data()}, fragMuts()},
		{"ipv6+frag-atomic/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), IPv6Fragment{ID: 7}, tcp(), data()}, fragMuts()},
		{"ipv6+frag-middle/udp", []Layer{Ethernet{}, ip6(v6A, v6B), IPv6Fragment{Offset: 10, More: true, ID: 7}, udp(), data()}, fragMuts()},
		{"ipv6+frag-last/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), IPv6Fragment{Offset: 20, ID: 7}, tcp(), data()}, fragMuts()},
		{"ipv6+hbh+frag-first+dstopt/udp", []Layer{Ethernet{}, ip6(v6A, v6B), hbh, IPv6Fragment{More: true, ID: 9}, dst, udp(), data()},
			fragMuts(set("hbh.len", 1), set("dstopt.next", 6))},
		// A non-zero flow label ends the dissection (STOP_AT_FLOW_LABEL):
		// nothing behind the IPv6 header may matter.
		{"ipv6-label/tcp", []Layer{Ethernet{}, labelled, tcp(), data()},
			ms(portMuts(), swapMuts(), ipv6Muts(""), []mutation{
				set("ipv6.label", 1, 0x12346, 0xfffff, 0), set("ipv6.next", 17, 0), fill("payload", 0xff)})},
		{"ipv6-label+hbh/udp", []Layer{Ethernet{}, labelled, hbh, udp(), data()},
			ms(portMuts(), []mutation{set("hbh.len", 1, 0xff), set("hbh.next", 6), set("ipv6.label", 0)})},
	}
}

func vlanFamilies() []family {
	tag := func(tpid, id uint16, prio uint8) VLAN { return VLAN{TPID: tpid, ID: id, Priority: prio} }
	vlanMuts := func(p string) []mutation {
		return []mutation{
			set(p+"vlan.vid", 0, 1, 101, 4095),
			set(p+"vlan.pcp", 0, 7),
			set(p+"vlan.dei", 1),
			set(p+"vlan.type", 0x0800, 0x86dd, 0x8100, 0x88a8, 0x88b5),
		}
	}
	tpidMuts := []mutation{set("outer.eth.type", 0x8100, 0x88a8, 0x9100, 0x0800)}
	return []family{
		{"vlan/ipv4/tcp", []Layer{Ethernet{}, tag(0, 100, 3), ip4(v4A, v4B), tcp(), data()},
			ms(vlanMuts(""), tpidMuts, portMuts(), swapMuts(), ipv4Muts(""), []mutation{truncs()})},
		{"vlan/ipv6/udp", []Layer{Ethernet{}, tag(0, 100, 0), ip6(v6A, v6B), udp(), data()},
			ms(vlanMuts(""), tpidMuts, portMuts(), swapMuts(), ipv6StructureMuts(""))},
		{"vlan-ad/ipv4/udp", []Layer{Ethernet{}, tag(etherType8021AD, 5, 2), ip4(v4A, v4B), udp(), data()},
			ms(vlanMuts(""), tpidMuts, portMuts())},
		// Only the first tag is kept: the inner tag's fields must not matter,
		// the outer tag's and the type after it must.
		{"qinq/ipv4/tcp", []Layer{Ethernet{}, tag(etherType8021AD, 10, 1), tag(0, 20, 5), ip4(v4A, v4B), tcp(), data()},
			ms(vlanMuts("outer."), vlanMuts(""), tpidMuts, portMuts(), swapMuts())},
		{"qinq-8100/ipv6/tcp", []Layer{Ethernet{}, tag(0, 10, 0), tag(0, 20, 0), ip6(v6A, v6B), tcp(), data()},
			ms(vlanMuts("outer."), vlanMuts(""), portMuts(), swapMuts(), []mutation{truncs()})},
		{"vlan3/ipv4/udp", []Layer{Ethernet{}, tag(etherType8021AD, 10, 0), tag(0, 20, 0), tag(0, 30, 0), ip4(v4A, v4B), udp(), data()},
			ms(vlanMuts("outer."), vlanMuts(""), portMuts())},
		{"vlan/arp", []Layer{Ethernet{}, tag(0, 100, 0), arp(false)},
			ms(vlanMuts(""), []mutation{set("arp.op", 2), addr("arp.spa", "198.18.0.9")})},
		{"vlan/mpls/ipv4/tcp", []Layer{Ethernet{}, tag(0, 100, 0), MPLS{Label: 100, TTL: 64}, ip4(v4A, v4B), tcp(), data()},
			ms(vlanMuts(""), portMuts(), []mutation{set("mpls.label", 200)})},
		{"vlan/tipc", []Layer{Ethernet{}, tag(0, 100, 0), tipc()},
			ms(vlanMuts(""), []mutation{set("tipc.orig", 0x01001009)})},
	}
}

func pppoeMuts() []mutation {
	return []mutation{
		set("pppoe.vertype", 0x00, 0x01, 0x10, 0x12, 0x21),
		set("pppoe.code", 0x09, 0x65, 0xa7),
		set("pppoe.session", 0, 0xffff),
		set("pppoe.len", 0, 0xffff),
		// IPv4, IPv6, MPLS, valid non-IP (LCP, IPCP, bridging, MP) and
		// invalid protocol numbers (even low byte, odd high byte).
		set("pppoe.proto", 0x0021, 0x0057, 0x0281, 0x0283, 0xc021, 0x8021, 0x0031, 0x003d, 0x0022, 0x0121, 0x0000, 0x2145, 0xffff),
	}
}

func pppoeFamilies() []family {
	return []family{
		{"pppoe/ipv4/tcp", []Layer{Ethernet{}, PPPoE{Session: 0x1234}, ip4(v4A, v4B), tcp(), data()},
			ms(pppoeMuts(), portMuts(), swapMuts(), ipv4Muts(""), []mutation{set("ipv4.ihl", 4, 6), truncs()})},
		{"pppoe/ipv6/udp", []Layer{Ethernet{}, PPPoE{Session: 0x1234}, ip6(v6A, v6B), udp(), data()},
			ms(pppoeMuts(), portMuts(), swapMuts(), ipv6StructureMuts(""), []mutation{truncs()})},
		{"pppoe/mpls/ipv4/tcp", []Layer{Ethernet{}, PPPoE{Session: 1}, MPLS{Label: 100, TTL: 64}, ip4(v4A, v4B), tcp(), data()},
			ms(pppoeMuts(), portMuts(), []mutation{set("mpls.label", 0, 0xfffff), addr("ipv4.src", "198.18.0.9")})},
		{"pppoe/mpls-mc/ipv6/udp", []Layer{Ethernet{}, PPPoE{Session: 1}, MPLS{Label: 100, TTL: 64, Multicast: true}, ip6(v6A, v6B), udp()},
			ms(pppoeMuts(), portMuts())},
		{"pppoe/lcp", []Layer{Ethernet{}, PPPoE{Session: 1, Protocol: 0xc021}, Payload{0x09, 0x01, 0x00, 0x08, 0xde, 0xad, 0xbe, 0xef}},
			ms(pppoeMuts(), []mutation{fill("payload", 0, 0xff), truncs()})},
		// Protocol-field compression (a one-byte protocol): not followed by
		// 6.18, the dissection ends BAD with n_proto 0x8864.
		{"pppoe-pfc/ipv4/tcp", []Layer{Ethernet{}, PPPoE{Session: 1, Compressed: true}, ip4(v4A, v4B), tcp(), data()},
			ms(portMuts(), swapMuts(), []mutation{set("pppoe.proto", 0x57, 0x00, 0x20), addr("ipv4.src", "198.18.0.9"),
				set("outer.eth.type", 0x88b5)})},
		{"pppoe-pfc/ipv6/udp", []Layer{Ethernet{}, PPPoE{Session: 1, Compressed: true}, ip6(v6A, v6B), udp(), data()},
			ms(portMuts(), []mutation{set("pppoe.proto", 0x21), set("outer.eth.type", 0x88b5)})},
		// Truncation representatives behind PPPoE: the oracle refuses an
		// Ethernet type 0x0800 frame with less than 20 bytes of IPv4 and
		// 0x86DD with less than 40 bytes of IPv6; PPPoE adds no key.
		{"pppoe/ipv4+opts40/tcp", []Layer{Ethernet{}, PPPoE{Session: 1}, withOptions(recordRoute), tcp(), data()},
			[]mutation{truncs(), set("ipv4.ihl", 5, 6)}},
		{"pppoe/ipv6+hbh+rt+dstopt/tcp", []Layer{Ethernet{}, PPPoE{Session: 1}, ip6(v6A, v6B),
			IPv6Options{Type: ipProtoHopByHop}, IPv6Options{Type: ipProtoRouting, Len: 2}, IPv6Options{Type: ipProtoDestOpts, Len: 1}, tcp(), data()},
			[]mutation{truncs(), set("hbh.len", 0xff)}},
		{"pppoe/gre-k/ipv4/tcp", []Layer{Ethernet{}, PPPoE{Session: 1}, ip4(v4A, v4B), GRE{Flags: GREKey, Key: 0x01020304}, ip4(v4InA, v4InB), tcp(), data()},
			[]mutation{truncs(), set("gre.key", 5)}},
		{"pppoe/ipip/tcp", []Layer{Ethernet{}, PPPoE{Session: 1}, ip4(v4A, v4B), ip4(v4InA, v4InB), tcp(), data()},
			[]mutation{truncs(), set("l4.sport", 1026)}},
		{"pppoe/6in6/tcp", []Layer{Ethernet{}, PPPoE{Session: 1}, ip6(v6A, v6B), ip6(v6InA, v6InB), tcp(), data()},
			[]mutation{truncs(), set("l4.sport", 1026)}},
		{"pppoe/pptp-ka/ipv4/udp", []Layer{Ethernet{}, PPPoE{Session: 1}, ip4(v4A, v4B), pptp(GREKey | GREAck), PPP{}, ip4(v4InA, v4InB), udp(), data()},
			[]mutation{truncs(), set("gre.callid", 5)}},
		{"vlan/pppoe/ipv4/tcp", []Layer{Ethernet{}, VLAN{ID: 7}, PPPoE{Session: 1}, ip4(v4A, v4B), tcp(), data()},
			ms(portMuts(), []mutation{set("vlan.vid", 8), set("pppoe.code", 9), set("pppoe.session", 2)})},
	}
}

func withOptions(opts []byte) IPv4 {
	ip := ip4(v4A, v4B)
	ip.Options = opts
	return ip
}

// MPLS ends the dissection at once: neither labels nor anything behind the
// label stack may matter, only the Ethernet type.
func mplsFamilies() []family {
	mplsMuts := func() []mutation {
		return ms(portMuts(), swapMuts(), []mutation{
			set("mpls.label", 0, 7, 101, 0xfffff),
			set("outer.mpls.label", 3),
			set("mpls.tc", 5),
			set("mpls.s", 0, 1),
			set("mpls.ttl", 1),
			set("outer.eth.type", 0x8847, 0x8848),
		})
	}
	return []family{
		{"mpls/ipv4/tcp", []Layer{Ethernet{}, MPLS{Label: 100, TTL: 64}, ip4(v4A, v4B), tcp(), data()},
			ms(mplsMuts(), ipv4Muts(""), []mutation{truncs()})},
		{"mpls-mc/ipv4/udp", []Layer{Ethernet{}, MPLS{Label: 100, TTL: 64, Multicast: true}, ip4(v4A, v4B), udp(), data()}, mplsMuts()},
		{"mpls3/ipv6/udp", []Layer{Ethernet{}, MPLS{Label: 100, TTL: 64}, MPLS{Label: 200, TTL: 64}, MPLS{Label: 300, TTL: 64}, ip6(v6A, v6B), udp(), data()},
			ms(mplsMuts(), []mutation{addr("ipv6.src", "2001:db8::9")})},
		// Entropy label indicator (label 7) followed by the entropy label:
		// the default flow keys have no room for it.
		{"mpls-eli/ipv4/tcp", []Layer{Ethernet{}, MPLS{Label: 16, TTL: 64}, MPLS{Label: 7}, MPLS{Label: 0x12345}, ip4(v4A, v4B), tcp(), data()}, mplsMuts()},
	}
}

func pptp(flags uint16) GRE {
	return GRE{Flags: flags, Version: 1, Protocol: etherTypePPP, Key: 0x1234, Seq: 1, Ack: 1}
}

func greMuts(g GRE) []mutation {
	muts := []mutation{
		set("gre.c", 0, 1), set("gre.r", 0, 1), set("gre.k", 0, 1), set("gre.s", 0, 1), set("gre.a", 1),
		set("gre.ver", 0, 1, 2, 7),
		set("gre.proto", 0x0800, 0x86dd, 0x6558, 0x880b, 0x88be, 0x0000),
	}
	if g.Flags&GREKey != 0 {
		muts = append(muts, set("gre.key", 0, 1, 0x100, 0xffffffff))
	}
	if g.Flags&(GREChecksum|GRERouting) != 0 {
		muts = append(muts, set("gre.csum", 0xffff0000))
	}
	if g.Flags&GRESeq != 0 {
		muts = append(muts, set("gre.seq", 0, 0xffffffff))
	}
	return muts
}

func greFamilies() []family {
	var fs []family
	for _, flags := range []uint16{0, GREChecksum, GREKey, GRESeq, GREChecksum | GREKey, GREChecksum | GRESeq, GREKey | GRESeq, GREChecksum | GREKey | GRESeq} {
		name := "gre"
		for _, b := range []struct {
			bit uint16
			s   string
		}{{GREChecksum, "c"}, {GREKey, "k"}, {GRESeq, "s"}} {
			if flags&b.bit != 0 {
				name += "-" + b.s
			}
		}
		g := GRE{Flags: flags, Key: 0x01020304, Seq: 1, Checksum: 0xabcd0000}
		fam := family{
			name:   name + "/ipv4/tcp",
			layers: []Layer{Ethernet{}, ip4(v4A, v4B), g, ip4(v4InA, v4InB), tcp(), data()},
			muts: ms(greMuts(g), portMuts(), tunnelSwapMuts(), []mutation{
				addr("ipv4.src", "198.18.1.9"), addr("ipv4.dst", "198.19.1.9"),
				addr("outer.ipv4.src", "198.18.0.9"), addr("outer.ipv4.dst", "198.19.0.9"),
				set("outer.ipv4.ttl", 1), set("outer.ipv4.frag", 0x2000), set("ipv4.frag", 0x2000),
			}),
		}
		if flags == GREKey {
			fam.muts = append(fam.muts, truncs())
		}
		fs = append(fs, fam)
	}
	gk := GRE{Flags: GREKey, Key: 0x01020304}
	g0 := GRE{}
	innerEth := Ethernet{Dst: macC, Src: macD}
	return append(fs, []family{
		{"gre-k/ipv6/udp", []Layer{Ethernet{}, ip4(v4A, v4B), gk, ip6(v6InA, v6InB), udp(), data()},
			ms(greMuts(gk), portMuts(), tunnelSwapMuts(), ipv6StructureMuts(""), []mutation{addr("outer.ipv4.src", "198.18.0.9")})},
		{"gre/ipv6/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), g0, ip6(v6InA, v6InB), tcp(), data()},
			ms(greMuts(g0), portMuts(), tunnelSwapMuts())},
		// Routing present: the dissection ends GOOD at the GRE header.
		{"gre-r/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), GRE{Flags: GRERouting}, ip4(v4InA, v4InB), tcp(), data()},
			ms(greMuts(GRE{Flags: GRERouting}), portMuts(), tunnelSwapMuts(), []mutation{addr("ipv4.src", "198.18.1.9"), addr("outer.ipv4.src", "198.18.0.9")})},
		{"gre-k-teb/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), gk, innerEth, ip4(v4InA, v4InB), tcp(), data()},
			ms(greMuts(gk), portMuts(), tunnelSwapMuts(), []mutation{
				fill("eth.src", 0x02), fill("eth.dst", 0x06), set("eth.type", 0x86dd, 0x8100, 0x0806)})},
		{"gre-teb/ipv6/udp", []Layer{Ethernet{}, ip4(v4A, v4B), g0, innerEth, ip6(v6InA, v6InB), udp(), data()},
			ms(greMuts(g0), portMuts(), tunnelSwapMuts(), []mutation{set("eth.type", 0x0800)})},
		// The first VLAN tag anywhere is kept: inside the tunnel when the
		// outer frame is untagged, otherwise the outer one.
		{"gre-teb/vlan/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), g0, innerEth, VLAN{ID: 300, Priority: 4}, ip4(v4InA, v4InB), tcp(), data()},
			ms(portMuts(), []mutation{set("vlan.vid", 301, 0), set("vlan.pcp", 0), set("vlan.dei", 1)})},
		{"vlan/gre-teb/vlan/ipv4/tcp", []Layer{Ethernet{}, VLAN{ID: 100}, ip4(v4A, v4B), g0, innerEth, VLAN{ID: 300}, ip4(v4InA, v4InB), tcp(), data()},
			ms(portMuts(), []mutation{set("vlan.vid", 301), set("outer.vlan.vid", 101), set("vlan.pcp", 7)})},
		{"gre-teb/arp", []Layer{Ethernet{}, ip4(v4A, v4B), g0, innerEth, arp(false)},
			[]mutation{set("arp.op", 2), addr("arp.spa", v4InA), addr("outer.ipv4.src", "198.18.0.9"), set("eth.type", 0x8035)}},
		{"ipv6/gre-k/ipv4/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), gk, ip4(v4InA, v4InB), tcp(), data()},
			ms(greMuts(gk), portMuts(), tunnelSwapMuts(), ipv6Muts("outer."), []mutation{set("outer.ipv6.label", 1)})},
		// ERSPAN behind GRE: an Ethernet type the dissector does not know.
		{"gre-s/erspan", []Layer{Ethernet{}, ip4(v4A, v4B), GRE{Flags: GRESeq, Seq: 1, Protocol: 0x88be}, Payload(make([]byte, 24))},
			ms(greMuts(GRE{Flags: GRESeq}), []mutation{fill("payload", 0xff), addr("ipv4.src", "198.18.0.9")})},
	}...)
}

func pptpMuts(g GRE) []mutation {
	muts := []mutation{
		set("gre.k", 0), set("gre.a", 0, 1), set("gre.s", 0, 1), set("gre.c", 1),
		set("gre.ver", 0, 2),
		set("gre.proto", 0x880a, 0x0800),
		set("ppp.proto", 0x0021, 0x0057, 0xc021, 0x0281, 0x0000),
		set("ppp.addrctl", 0),
	}
	if g.Flags&GREKey != 0 {
		// The call ID is the key; the payload length half is zeroed.
		muts = append(muts, set("gre.callid", 0, 0x1235, 0xffff), set("gre.paylen", 0, 0xffff))
	}
	if g.Flags&GRESeq != 0 {
		muts = append(muts, set("gre.seq", 0))
	}
	if g.Flags&GREAck != 0 {
		muts = append(muts, set("gre.ack", 0))
	}
	return muts
}

func pptpFamilies() []family {
	inner := func(g GRE, rest ...Layer) []Layer {
		return append([]Layer{Ethernet{}, ip4(v4A, v4B), g, PPP{}}, rest...)
	}
	k, ks, ksa, ka := pptp(GREKey), pptp(GREKey|GRESeq), pptp(GREKey|GRESeq|GREAck), pptp(GREKey|GREAck)
	return []family{
		{"pptp-k/ipv4/tcp", inner(k, ip4(v4InA, v4InB), tcp(), data()),
			ms(pptpMuts(k), portMuts(), tunnelSwapMuts(), []mutation{addr("ipv4.src", "198.18.1.9"), addr("outer.ipv4.src", "198.18.0.9")})},
		{"pptp-ks/ipv4/tcp", inner(ks, ip4(v4InA, v4InB), tcp(), data()), ms(pptpMuts(ks), portMuts())},
		{"pptp-ksa/ipv4/udp", inner(ksa, ip4(v4InA, v4InB), udp(), data()), ms(pptpMuts(ksa), portMuts(), tunnelSwapMuts())},
		{"pptp-ka/ipv6/udp", inner(ka, ip6(v6InA, v6InB), udp(), data()), ms(pptpMuts(ka), portMuts(), ipv6StructureMuts(""))},
		// A PPP protocol other than IPv4/IPv6 leaves n_proto 0x880B: BAD.
		{"pptp-k/lcp", []Layer{Ethernet{}, ip4(v4A, v4B), k, PPP{Protocol: 0xc021}, Payload{0x09, 0x01, 0x00, 0x08, 1, 2, 3, 4}},
			ms(pptpMuts(k), []mutation{fill("payload", 0xff)})},
		// Version 1 without the key bit: the dissection stops at GRE.
		{"pptp-s/ipv4/tcp", inner(pptp(GRESeq), ip4(v4InA, v4InB), tcp(), data()),
			ms(pptpMuts(pptp(GRESeq)), portMuts(), []mutation{addr("ipv4.src", "198.18.1.9")})},
	}
}

func tunnelFamilies() []family {
	mpls16 := MPLS{Label: 16, TTL: 64}
	outer4in6 := ip6("2001:db8::1:0:0:1", "2001:db8::2:0:0:2")
	innerMuts := func() []mutation {
		return ms(portMuts(), tunnelSwapMuts(), []mutation{
			addr("ipv4.src", "198.18.1.9"), addr("ipv4.dst", "198.19.1.9"),
			set("ipv4.frag", 0x2000), set("ipv4.ttl", 1),
		})
	}
	return []family{
		{"ipip/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), ip4(v4InA, v4InB), tcp(), data()},
			ms(innerMuts(), ipv4Muts("outer."), []mutation{set("outer.ipv4.proto", 41, 47, 137), set("outer.ipv4.frag", 0x2000, 0x0001), truncs()})},
		{"ipip/udp", []Layer{Ethernet{}, ip4(v4A, v4B), ip4(v4InA, v4InB), udp(), data()},
			ms(innerMuts(), []mutation{addr("outer.ipv4.src", "198.18.0.9")})},
		{"6in4/udp", []Layer{Ethernet{}, ip4(v4A, v4B), ip6(v6InA, v6InB), udp(), data()},
			ms(portMuts(), tunnelSwapMuts(), ipv6StructureMuts(""), ipv4Muts("outer."), []mutation{
				addr("ipv6.src", "2001:db8:a::9"), set("outer.ipv4.proto", 4)})},
		// 4-in-6: the inner IPv4 addresses overwrite only the first 8 bytes
		// of the outer IPv6 addresses in the keys, and the IPv4 hash covers
		// 4 bytes more: outer source bytes 8..11.
		{"4in6/tcp", []Layer{Ethernet{}, outer4in6, ip4(v4InA, v4InB), tcp(), data()},
			ms(innerMuts(), []mutation{
				addr("outer.ipv6.src", "2001:db8::1:0:0:9", "2001:db8::3:0:0:1", "2001:db9::1:0:0:1"),
				addr("outer.ipv6.dst", "2001:db8::2:0:0:3", "2001:db8::4:0:0:2"),
				set("outer.ipv6.label", 1), set("outer.ipv6.hlim", 1)})},
		{"6in6/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), ip6(v6InA, v6InB), tcp(), data()},
			ms(portMuts(), tunnelSwapMuts(), ipv6Muts("outer."), ipv6StructureMuts("outer."), []mutation{
				addr("ipv6.src", "2001:db8:a::9"), set("ipv6.label", 7), truncs()})},
		// MPLS in IP (protocol 137): the dissection ends at the label.
		{"ipv4-mpls/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), mpls16, ip4(v4InA, v4InB), tcp(), data()},
			ms(portMuts(), swapMuts(), []mutation{set("mpls.label", 17), addr("ipv4.src", "198.18.1.9"), addr("outer.ipv4.src", "198.18.0.9")})},
		{"ipv6-mpls/ipv6/udp", []Layer{Ethernet{}, ip6(v6A, v6B), mpls16, ip6(v6InA, v6InB), udp(), data()},
			ms(portMuts(), []mutation{set("mpls.label", 17), addr("ipv6.src", "2001:db8:a::9"), addr("outer.ipv6.src", "2001:db8::9")})},
		// Nested tunnels.
		{"gre-k/ipip/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), GRE{Flags: GREKey, Key: 9}, ip4(v4InA, v4InB), ip4("198.18.2.1", "198.19.2.2"), tcp(), data()},
			ms(portMuts(), tunnelSwapMuts(), []mutation{set("gre.key", 10), addr("ipv4.src", "198.18.2.9"), addr("outer.ipv4.src", "198.18.0.9")})},
		{"ipip/gre-k/ipv6/udp", []Layer{Ethernet{}, ip4(v4A, v4B), ip4(v4InA, v4InB), GRE{Flags: GREKey, Key: 9}, ip6(v6InA, v6InB), udp(), data()},
			ms(portMuts(), tunnelSwapMuts(), []mutation{set("gre.key", 10), addr("ipv6.src", "2001:db8:a::9")})},
		{"6in4/gre/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), ip6(v6A, v6B), GRE{}, ip4(v4InA, v4InB), tcp(), data()},
			ms(portMuts(), tunnelSwapMuts(), []mutation{addr("ipv6.src", "2001:db8::9"), addr("ipv6.dst", "2001:db8::1:0:0:2")})},
		{"gre-teb/gre-k/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), GRE{}, Ethernet{Dst: macC, Src: macD}, ip4(v4InA, v4InB), GRE{Flags: GREKey, Key: 9}, ip4("198.18.2.1", "198.19.2.2"), tcp(), data()},
			ms(portMuts(), tunnelSwapMuts(), []mutation{set("gre.key", 10)})},
		{"6in6/label/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), IPv6{HopLimit: 64, FlowLabel: 5, Src: netip.MustParseAddr(v6InA), Dst: netip.MustParseAddr(v6InB)}, tcp(), data()},
			ms(portMuts(), []mutation{set("ipv6.label", 6, 0), addr("ipv6.src", "2001:db8:a::9")})},
	}
}

// depthFamilies nest headers around the limit of 15 re-dispatches, varying
// the innermost ports and addresses: they matter only while the dissector
// still reaches them.
func depthFamilies() []family {
	var fs []family
	innermost := func(ipv string) []mutation {
		muts := []mutation{set("l4.sport", 1026, 2000, 65535), set("l4.dport", 443), swap(swapPorts)}
		if ipv == "ipv4" {
			return append(muts, addr("ipv4.src", "198.18.99.9"), addr("outer.ipv4.src", "198.18.0.9"))
		}
		return append(muts, addr("ipv6.src", "2001:db8:99::9"), addr("outer.ipv6.src", "2001:db8::9"))
	}
	for n := 13; n <= 18; n++ {
		vlans := []Layer{Ethernet{}}
		hbhs := []Layer{Ethernet{}, ip6(v6A, v6B)}
		ipips := []Layer{Ethernet{}, ip4(v4A, v4B)}
		gres := []Layer{Ethernet{}, ip4(v4A, v4B)}
		v6s := []Layer{Ethernet{}, ip6(v6A, v6B)}
		for i := 1; i <= n; i++ {
			vlans = append(vlans, VLAN{ID: uint16(i)})
			hbhs = append(hbhs, IPv6Options{Type: ipProtoHopByHop})
			inner := fmt.Sprintf("198.18.%d.1", i)
			ipips = append(ipips, ip4(inner, fmt.Sprintf("198.19.%d.2", i)))
			gres = append(gres, GRE{Flags: GREKey, Key: uint32(i)}, ip4(inner, fmt.Sprintf("198.19.%d.2", i)))
			v6s = append(v6s, ip6(fmt.Sprintf("2001:db8:%x::1", i), fmt.Sprintf("2001:db8:%x::2", i)))
		}
		vlans = append(vlans, ip4(v4A, v4B), tcp(), data())
		hbhs = append(hbhs, tcp(), data())
		ipips = append(ipips, tcp(), data())
		gres = append(gres, tcp(), data())
		v6s = append(v6s, udp(), data())
		fs = append(fs,
			family{fmt.Sprintf("depth/vlan/n=%d", n), vlans, ms(innermost("ipv4"), []mutation{set("outer.vlan.vid", 99), set("vlan.vid", 99), set("vlan.type", 0x86dd)})},
			family{fmt.Sprintf("depth/ipv6-hbh/n=%d", n), hbhs, ms(innermost("ipv6"), []mutation{set("hbh.next", 17), set("outer.hbh.len", 1)})},
			family{fmt.Sprintf("depth/ipip/n=%d", n), ipips, ms(innermost("ipv4"), []mutation{set("ipv4.proto", 17), set("outer.ipv4.frag", 0x2000)})},
			family{fmt.Sprintf("depth/gre-k/n=%d", n), gres, ms(innermost("ipv4"), []mutation{set("gre.key", 99), set("outer.gre.key", 99), set("outer.ipv4.frag", 0x2000)})},
			family{fmt.Sprintf("depth/6in6/n=%d", n), v6s, ms(innermost("ipv6"), []mutation{set("ipv6.next", 6), set("outer.ipv6.label", 1)})},
		)
	}
	return fs
}

func arp(reverse bool) ARP {
	op := uint16(1)
	if reverse {
		op = 3
	}
	return ARP{Reverse: reverse, Op: op, SenderMAC: macA,
		SenderAddr: netip.MustParseAddr(v4A), TargetAddr: netip.MustParseAddr(v4B)}
}

// tipc is a TIPC data message; word 0 is version 2, header size 6 words,
// user 0, size 40: not a keep-alive.
func tipc() TIPC {
	return TIPC{Word0: 0x40C00028, Word1: 1, Word2: 2, OrigNode: 0x01001001, DestNode: 0x01001002}
}

// linkFamilies are the Ethernet types other than IP, PPPoE, VLAN and MPLS.
func linkFamilies() []family {
	// FCoE: 14-byte encapsulation header (version, reserved, SOF), 24-byte
	// FC frame header, then data.
	fcoe := append(make([]byte, 13), 0x2e) // SOFi3
	fcoe = append(fcoe, 0x06, 0, 0, 1, 0, 0, 0, 2, 0x08, 0x29, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0)
	fcoe = append(fcoe, []byte("fibrechannel")...)
	// PTP Sync: message type 0, version 2, length 44.
	ptp := append([]byte{0x00, 0x02, 0x00, 0x2c}, make([]byte, 40)...)
	// CFM CCM: MD level 5, version 0, opcode 1, flags, first TLV offset 70.
	cfm := append([]byte{0xa0, 0x01, 0x04, 70}, make([]byte, 70)...)
	cfm = append(cfm, 0x00)
	unknown := make([]byte, 46)
	copy(unknown, "unknown ethertype payload")
	bpdu := []byte{0, 0, 0, 0, 0, 0x80, 0, 0x02, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0x80, 0, 0x02, 0, 0, 0, 0, 0x02, 0x80, 0x01, 0, 0, 0x14, 0, 0x02, 0, 0x0f, 0}
	innerEth := Ethernet{Dst: macC, Src: macD}
	batmanMuts := func() []mutation {
		return []mutation{
			set("batman.type", 0x41, 0x20), set("batman.ver", 14, 16), set("batman.ttl", 1), set("batman.ttvn", 9),
			fill("batman.dest", 0x06), set("eth.type", 0x86dd, 0x8100, 0x0806),
		}
	}
	return []family{
		{"arp", []Layer{Ethernet{}, arp(false)}, []mutation{
			set("arp.op", 2), addr("arp.spa", "198.18.0.9"), addr("arp.tpa", "198.19.0.9"), fill("arp.sha", 0x06),
			set("arp.ptype", etherTypeIPv6), fill("eth.src", 0x06), fill("eth.dst", 0x02),
			set("eth.type", etherTypeRARP), pad(0, 18), pad(0xff, 18), truncs()}},
		{"rarp", []Layer{Ethernet{}, arp(true)}, []mutation{
			set("arp.op", 4), addr("arp.tpa", "198.19.0.9"), set("eth.type", etherTypeARP), truncs()}},
		{"fcoe", []Layer{Ethernet{}, EtherPayload{Type: etherTypeFCoE, Data: fcoe}}, []mutation{
			fill("payload", 0, 0xff), pad(0, 8), set("outer.eth.type", 0x8902), truncs()}},
		{"tipc", []Layer{Ethernet{}, tipc()}, []mutation{
			set("tipc.orig", 0, 0x01001002, 0x01001009, 0xffffffff), set("tipc.dest", 0x01001009),
			set("tipc.w0", 0x40C00030, 0x50C00028, 0x4EC00028, 0x40C80028),
			set("tipc.w1", 0xffffffff), set("tipc.w2", 0), set("tipc.w5", 7), pad(0, 22), truncs()}},
		{"batman/ipv4/tcp", []Layer{Ethernet{}, BatmanUnicast{TTL: 50, TTVN: 1, Dest: macB}, innerEth, ip4(v4A, v4B), tcp(), data()},
			ms(batmanMuts(), portMuts(), swapMuts(), []mutation{addr("ipv4.src", "198.18.0.9"), truncs()})},
		{"batman/vlan/ipv6/udp", []Layer{Ethernet{}, BatmanUnicast{TTL: 50, TTVN: 1, Dest: macB}, innerEth, VLAN{ID: 42}, ip6(v6A, v6B), udp(), data()},
			ms(batmanMuts(), portMuts(), []mutation{set("vlan.vid", 43), set("vlan.dei", 1)})},
		{"vlan/batman/ipv4/udp", []Layer{Ethernet{}, VLAN{ID: 42}, BatmanUnicast{TTL: 50, TTVN: 1, Dest: macB}, innerEth, ip4(v4A, v4B), udp(), data()},
			ms(portMuts(), []mutation{set("batman.ver", 14), set("vlan.vid", 43)})},
		{"hsr/ipv4/tcp", []Layer{Ethernet{}, HSRTag{PathSize: 0x0040, Seq: 1}, ip4(v4A, v4B), tcp(), data()},
			ms(portMuts(), swapMuts(), []mutation{
				set("hsr.seq", 2, 0xffff), set("hsr.pathsize", 0x1000, 0xffff), set("hsr.type", 0x86dd, 0x8100, 0x892f),
				set("eth.type", etherTypePRP), addr("ipv4.src", "198.18.0.9"), truncs()})},
		{"prp/ipv6/udp", []Layer{Ethernet{}, HSRTag{PRP: true, PathSize: 0x0040, Seq: 1}, ip6(v6A, v6B), udp(), data()},
			ms(portMuts(), []mutation{set("hsr.seq", 2), set("hsr.type", 0x0800), set("eth.type", etherTypeHSR)})},
		{"vlan/hsr/ipv4/udp", []Layer{Ethernet{}, VLAN{ID: 5}, HSRTag{PathSize: 0x0040, Seq: 1}, ip4(v4A, v4B), udp(), data()},
			ms(portMuts(), []mutation{set("hsr.seq", 2), set("vlan.vid", 6)})},
		{"ptp", []Layer{Ethernet{}, EtherPayload{Type: etherTypePTP, Data: ptp}}, []mutation{
			fill("payload", 0, 0xff), pad(0, 16), set("outer.eth.type", 0x88f8), truncs()}},
		{"vlan/ptp", []Layer{Ethernet{}, VLAN{ID: 3, Priority: 7}, EtherPayload{Type: etherTypePTP, Data: ptp}}, []mutation{
			fill("payload", 0xff), set("vlan.vid", 4)}},
		// CFM reads nothing: no length matters.
		{"cfm", []Layer{Ethernet{}, EtherPayload{Type: etherTypeCFM, Data: cfm}}, []mutation{
			fill("payload", 0, 0xff), set("outer.eth.type", 0x88b5), pad(0, 8), trunc(14, 15, 18)}},
		// 802.3 length frames: FF FF after the length makes ETH_P_802_3
		// (0x0001), anything else ETH_P_802_2 (0x0004); the dissector knows
		// neither.
		{"802.3/llc", []Layer{Ethernet{}, LLC{DSAP: 0x42, SSAP: 0x42, Control: 0x03}, Payload(bpdu)}, []mutation{
			set("eth.type", 0, 0x0010, 0x05ff, 0x0600), set("llc.dsap", 0xff, 0xaa), fill("payload", 0xff), pad(0, 8), truncs()}},
		{"802.3/novell", []Layer{Ethernet{}, Novell{}, Payload("ipx")}, []mutation{
			set("ipx.csum", 0xfffe, 0x7fff, 0x0000), set("eth.type", 0x05ff, 0x0600), set("ipx.len", 0), truncs()}},
		{"ethertype/0x88b5", []Layer{Ethernet{}, EtherPayload{Type: 0x88b5, Data: unknown}}, []mutation{
			// Local experimental, LLDP, MACsec, legacy QinQ, 802.1ah,
			// NSH, PPPoE discovery, ERSPAN, slow protocols, Wake-on-LAN,
			// the lowest and highest Ethernet types.
			set("eth.type", 0x88b6, 0x88cc, 0x88e5, 0x9100, 0x9200, 0x88e7, 0x894f, etherTypePPPoED, 0x88be, 0x22eb, 0x8809, 0x0842, 0x0600, 0xffff),
			fill("payload", 0, 0xff), fill("eth.src", 0x06), trunc(14, 15, 16, 59)}},
	}
}
