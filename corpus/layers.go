package corpus

import (
	"cmp"
	"encoding/binary"
	"net/netip"
)

// A Layer is one protocol header of a frame under construction. Stack lays
// the layers of a frame one after another; each header fills in what it can
// learn from the layer after it (Ethernet type, IP protocol, PPP protocol,
// lengths) unless the field is set explicitly.
type Layer interface {
	// appendHeader appends the header to h. next is the layer that follows
	// (nil for the last one) and rest the number of bytes after the header.
	appendHeader(h *header, next Layer, rest int)
}

// Stack returns the frame made of layers, outermost first.
func Stack(layers ...Layer) []byte {
	data, _ := stack(layers...)
	return data
}

// A field is a named run of header bytes in a built frame, the unit that the
// mutation families change. Mask selects the bits of a bit field within the
// big-endian value of the Len bytes (0: all of them).
type field struct {
	Name string
	Off  int
	Len  int
	Mask uint64
}

// header collects one layer's bytes and fields.
type header struct {
	b      []byte
	fields []field
}

// stack builds the frame from the innermost layer outwards, so that each
// header knows how many bytes follow it, and returns it with the fields of
// all its headers at their offsets in the frame.
func stack(layers ...Layer) ([]byte, []field) {
	var data []byte
	var fields []field
	for i := len(layers) - 1; i >= 0; i-- {
		var next Layer
		if i+1 < len(layers) {
			next = layers[i+1]
		}
		var h header
		layers[i].appendHeader(&h, next, len(data))
		for j := range fields {
			fields[j].Off += len(h.b)
		}
		fields = append(h.fields, fields...)
		data = append(h.b, data...)
	}
	return data, fields
}

func (h *header) record(name string, n int, mask uint64) {
	h.fields = append(h.fields, field{Name: name, Off: len(h.b) - n, Len: n, Mask: mask})
}

func (h *header) u8(name string, v uint8) {
	h.b = append(h.b, v)
	h.record(name, 1, 0)
}

func (h *header) u16(name string, v uint16) {
	h.b = binary.BigEndian.AppendUint16(h.b, v)
	h.record(name, 2, 0)
}

func (h *header) u32(name string, v uint32) {
	h.b = binary.BigEndian.AppendUint32(h.b, v)
	h.record(name, 4, 0)
}

func (h *header) bytes(name string, v []byte) {
	h.b = append(h.b, v...)
	h.record(name, len(v), 0)
}

// bits records a bit field inside the last n bytes appended.
func (h *header) bits(name string, n int, mask uint64) {
	h.record(name, n, mask)
}

// Interfaces through which a header learns the protocol number of the layer
// after it.
type (
	etherTyper interface{ etherType() uint16 }
	ipProtoer  interface{ ipProto() uint8 }
	pppProtoer interface{ pppProto() uint16 }
	// lengthTyped layers follow an 802.3 header, whose type field holds
	// the length of the rest of the frame.
	lengthTyped interface{ lengthTyped() }
)

func nextEtherType(next Layer) uint16 {
	if n, ok := next.(etherTyper); ok {
		return n.etherType()
	}
	return 0
}

func nextIPProto(next Layer) uint8 {
	if n, ok := next.(ipProtoer); ok {
		return n.ipProto()
	}
	return ipProtoNone
}

func nextPPPProto(next Layer) uint16 {
	if n, ok := next.(pppProtoer); ok {
		return n.pppProto()
	}
	return 0
}

