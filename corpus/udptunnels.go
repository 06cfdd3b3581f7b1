package corpus

import "cmp"

// UDP tunnel headers (the payload of a UDP layer): what the flow dissector's
// opt-in inner-flow descent reads (dissect.Descent). Direct FOU has no
// header of its own: a UDP layer followed by the inner IP header.

// VXLAN flag words (RFC 7348; the GBP and GPE extensions set other bits).
const (
	VXLANFlagVNI = 0x08000000 // I: the VNI is valid
	VXLANFlagGBP = 0x80000000 // G: group policy (VXLAN-GBP)
	VXLANFlagGPE = 0x04000000 // P: next protocol (VXLAN-GPE)
)

// VXLAN is a VXLAN header: the flags word as on the wire, then the VNI.
type VXLAN struct {
	Flags uint32
	VNI   uint32 // 24 bits
}

func (v VXLAN) appendHeader(h *header, _ Layer, _ int) {
	h.u32("vxlan.flags", v.Flags)
	h.u32("vxlan.vni", v.VNI<<8)
}

// Geneve is a Geneve header (RFC 8926) with Options (a multiple of 4 bytes;
// OptLen, in words, is taken from them when zero). A zero Protocol is taken
// from the next layer (0x6558 for Ethernet).
type Geneve struct {
	Version  uint8
	OptLen   uint8
	OAM      bool
	Critical bool
	Protocol uint16
	VNI      uint32
	Options  []byte
}

func (g Geneve) appendHeader(h *header, next Layer, _ int) {
	optLen := cmp.Or(g.OptLen, uint8(len(g.Options)/4))
	h.u8("geneve.veropt", g.Version<<6|optLen&0x3f)
	h.bits("geneve.ver", 1, 0xC0)
	h.bits("geneve.optlen", 1, 0x3F)
	var b1 uint8
	if g.OAM {
		b1 |= 0x80
	}
	if g.Critical {
		b1 |= 0x40
	}
	h.u8("geneve.flags", b1)
	h.bits("geneve.oam", 1, 0x80)
	h.u16("geneve.proto", cmp.Or(g.Protocol, nextEtherType(next)))
	h.u32("geneve.vni", g.VNI<<8)
	if len(g.Options) > 0 {
		h.bytes("geneve.opts", g.Options)
	}
}

// GTP-U flag bits (3GPP TS 29.281): version 1 in the top three bits, PT,
// and the E, S and PN bits that add the optional fields.
const (
	GTPFlagsV1 = 0x30 // version 1, PT 1 (GTP, not GTP')
	GTPFlagE   = 0x04
	GTPFlagS   = 0x02
	GTPFlagPN  = 0x01
)

// GTPU is a GTPv1-U header. A zero Flags is GTPFlagsV1 and a zero Type is
// 0xFF (G-PDU); with E, S or PN set, the 4 optional bytes (sequence, N-PDU,
// next extension type 0) follow. The length is computed.
type GTPU struct {
	Flags uint8
	Type  uint8
	TEID  uint32
}

func (g GTPU) appendHeader(h *header, _ Layer, rest int) {
	flags := cmp.Or(g.Flags, GTPFlagsV1)
	opt := flags&(GTPFlagE|GTPFlagS|GTPFlagPN) != 0
	n := rest
	if opt {
		n += 4
	}
	h.u8("gtp.flags", flags)
	h.bits("gtp.ver", 1, 0xE0)
	h.bits("gtp.pt", 1, 0x10)
	h.bits("gtp.e", 1, GTPFlagE)
	h.bits("gtp.s", 1, GTPFlagS)
	h.bits("gtp.pn", 1, GTPFlagPN)
	h.u8("gtp.type", cmp.Or(g.Type, 0xFF))
	h.u16("gtp.len", uint16(n))
	h.u32("gtp.teid", g.TEID)
	if opt {
		h.u32("gtp.opt", 0)
	}
}

// GUE is a GUE header (draft-ietf-intarea-gue) of version Version (0 or 1
// for the variants), with Options (Hlen words, taken from them when zero).
// A zero Proto is taken from the next layer.
type GUE struct {
	Version uint8
	Control bool
	Hlen    uint8
	Proto   uint8
	Flags   uint16
	Options []byte
}

