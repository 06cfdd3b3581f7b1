package pktgen

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/xdphash/xdphash/corpus"
)

// Shape is a stack of headers, named by its layers outermost first and
// separated by slashes: "ipv4/tcp", "vlan/ipv6/udp", "qinq/pppoe/ipv4/tcp",
// "mpls/ipv4/udp", "ipv4/ipv6/tcp" (6in4), "ipv6/gre/ipv4/tcp",
// "ipv4/gre/eth/ipv4/udp" (transparent Ethernet bridging). The grammar:
//
//	shape   = link* ip tunnel* l4
//	link    = "vlan" | "qinq" | "pppoe" | "mpls"
//	ip      = ("ipv4" | "ipv6") ("+" modifier)*
//	tunnel  = ip | "gre" ["eth"] ip | "vxlan" "eth" ip | "gtpu" ip
//	l4      = "tcp" | "udp"
//
// "vxlan" is a UDP header to port 4789 whose source port comes from the
// inner flow (as RFC 7348 suggests) and a VXLAN header; "gtpu" a UDP header
// from and to port 2152 and a GTPv1-U G-PDU header: the UDP tunnels of the
// opt-in descent (dissect.Descent). The VNI and the TEID are the tunnel's.
//
// "qinq" is an 802.1AD tag followed by an 802.1Q tag. The modifiers make
// frames that only the slow path dissects:
//
//	ipv4+opts   an IPv4 header with 4 bytes of options (IHL 6)
//	ipv4+frag   IPv4 fragments: first fragments (MF) for even flows, later
//	            fragments without the L4 header for odd ones
//	ipv6+frag   the same with an IPv6 fragment header
//	ipv6+hbh    an 8-byte hop-by-hop options header before the L4 header
//	ipv6+label  a non-zero flow label (the kernel's hash stops there)
//
// The flow's addresses and ports are those of the innermost IP header and
// the L4 header; outer tunnel headers carry one of four tunnel endpoint
// pairs (and GRE keys), VLAN tags one of 100 VLAN ids, PPPoE one of 1000
// sessions and MPLS one of 1000 labels, each chosen by the flow. The kernel's
// flow dissector stops at MPLS: all MPLS frames behind the same VLAN tags are
// one flow to it.
type Shape struct {
	name   string
	layers []layer
}

// layer is one element of a shape.
type layer struct {
	kind layerKind
	mods modifier
}

type layerKind uint8

const (
	layerVLAN layerKind = iota
	layerQinQ
	layerPPPoE
	layerMPLS
	layerIPv4
	layerIPv6
	layerGRE
	layerEth
	layerTCP
	layerUDP
	layerVXLAN
	layerGTPU
)

var layerNames = map[string]layerKind{
	"vlan": layerVLAN, "qinq": layerQinQ, "pppoe": layerPPPoE, "mpls": layerMPLS,
	"ipv4": layerIPv4, "ipv6": layerIPv6, "gre": layerGRE, "eth": layerEth, "tcp": layerTCP, "udp": layerUDP,
	"vxlan": layerVXLAN, "gtpu": layerGTPU,
}

// modifier is a set of IP header variants.
type modifier uint8

const (
	modOpts modifier = 1 << iota
	modFrag
	modHBH
	modLabel
)

var modNames = []struct {
	name string
	mod  modifier
	v4   bool // allowed on ipv4
	v6   bool // allowed on ipv6
}{
	{"opts", modOpts, true, false},
	{"frag", modFrag, true, true},
	{"hbh", modHBH, false, true},
	{"label", modLabel, false, true},
}