// Ethernet types and IP protocol numbers the corpus uses.
const (
	etherTypeIPv4      = 0x0800
	etherTypeARP       = 0x0806
	etherTypeTEB       = 0x6558 // transparent Ethernet bridging, inside GRE
	etherTypeRARP      = 0x8035
	etherType8021Q     = 0x8100
	etherTypePPP       = 0x880B // PPTP's GRE protocol
	etherTypeIPv6      = 0x86DD
	etherTypeMPLS      = 0x8847
	etherTypeMPLSMC    = 0x8848
	etherTypePPPoED    = 0x8863
	etherTypePPPoES    = 0x8864
	etherType8021AD    = 0x88A8
	etherTypeTIPC      = 0x88CA
	etherTypePTP       = 0x88F7
	etherTypePRP       = 0x88FB
	etherTypeCFM       = 0x8902
	etherTypeFCoE      = 0x8906
	etherTypeHSR       = 0x892F
	etherTypeBatmanAdv = 0x4305

	ipProtoHopByHop = 0
	ipProtoICMP     = 1
	ipProtoIPIP     = 4
	ipProtoTCP      = 6
	ipProtoDCCP     = 33
	ipProtoIPv6     = 41
	ipProtoRouting  = 43
	ipProtoFragment = 44
	ipProtoGRE      = 47
	ipProtoESP      = 50
	ipProtoAH       = 51
	ipProtoICMPv6   = 58
	ipProtoNone     = 59 // IPv6 "no next header"
	ipProtoDestOpts = 60
	ipProtoSCTP     = 132
	ipProtoUDPLite  = 136
	ipProtoMPLS     = 137
	ipProtoUDP      = 17

	pppIPv4   = 0x0021
	pppIPv6   = 0x0057
	pppMPLS   = 0x0281
	pppMPLSMC = 0x0283
)

// Locally administered MAC addresses used by default.
var (
	macA = [6]byte{0x02, 0, 0, 0, 0, 0x01}
	macB = [6]byte{0x02, 0, 0, 0, 0, 0x02}
)

// Ethernet is an Ethernet II header. Zero MACs become 02:00:00:00:00:02
// (destination) and 02:00:00:00:00:01 (source). A zero Type is taken from the
// next layer, or is the 802.3 length when the next layer is LLC or Novell.
type Ethernet struct {
	Dst, Src [6]byte
	Type     uint16
}

func (e Ethernet) etherType() uint16 { return etherTypeTEB }

func (e Ethernet) appendHeader(h *header, next Layer, rest int) {
	dst, src := e.Dst, e.Src
	if dst == [6]byte{} {
		dst = macB
	}
	if src == [6]byte{} {
		src = macA
	}
	h.bytes("eth.dst", dst[:])
	h.bytes("eth.src", src[:])
	typ := e.Type
	if _, ok := next.(lengthTyped); ok && typ == 0 {
		typ = uint16(rest)
	}
	h.u16("eth.type", cmp.Or(typ, nextEtherType(next)))
}

// LLC is an IEEE 802.2 LLC header after an 802.3 length field.
type LLC struct {
	DSAP, SSAP, Control uint8
}

func (LLC) lengthTyped() {}

func (l LLC) appendHeader(h *header, _ Layer, _ int) {
	h.u8("llc.dsap", l.DSAP)
	h.u8("llc.ssap", l.SSAP)
	h.u8("llc.control", l.Control)
}

// Novell is a "raw 802.3" IPX header: it starts with the checksum FF FF,
// which is how the kernel tells it from LLC (ETH_P_802_3 instead of
// ETH_P_802_2).
type Novell struct {
	Dst, Src [12]byte
}

func (Novell) lengthTyped() {}

func (n Novell) appendHeader(h *header, _ Layer, rest int) {
	h.u16("ipx.csum", 0xFFFF)
	h.u16("ipx.len", uint16(30+rest))
	h.u8("ipx.tc", 0)
	h.u8("ipx.type", 4)
	h.bytes("ipx.dst", n.Dst[:])
	h.bytes("ipx.src", n.Src[:])
}

// VLAN is an 802.1Q or 802.1AD tag. The TPID is written by the layer before
// (its type field); zero means 0x8100. A zero Type is taken from the next
// layer.
type VLAN struct {
	TPID     uint16
	Priority uint8 // PCP, 3 bits
	DEI      bool
	ID       uint16 // 12 bits
	Type     uint16
}