func (g GUE) appendHeader(h *header, next Layer, _ int) {
	hlen := cmp.Or(g.Hlen, uint8(len(g.Options)/4))
	b0 := g.Version<<6 | hlen&0x1f
	if g.Control {
		b0 |= 0x20
	}
	h.u8("gue.b0", b0)
	h.bits("gue.ver", 1, 0xC0)
	h.bits("gue.c", 1, 0x20)
	h.bits("gue.hlen", 1, 0x1F)
	h.u8("gue.proto", cmp.Or(g.Proto, nextIPProto(next)))
	h.u16("gue.flags", g.Flags)
	if len(g.Options) > 0 {
		h.bytes("gue.opts", g.Options)
	}
}

// The FOU table the UDP tunnel families assume: GUE on GUEPort, direct FOU
// carrying IPv4 on FOUPortIPIP and IPv6 on FOUPortIPv6. The other tunnels
// use their well-known ports.
const (
	GUEPort     = 6080
	FOUPortIPIP = 5555
	FOUPortIPv6 = 5556
)

// MissPrefix starts the name of a mutation that makes a UDP tunnel frame a
// near miss of the descent's match: one condition fails, so the frame
// keeps its outer keys under any descent policy.
const MissPrefix = "miss:"

// miss marks the variants of m as near misses.
func miss(m mutation) mutation {
	return func(base []byte, fields []field, emit func(string, []byte)) {
		m(base, fields, func(name string, frame []byte) { emit(MissPrefix+name, frame) })
	}
}

// misses marks every mutation of ms as a near miss.
func misses(ms ...mutation) []mutation {
	out := make([]mutation, len(ms))
	for i, m := range ms {
		out[i] = miss(m)
	}
	return out
}