// ParseShape reads a shape name; see Shape for the grammar.
func ParseShape(name string) (Shape, error) {
	var s Shape
	tokens := strings.Split(name, "/")
	// state: 0 link layers, 1 after an ip, 2 after gre, 3 after gre/eth or
	// vxlan/eth, 4 after l4, 5 after vxlan, 6 after gtpu
	state := 0
	for i, tok := range tokens {
		base, mods, _ := strings.Cut(tok, "+")
		kind, ok := layerNames[base]
		if !ok {
			return Shape{}, fmt.Errorf("parse shape %q: unknown layer %q (want vlan, qinq, pppoe, mpls, ipv4, ipv6, gre, vxlan, gtpu, eth, tcp or udp)", name, base)
		}
		l := layer{kind: kind}
		if mods != "" {
			if kind != layerIPv4 && kind != layerIPv6 {
				return Shape{}, fmt.Errorf("parse shape %q: %q: only ipv4 and ipv6 take modifiers", name, tok)
			}
			for m := range strings.SplitSeq(mods, "+") {
				found := false
				for _, mn := range modNames {
					if mn.name == m && (kind == layerIPv4 && mn.v4 || kind == layerIPv6 && mn.v6) {
						l.mods |= mn.mod
						found = true
					}
				}
				if !found {
					return Shape{}, fmt.Errorf("parse shape %q: %q: unknown modifier %q (ipv4 takes opts and frag, ipv6 frag, hbh and label)", name, tok, m)
				}
			}
		}
		bad := func(want string) error {
			return fmt.Errorf("parse shape %q: %q at position %d: want %s", name, tok, i+1, want)
		}
		switch kind {
		case layerVLAN, layerQinQ, layerPPPoE, layerMPLS:
			if state != 0 {
				return Shape{}, bad("a link layer only before the first IP header")
			}
		case layerIPv4, layerIPv6:
			switch state {
			case 4:
				return Shape{}, bad("nothing after the L4 header")
			case 5:
				return Shape{}, bad("eth after vxlan")
			}
			state = 1
		case layerGRE, layerVXLAN, layerGTPU:
			if state != 1 {
				return Shape{}, bad(base + " only after an IP header")
			}
			state = map[layerKind]int{layerGRE: 2, layerVXLAN: 5, layerGTPU: 6}[kind]
		case layerEth:
			if state != 2 && state != 5 {
				return Shape{}, bad("eth only right after gre or vxlan")
			}
			state = 3
		case layerTCP, layerUDP:
			if state != 1 {
				return Shape{}, bad("tcp or udp only right after an IP header")
			}
			state = 4
		}
		s.layers = append(s.layers, l)
	}
	if state != 4 {
		return Shape{}, fmt.Errorf("parse shape %q: want an IP header and tcp or udp at the end", name)
	}
	s.name = name
	return s, nil
}

// MustParseShape is ParseShape for names known to be valid; it panics
// otherwise.
func MustParseShape(name string) Shape {
	s, err := ParseShape(name)
	if err != nil {
		panic(err)
	}
	return s
}

// String is the shape's name.
func (s Shape) String() string { return s.name }

// IsZero reports whether s is the zero Shape, which names no headers.
func (s Shape) IsZero() bool { return len(s.layers) == 0 }

// flowFields are the values that tell one flow of a shape from another.
type flowFields struct {
	g       uint32 // the flow's global number
	shape   int    // the shape's index in the profile's mix
	reply   bool
	payload int // bytes after the headers
	dst     [6]byte
	src     [6]byte
}

// Address plan: every address lies in 198.18.0.0/15 or 2001:db8::/32.
//
//	clients        198.18.0.0/16 (the flow number's low 16 bits), 2001:db8:0:c::/64
//	servers        198.19.0.1 + shape, 2001:db8:0:5::1 + shape
//	tunnel clients 198.19.254.1-4, 2001:db8:0:fe::1-4
//	tunnel servers 198.19.255.1, 2001:db8:0:ff::1
const tunnels = 4

func clientV4(g uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 18, byte(g >> 8), byte(g)})
}

func serverV4(shape int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 19, 0, byte(1 + shape%250)})
}

func clientV6(g uint32) netip.Addr {
	return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0x0c, 0, 0, 0, 0, byte(g >> 24), byte(g >> 16), byte(g >> 8), byte(g)})
}

func serverV6(shape int) netip.Addr {
	return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0x05, 15: byte(1 + shape%250)})
}

// clientPort is distinct for every flow number below 65536*64512 that has
// the same client IPv4 address (the same low 16 bits), and varies with the
// address too.
func clientPort(g uint32) uint16 {
	return uint16(1024 + (g>>16+3*(g&0xffff))%64512)
}

// flowLabel is the flow's non-zero IPv6 flow label.
func flowLabel(g uint32) uint32 { return 1 + (g*2654435761)>>12%0xfffff }