func (v VLAN) etherType() uint16 {
	if v.TPID == 0 {
		return etherType8021Q
	}
	return v.TPID
}

func (v VLAN) appendHeader(h *header, next Layer, _ int) {
	tci := uint16(v.Priority)<<13 | v.ID&0x0FFF
	if v.DEI {
		tci |= 0x1000
	}
	h.u16("vlan.tci", tci)
	h.bits("vlan.pcp", 2, 0xE000)
	h.bits("vlan.dei", 2, 0x1000)
	h.bits("vlan.vid", 2, 0x0FFF)
	typ := cmp.Or(v.Type, nextEtherType(next))
	h.u16("vlan.type", typ)
}

// PPPoE is a PPPoE session header with its PPP protocol field. A zero
// Protocol is taken from the next layer. Compressed writes the protocol in
// one byte (PPP protocol-field compression), which only works for protocols
// below 0x100.
type PPPoE struct {
	Session    uint16
	Protocol   uint16
	Compressed bool
}

func (p PPPoE) etherType() uint16 { return etherTypePPPoES }

func (p PPPoE) appendHeader(h *header, next Layer, rest int) {
	proto := cmp.Or(p.Protocol, nextPPPProto(next))
	h.u8("pppoe.vertype", 0x11)
	h.u8("pppoe.code", 0)
	h.u16("pppoe.session", p.Session)
	if p.Compressed {
		h.u16("pppoe.len", uint16(rest+1))
		h.u8("pppoe.proto", uint8(proto))
		return
	}
	h.u16("pppoe.len", uint16(rest+2))
	h.u16("pppoe.proto", proto)
}

// PPP is the PPP header inside PPTP's GRE: address FF, control 03, protocol.
// A zero Protocol is taken from the next layer.
type PPP struct {
	Protocol uint16
}

func (p PPP) etherType() uint16 { return etherTypePPP }

func (p PPP) appendHeader(h *header, next Layer, _ int) {
	proto := cmp.Or(p.Protocol, nextPPPProto(next))
	h.u16("ppp.addrctl", 0xFF03)
	h.u16("ppp.proto", proto)
}

// MPLS is one label stack entry. The bottom-of-stack bit is set unless the
// next layer is another MPLS entry. Multicast makes the layer before announce
// Ethernet type 0x8848 instead of 0x8847.
type MPLS struct {
	Label     uint32 // 20 bits
	TC        uint8  // 3 bits
	TTL       uint8
	Multicast bool
}

func (m MPLS) etherType() uint16 {
	if m.Multicast {
		return etherTypeMPLSMC
	}
	return etherTypeMPLS
}

func (m MPLS) pppProto() uint16 {
	if m.Multicast {
		return pppMPLSMC
	}
	return pppMPLS
}

func (m MPLS) ipProto() uint8 { return ipProtoMPLS }

func (m MPLS) appendHeader(h *header, next Layer, _ int) {
	entry := m.Label<<12 | uint32(m.TC&7)<<9 | uint32(m.TTL)
	if _, more := next.(MPLS); !more {
		entry |= 0x100
	}
	h.u32("mpls.entry", entry)
	h.bits("mpls.label", 4, 0xFFFFF000)
	h.bits("mpls.tc", 4, 0x00000E00)
	h.bits("mpls.s", 4, 0x00000100)
	h.bits("mpls.ttl", 4, 0x000000FF)
}

// IPv4 is an IPv4 header. Options are padded with zeros (end of option
// list) to a multiple of 4 bytes and set IHL; the total length and the header
// checksum are computed; a zero Protocol is taken from the next layer. Frag
// holds the flags and fragment offset word as on the wire (0x4000 DF,
// 0x2000 MF, 0x1FFF offset in 8-byte units).
type IPv4 struct {
	TOS      uint8
	ID       uint16
	Frag     uint16
	TTL      uint8
	Protocol uint8
	Src, Dst netip.Addr
	Options  []byte
}