// udpTunnelFamilies are the UDP tunnels the opt-in descent enters, each
// with every truncation, near misses for each match condition, and the
// inner flow's mutations. Outer source ports are fixed per family (the
// descent matches by destination port alone).
func udpTunnelFamilies() []family {
	inner := func() []mutation {
		return ms(portMuts(), tunnelSwapMuts(), []mutation{addr("ipv4.src", "198.18.1.9"), set("ipv4.frag", 0x2000)})
	}
	inner6 := func() []mutation {
		return ms(portMuts(), tunnelSwapMuts(), []mutation{addr("ipv6.src", "2001:db8:a::9"), set("ipv6.label", 7)})
	}
	vx := func(dport uint16) UDP { return UDP{Src: 49152, Dst: dport} }
	vxlan := VXLAN{Flags: VXLANFlagVNI, VNI: 42}
	teb := Ethernet{Dst: macC, Src: macD}
	geneve := Geneve{Protocol: etherTypeTEB, VNI: 42}
	return []family{
		{"vxlan/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), vx(4789), vxlan, teb, ip4(v4InA, v4InB), tcp(), data()},
			ms(inner(), []mutation{truncs(), addr("outer.ipv4.src", "198.18.0.9"), set("outer.l4.sport", 49153), set("vxlan.vni", 43<<8)},
				misses(set("outer.l4.dport", 4790, 8472), set("vxlan.flags", VXLANFlagVNI|VXLANFlagGBP, VXLANFlagVNI|VXLANFlagGPE, 0, VXLANFlagVNI|1),
					set("eth.type", 0x0806), set("outer.ipv4.frag", 0x2000)))},
		{"vlan/vxlan/ipv6/udp", []Layer{Ethernet{}, VLAN{ID: 100}, ip4(v4A, v4B), vx(4789), vxlan, teb, ip6(v6InA, v6InB), udp(), data()},
			ms(inner6(), []mutation{truncs(), set("vlan.vid", 101)})},
		{"vxlan/vlan/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), vx(4789), vxlan, teb, VLAN{ID: 7}, ip4(v4InA, v4InB), tcp(), data()},
			append(misses(set("l4.sport", 1026)), set("outer.l4.sport", 49153))},
		{"ipv6/vxlan/ipv4/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), vx(4789), vxlan, teb, ip4(v4InA, v4InB), tcp(), data()},
			append(misses(set("l4.sport", 1026)), set("outer.l4.sport", 49153))},
		{"geneve/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), vx(6081), geneve, teb, ip4(v4InA, v4InB), tcp(), data()},
			ms(inner(), []mutation{truncs(), set("geneve.vni", 43<<8), set("geneve.flags", 0x40, 0x3f)},
				misses(set("outer.l4.dport", 6082), set("geneve.ver", 1, 3), set("geneve.oam", 1), set("geneve.proto", 0x0800, 0x86DD), set("eth.type", 0x8100)))},
		{"geneve-opt/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), vx(6081), Geneve{Protocol: etherTypeTEB, VNI: 42, Options: []byte{0x01, 0x02, 0x03, 0x01, 0, 0, 0, 9}}, teb, ip4(v4InA, v4InB), tcp(), data()},
			append(misses(set("l4.sport", 1026), truncs()), set("outer.l4.sport", 49153))},
		{"ipv6/geneve/ipv6/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), vx(6081), geneve, teb, ip6(v6InA, v6InB), tcp(), data()},
			append(misses(set("l4.sport", 1026)), set("outer.l4.sport", 49153))},
		{"gtpu/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), UDP{Src: 2152, Dst: 2152}, GTPU{TEID: 0x1001}, ip4(v4InA, v4InB), tcp(), data()},
			ms(inner(), []mutation{truncs(), set("gtp.teid", 0x1002), set("gtp.flags", GTPFlagsV1|0x08)},
				misses(set("outer.l4.dport", 2123, 2153), set("gtp.e", 1), set("gtp.s", 1), set("gtp.pn", 1), set("gtp.type", 1, 0x1A, 0xFE),
					set("gtp.ver", 0, 2), set("gtp.pt", 0), set("ipv4.verihl", 0x55, 0x35)))},
		{"gtpu/ipv6/udp", []Layer{Ethernet{}, ip4(v4A, v4B), UDP{Src: 2152, Dst: 2152}, GTPU{TEID: 0x1001}, ip6(v6InA, v6InB), udp(), data()},
			ms(inner6(), []mutation{truncs()})},
		{"gtpu-s/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), UDP{Src: 2152, Dst: 2152}, GTPU{Flags: GTPFlagsV1 | GTPFlagS, TEID: 0x1001}, ip4(v4InA, v4InB), tcp(), data()},
			append(misses(set("l4.sport", 1026)), set("outer.l4.sport", 49153))},
		{"gtpv0/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), UDP{Src: 2152, Dst: 2152}, GTPU{Flags: 0x10, TEID: 0x1001}, ip4(v4InA, v4InB), tcp(), data()},
			append(misses(set("l4.sport", 1026)), set("outer.l4.sport", 49153))},
		{"ipv6/gtpu/ipv4/tcp", []Layer{Ethernet{}, ip6(v6A, v6B), UDP{Src: 2152, Dst: 2152}, GTPU{TEID: 0x1001}, ip4(v4InA, v4InB), tcp(), data()},
			append(misses(set("l4.sport", 1026)), set("outer.l4.sport", 49153))},
		{"gue/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), vx(GUEPort), GUE{}, ip4(v4InA, v4InB), tcp(), data()},
			ms(inner(), []mutation{truncs(), set("gue.flags", 1)},
				misses(set("outer.l4.dport", GUEPort+1), set("gue.ver", 1, 2), set("gue.c", 1), set("gue.flags", 2, 0x8000), set("gue.proto", 47, 17)))},
		{"ipv6/gue-opt/ipv6/udp", []Layer{Ethernet{}, ip6(v6A, v6B), vx(GUEPort), GUE{Flags: 1, Options: []byte{0, 0, 0, 0}}, ip6(v6InA, v6InB), udp(), data()},
			ms(inner6(), []mutation{truncs(), set("gue.hlen", 0)}, misses(set("gue.hlen", 31)))},
		{"fou/ipv4/tcp", []Layer{Ethernet{}, ip4(v4A, v4B), vx(FOUPortIPIP), ip4(v4InA, v4InB), tcp(), data()},
			ms(inner(), []mutation{truncs()}, misses(set("outer.l4.dport", FOUPortIPIP+2)))},
		{"ipv6/fou/ipv6/udp", []Layer{Ethernet{}, ip6(v6A, v6B), vx(FOUPortIPv6), ip6(v6InA, v6InB), udp(), data()},
			ms(inner6(), []mutation{truncs()})},
	}
}