// build returns the corpus layers of one frame of flow f.
func (s Shape) build(f flowFields) []corpus.Layer {
	out := []corpus.Layer{corpus.Ethernet{Dst: f.dst, Src: f.src}}
	// The index of the innermost IP header: its addresses are the flow's.
	inner := 0
	for i, l := range s.layers {
		if l.kind == layerIPv4 || l.kind == layerIPv6 {
			inner = i
		}
	}
	t := f.g % tunnels
	later := f.g%2 == 1 // fragments: odd flows send later fragments
	var l4 uint8
	switch s.layers[len(s.layers)-1].kind {
	case layerTCP:
		l4 = 6
	case layerUDP:
		l4 = 17
	}
	for i, l := range s.layers {
		var src, dst netip.Addr
		switch {
		case i == inner && l.kind == layerIPv4:
			src, dst = clientV4(f.g), serverV4(f.shape)
		case i == inner:
			src, dst = clientV6(f.g), serverV6(f.shape)
		case l.kind == layerIPv4:
			src, dst = netip.AddrFrom4([4]byte{198, 19, 254, byte(1 + t)}), netip.AddrFrom4([4]byte{198, 19, 255, 1})
		default:
			src, dst = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0xfe, 15: byte(1 + t)}), netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0xff, 15: 1})
		}
		if f.reply {
			src, dst = dst, src
		}
		frag := i == inner && l.mods&modFrag != 0
		switch l.kind {
		case layerVLAN:
			out = append(out, corpus.VLAN{ID: uint16(1 + f.g%100)})
		case layerQinQ:
			out = append(out, corpus.VLAN{TPID: 0x88a8, ID: uint16(10 + t)}, corpus.VLAN{ID: uint16(100 + f.g%100)})
		case layerPPPoE:
			out = append(out, corpus.PPPoE{Session: uint16(1 + f.g%1000)})
		case layerMPLS:
			out = append(out, corpus.MPLS{Label: 16 + f.g%1000, TTL: 64})
		case layerIPv4:
			ip := corpus.IPv4{TTL: 64, ID: uint16(f.g), Src: src, Dst: dst}
			if l.mods&modOpts != 0 {
				ip.Options = []byte{1, 1, 1, 1} // four NOPs
			}
			if frag {
				ip.Protocol = l4
				ip.Frag = 0x2000 // MF, offset 0
				if later {
					ip.Frag = 185 // the second of two fragments: offset 1480
				}
			}
			out = append(out, ip)
		case layerIPv6:
			ip := corpus.IPv6{HopLimit: 64, Src: src, Dst: dst}
			if l.mods&modLabel != 0 {
				ip.FlowLabel = flowLabel(f.g)
			}
			out = append(out, ip)
			if l.mods&modHBH != 0 {
				out = append(out, corpus.IPv6Options{Type: 0})
			}
			if frag {
				out = append(out, corpus.IPv6Fragment{Offset: 0, More: !later, ID: f.g})
				if later {
					out[len(out)-1] = corpus.IPv6Fragment{Offset: 185, ID: f.g}
				}
			}
		case layerGRE:
			out = append(out, corpus.GRE{Flags: corpus.GREKey, Key: 1000 + t})
		case layerVXLAN:
			// The outer source port from the inner flow (RFC 7348 §5),
			// the same in both directions: both ends hash the same flow.
			out = append(out, corpus.UDP{Src: 49152 + uint16(f.g*2654435761>>18)%16384, Dst: 4789},
				corpus.VXLAN{Flags: corpus.VXLANFlagVNI, VNI: 5000 + t})
		case layerGTPU:
			// GTP-U: the fixed source port many implementations use.
			out = append(out, corpus.UDP{Src: 2152, Dst: 2152}, corpus.GTPU{TEID: 0x10000 + t})
		case layerEth:
			out = append(out, corpus.Ethernet{Dst: [6]byte{0x02, 0x70, 0x67, 0, 1, byte(t)}, Src: [6]byte{0x02, 0x70, 0x67, 0, 2, byte(t)}})
		case layerTCP, layerUDP:
			if later && s.layers[inner].mods&modFrag != 0 {
				// A later fragment has no L4 header: the IP layer names
				// the protocol of the payload.
				out = append(out, corpus.IPPayload{Protocol: l4, Data: make([]byte, f.payload)})
				return out
			}
			sport, dport := clientPort(f.g), uint16(443) // HTTPS, QUIC
			if f.reply {
				sport, dport = dport, sport
			}
			if l.kind == layerTCP {
				out = append(out, corpus.TCP{Src: sport, Dst: dport, Seq: f.g, Flags: 0x10})
			} else {
				out = append(out, corpus.UDP{Src: sport, Dst: dport})
			}
		}
	}
	out = append(out, corpus.Payload(make([]byte, f.payload)))
	return out
}

// TaggedInBand reports whether the shape's frames start with a VLAN or QinQ
// tag in their bytes.
func (s Shape) TaggedInBand() bool {
	return len(s.layers) > 0 && (s.layers[0].kind == layerVLAN || s.layers[0].kind == layerQinQ)
}