func (ip IPv4) etherType() uint16 { return etherTypeIPv4 }
func (ip IPv4) ipProto() uint8    { return ipProtoIPIP }
func (ip IPv4) pppProto() uint16  { return pppIPv4 }

func (ip IPv4) appendHeader(h *header, next Layer, rest int) {
	opts := append([]byte(nil), ip.Options...)
	for len(opts)%4 != 0 {
		opts = append(opts, 0)
	}
	hlen := 20 + len(opts)
	proto := cmp.Or(ip.Protocol, nextIPProto(next))
	start := len(h.b)
	h.u8("ipv4.verihl", 0x40|uint8(hlen/4))
	h.bits("ipv4.ver", 1, 0xF0)
	h.bits("ipv4.ihl", 1, 0x0F)
	h.u8("ipv4.tos", ip.TOS)
	h.u16("ipv4.totlen", uint16(hlen+rest))
	h.u16("ipv4.id", ip.ID)
	h.u16("ipv4.frag", ip.Frag)
	h.bits("ipv4.df", 2, 0x4000)
	h.bits("ipv4.mf", 2, 0x2000)
	h.bits("ipv4.fragoff", 2, 0x1FFF)
	h.u8("ipv4.ttl", ip.TTL)
	h.u8("ipv4.proto", proto)
	h.u16("ipv4.csum", 0)
	h.bytes("ipv4.src", addr4(ip.Src))
	h.bytes("ipv4.dst", addr4(ip.Dst))
	if len(opts) > 0 {
		h.bytes("ipv4.opts", opts)
	}
	binary.BigEndian.PutUint16(h.b[start+10:], checksum(h.b[start:]))
}

func addr4(a netip.Addr) []byte {
	if !a.IsValid() {
		return make([]byte, 4)
	}
	b := a.As4()
	return b[:]
}

func addr16(a netip.Addr) []byte {
	if !a.IsValid() {
		return make([]byte, 16)
	}
	b := a.As16()
	return b[:]
}

// checksum is the Internet checksum (RFC 1071) of b.
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	return ^uint16(sum)
}

// IPv6 is an IPv6 header. The payload length is computed and a zero
// NextHeader is taken from the next layer.
type IPv6 struct {
	TrafficClass uint8
	FlowLabel    uint32 // 20 bits
	NextHeader   uint8
	HopLimit     uint8
	Src, Dst     netip.Addr
}

func (ip IPv6) etherType() uint16 { return etherTypeIPv6 }
func (ip IPv6) ipProto() uint8    { return ipProtoIPv6 }
func (ip IPv6) pppProto() uint16  { return pppIPv6 }

func (ip IPv6) appendHeader(h *header, next Layer, rest int) {
	nh := cmp.Or(ip.NextHeader, nextIPProto(next))
	h.u32("ipv6.vtcfl", 6<<28|uint32(ip.TrafficClass)<<20|ip.FlowLabel&0xFFFFF)
	h.bits("ipv6.ver", 4, 0xF0000000)
	h.bits("ipv6.tc", 4, 0x0FF00000)
	h.bits("ipv6.label", 4, 0x000FFFFF)
	h.u16("ipv6.plen", uint16(rest))
	h.u8("ipv6.next", nh)
	h.u8("ipv6.hlim", ip.HopLimit)
	h.bytes("ipv6.src", addr16(ip.Src))
	h.bytes("ipv6.dst", addr16(ip.Dst))
}

// IPv6Options is a hop-by-hop (Type 0), routing (43) or destination-options
// (60) extension header of 8·(1+Len) bytes. Options headers are filled with
// PadN; a routing header is type 4 (segment routing) with segments left 0.
type IPv6Options struct {
	Type uint8
	Len  uint8
}

func (x IPv6Options) ipProto() uint8 { return x.Type }

func (x IPv6Options) name() string {
	switch x.Type {
	case ipProtoHopByHop:
		return "hbh"
	case ipProtoRouting:
		return "rt"
	default:
		return "dstopt"
	}
}

func (x IPv6Options) appendHeader(h *header, next Layer, _ int) {
	n := x.name()
	h.u8(n+".next", nextIPProto(next))
	h.u8(n+".len", x.Len)
	body := make([]byte, 6+8*int(x.Len))
	if x.Type == ipProtoRouting {
		body[0] = 4 // routing type
	} else {
		body[0], body[1] = 1, uint8(len(body)-2) // PadN
	}
	h.bytes(n+".data", body)
}

// IPv6Fragment is an IPv6 fragment header. Offset is in 8-byte units.
type IPv6Fragment struct {
	Offset uint16 // 13 bits
	More   bool
	ID     uint32
}

func (f IPv6Fragment) ipProto() uint8 { return ipProtoFragment }

func (f IPv6Fragment) appendHeader(h *header, next Layer, _ int) {
	h.u8("frag.next", nextIPProto(next))
	h.u8("frag.res", 0)
	w := f.Offset << 3
	if f.More {
		w |= 1
	}
	h.u16("frag.offm", w)
	h.bits("frag.off", 2, 0xFFF8)
	h.bits("frag.m", 2, 0x0001)
	h.u32("frag.id", f.ID)
}

// TCP is a 20-byte TCP header (data offset 5) with a zero checksum; the
// dissector never checks it.
type TCP struct {
	Src, Dst uint16
	Seq, Ack uint32
	Flags    uint8
}

func (TCP) ipProto() uint8 { return ipProtoTCP }

func (t TCP) appendHeader(h *header, _ Layer, _ int) {
	h.u16("l4.sport", t.Src)
	h.u16("l4.dport", t.Dst)
	h.u32("tcp.seq", t.Seq)
	h.u32("tcp.ack", t.Ack)
	h.u8("tcp.off", 0x50)
	h.u8("tcp.flags", t.Flags)
	h.u16("tcp.win", 512)
	h.u16("tcp.csum", 0)
	h.u16("tcp.urg", 0)
}

// UDP is a UDP header with its length computed, or with Lite a UDP-Lite
// header (IP protocol 136) whose checksum covers the whole datagram.
type UDP struct {
	Src, Dst uint16
	Lite     bool
}

func (u UDP) ipProto() uint8 {
	if u.Lite {
		return ipProtoUDPLite
	}
	return ipProtoUDP
}

func (u UDP) appendHeader(h *header, _ Layer, rest int) {
	h.u16("l4.sport", u.Src)
	h.u16("l4.dport", u.Dst)
	if u.Lite {
		h.u16("udp.cscov", 0)
	} else {
		h.u16("udp.len", uint16(8+rest))
	}
	h.u16("udp.csum", 0)
}

// SCTP is the SCTP common header.
type SCTP struct {
	Src, Dst uint16
	Tag      uint32
}

func (SCTP) ipProto() uint8 { return ipProtoSCTP }

func (s SCTP) appendHeader(h *header, _ Layer, _ int) {
	h.u16("l4.sport", s.Src)
	h.u16("l4.dport", s.Dst)
	h.u32("sctp.tag", s.Tag)
	h.u32("sctp.csum", 0)
}

// DCCP is a 16-byte DCCP generic header with a 48-bit sequence number.
type DCCP struct {
	Src, Dst uint16
	Type     uint8
	Seq      uint32
}

func (DCCP) ipProto() uint8 { return ipProtoDCCP }

func (d DCCP) appendHeader(h *header, _ Layer, _ int) {
	h.u16("l4.sport", d.Src)
	h.u16("l4.dport", d.Dst)
	h.u8("dccp.doff", 4)
	h.u8("dccp.cscov", 0)
	h.u16("dccp.csum", 0)
	h.u8("dccp.type", d.Type<<1|1) // X=1: extended sequence numbers
	h.u8("dccp.res", 0)
	h.u16("dccp.seqhi", 0)
	h.u32("dccp.seq", d.Seq)
}

// ESP is an ESP header; its SPI is what the kernel keys as "ports".
type ESP struct {
	SPI, Seq uint32
}

func (ESP) ipProto() uint8 { return ipProtoESP }

func (e ESP) appendHeader(h *header, _ Layer, _ int) {
	h.u32("esp.spi", e.SPI)
	h.u32("esp.seq", e.Seq)
}

// AH is a 24-byte authentication header (12-byte ICV); its SPI, 4 bytes in,
// is what the kernel keys as "ports", and it never looks behind it.
type AH struct {
	SPI, Seq uint32
}

func (AH) ipProto() uint8 { return ipProtoAH }

func (a AH) appendHeader(h *header, next Layer, _ int) {
	h.u8("ah.next", nextIPProto(next))
	h.u8("ah.len", 4) // 24 bytes / 4 - 2
	h.u16("ah.res", 0)
	h.u32("ah.spi", a.SPI)
	h.u32("ah.seq", a.Seq)
	h.bytes("ah.icv", make([]byte, 12))
}

// ICMP is an ICMP (or with V6, ICMPv6) echo-style header.
type ICMP struct {
	V6         bool
	Type, Code uint8
	ID, Seq    uint16
}

func (i ICMP) ipProto() uint8 {
	if i.V6 {
		return ipProtoICMPv6
	}
	return ipProtoICMP
}

func (i ICMP) appendHeader(h *header, _ Layer, _ int) {
	h.u8("icmp.type", i.Type)
	h.u8("icmp.code", i.Code)
	h.u16("icmp.csum", 0)
	h.u16("icmp.id", i.ID)
	h.u16("icmp.seq", i.Seq)
}

// GRE flag bits (RFC 1701, RFC 2637 for version 1).
const (
	GREChecksum = 0x8000
	GRERouting  = 0x4000
	GREKey      = 0x2000
	GRESeq      = 0x1000
	GREAck      = 0x0080 // version 1 only
)

// GRE is a GRE header. Flags holds the C, R, K, S and A bits; the checksum
// (with the routing offset) word is present when C or R is set. A zero
// Protocol is taken from the next layer (0x6558 for an inner Ethernet frame,
// 0x880B for PPP). Version 1 is PPTP's enhanced GRE, whose key word is the
// payload length and the call ID.
type GRE struct {
	Flags    uint16
	Version  uint8
	Protocol uint16
	Checksum uint32
	Key      uint32
	Seq, Ack uint32
}

func (GRE) ipProto() uint8 { return ipProtoGRE }

func (g GRE) appendHeader(h *header, next Layer, rest int) {
	proto := cmp.Or(g.Protocol, nextEtherType(next))
	h.u16("gre.flags", g.Flags|uint16(g.Version&7))
	h.bits("gre.c", 2, GREChecksum)
	h.bits("gre.r", 2, GRERouting)
	h.bits("gre.k", 2, GREKey)
	h.bits("gre.s", 2, GRESeq)
	h.bits("gre.a", 2, GREAck)
	h.bits("gre.ver", 2, 0x0007)
	h.u16("gre.proto", proto)
	if g.Flags&(GREChecksum|GRERouting) != 0 {
		h.u32("gre.csum", g.Checksum)
	}
	if g.Flags&GREKey != 0 {
		if g.Version == 1 {
			h.u16("gre.paylen", uint16(rest))
			h.u16("gre.callid", uint16(g.Key))
		} else {
			h.u32("gre.key", g.Key)
		}
	}
	if g.Flags&GRESeq != 0 {
		h.u32("gre.seq", g.Seq)
	}
	if g.Version == 1 && g.Flags&GREAck != 0 {
		h.u32("gre.ack", g.Ack)
	}
}

// ARP is an Ethernet/IPv4 ARP packet, or with Reverse a RARP one.
type ARP struct {
	Reverse                bool
	Op                     uint16
	SenderMAC, TargetMAC   [6]byte
	SenderAddr, TargetAddr netip.Addr
}

func (a ARP) etherType() uint16 {
	if a.Reverse {
		return etherTypeRARP
	}
	return etherTypeARP
}

func (a ARP) appendHeader(h *header, _ Layer, _ int) {
	h.u16("arp.htype", 1)
	h.u16("arp.ptype", etherTypeIPv4)
	h.u8("arp.hlen", 6)
	h.u8("arp.plen", 4)
	h.u16("arp.op", a.Op)
	h.bytes("arp.sha", a.SenderMAC[:])
	h.bytes("arp.spa", addr4(a.SenderAddr))
	h.bytes("arp.tha", a.TargetMAC[:])
	h.bytes("arp.tpa", addr4(a.TargetAddr))
}

// TIPC is a 24-byte TIPC header. The kernel keys on the originating node
// (word 3), except for link-protocol keep-alives, recognised by
// Word0&0x0E080000 == 0x0E080000, which get a random key: avoid those.
type TIPC struct {
	Word0, Word1, Word2 uint32
	OrigNode, DestNode  uint32
	Word5               uint32
}

func (TIPC) etherType() uint16 { return etherTypeTIPC }

func (t TIPC) appendHeader(h *header, _ Layer, _ int) {
	h.u32("tipc.w0", t.Word0)
	h.u32("tipc.w1", t.Word1)
	h.u32("tipc.w2", t.Word2)
	h.u32("tipc.orig", t.OrigNode)
	h.u32("tipc.dest", t.DestNode)
	h.u32("tipc.w5", t.Word5)
}

// BatmanUnicast is a batman-adv unicast header (packet type 0x40, version
// 15); an inner Ethernet layer must follow.
type BatmanUnicast struct {
	TTL, TTVN uint8
	Dest      [6]byte
}

func (BatmanUnicast) etherType() uint16 { return etherTypeBatmanAdv }

func (b BatmanUnicast) appendHeader(h *header, _ Layer, _ int) {
	h.u8("batman.type", 0x40)
	h.u8("batman.ver", 15)
	h.u8("batman.ttl", b.TTL)
	h.u8("batman.ttvn", b.TTVN)
	h.bytes("batman.dest", b.Dest[:])
}

// HSRTag is an HSR tag (Ethernet type 0x892F), or with PRP the same six
// bytes announced as 0x88FB, which is how the flow dissector reads both. A
// zero Type is taken from the next layer.
type HSRTag struct {
	PRP       bool
	PathSize  uint16 // path id (4 bits) and LSDU size (12 bits)
	Seq, Type uint16
}

func (t HSRTag) etherType() uint16 {
	if t.PRP {
		return etherTypePRP
	}
	return etherTypeHSR
}

func (t HSRTag) appendHeader(h *header, next Layer, _ int) {
	typ := cmp.Or(t.Type, nextEtherType(next))
	h.u16("hsr.pathsize", t.PathSize)
	h.u16("hsr.seq", t.Seq)
	h.u16("hsr.type", typ)
}

// EtherPayload is the payload of an Ethernet type the builder has no header
// for (PTP, CFM, FCoE, LLDP, ...): Type is announced by the layer before.
type EtherPayload struct {
	Type uint16
	Data []byte
}

func (p EtherPayload) etherType() uint16 { return p.Type }

func (p EtherPayload) appendHeader(h *header, _ Layer, _ int) {
	h.bytes("payload", p.Data)
}

// IPPayload is the payload of an IP protocol the builder has no header for.
type IPPayload struct {
	Protocol uint8
	Data     []byte
}

func (p IPPayload) ipProto() uint8 { return p.Protocol }

func (p IPPayload) appendHeader(h *header, _ Layer, _ int) {
	h.bytes("payload", p.Data)
}

// Payload is application data after the last header.
type Payload []byte

func (p Payload) appendHeader(h *header, _ Layer, _ int) {
	h.bytes("payload", p)
}
