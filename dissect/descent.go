package dissect

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The opt-in inner-flow descent into UDP tunnels: the policy of the kernel
// series "net: flow_dissector: descend into VXLAN / Geneve / GTP-U / FOU-GUE
// inner flow" (net-next v1, patches 10-13 of the fast-path series). No
// released kernel has it; it is off by default, and with it off not a key
// byte changes. docs/kernel-fidelity.md lists its rules and quirks.
//
// With a tunnel on, the slow path, after writing the ports of a UDP header
// that is no fragment and when the caller passed neither STOP_AT_ENCAP nor
// STOP_BEFORE_ENCAP, tries the classifiers below in the series' order
// (VXLAN, Geneve, GTP-U, then the FOU/GUE port table). The first that
// matches sets FLOW_DIS_ENCAPSULATION and re-dispatches on the inner
// network header, as a re-dispatch like any other (MaxReDispatch bounds it).
// Matching is by destination port alone; the classifiers read the linear
// buffer directly (the kernel reads data within hlen), so a header cut short
// keeps the outer keys.

// Tunnel is a UDP tunnel the descent can enter.
type Tunnel uint8

// The tunnels, in the order the series tries them.
const (
	TunnelVXLAN  Tunnel = iota // RFC 7348, UDP port 4789
	TunnelGeneve               // RFC 8926, UDP port 6081
	TunnelGTPU                 // 3GPP TS 29.281 GTPv1-U, UDP port 2152
	TunnelGUE                  // Generic UDP Encapsulation, ports from the FOU table
	TunnelFOU                  // direct Foo-over-UDP, ports and inner protocol from the FOU table
	NumTunnels
)

var tunnelNames = [NumTunnels]string{"vxlan", "geneve", "gtpu", "gue", "fou"}

func (t Tunnel) String() string {
	if t < NumTunnels {
		return tunnelNames[t]
	}
	return fmt.Sprintf("tunnel(%d)", uint8(t))
}

// Tunnels is a set of tunnels: one bit per Tunnel. The zero value is none.
type Tunnels uint8

// AllTunnels is every tunnel.
const AllTunnels Tunnels = 1<<NumTunnels - 1

// Has reports whether t is in the set.
func (ts Tunnels) Has(t Tunnel) bool { return ts&(1<<t) != 0 }

// With returns the set with t in it.
func (ts Tunnels) With(t Tunnel) Tunnels { return ts | 1<<t }

// String is "none", "all" or a comma-separated list, as ParseTunnels takes.
func (ts Tunnels) String() string {
	switch ts & AllTunnels {
	case 0:
		return "none"
	case AllTunnels:
		return "all"
	}
	var names []string
	for t := range NumTunnels {
		if ts.Has(t) {
			names = append(names, t.String())
		}
	}
	return strings.Join(names, ",")
}

// ParseTunnels reads "none", "all" or a comma-separated list of tunnel names
// (vxlan, geneve, gtpu, gue, fou).
func ParseTunnels(s string) (Tunnels, error) {
	switch s {
	case "none", "":
		return 0, nil
	case "all":
		return AllTunnels, nil
	}
	var ts Tunnels
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		i := 0
		for i < int(NumTunnels) && tunnelNames[i] != name {
			i++
		}
		if i == int(NumTunnels) {
			return 0, fmt.Errorf("parse tunnels %q: %w: %q (want none, all or a list of %s)", s, ErrUnknownTunnel, name, strings.Join(tunnelNames[:], ", "))
		}
		ts = ts.With(Tunnel(i))
	}
	return ts, nil
}

// TunnelCounts are counts per tunnel; in JSON an object by tunnel name
// ({"vxlan": 3, "gtpu": 1}), without the zero counts.
type TunnelCounts [NumTunnels]uint64

// MarshalJSON writes the non-zero counts by tunnel name.
func (c TunnelCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for t, n := range c {
		if n == 0 {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, Tunnel(t).String())
		b = append(b, ':')
		b = strconv.AppendUint(b, n, 10)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads MarshalJSON's object.
func (c *TunnelCounts) UnmarshalJSON(b []byte) error {
	var m map[string]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("read tunnel counts: %w", err)
	}
	*c = TunnelCounts{}
	for name, n := range m {
		ts, err := ParseTunnels(name)
		if err != nil || ts == AllTunnels || ts == 0 || strings.Contains(name, ",") {
			return fmt.Errorf("read tunnel counts: %w: %q", ErrUnknownTunnel, name)
		}
		for t := range NumTunnels {
			if ts.Has(t) {
				c[t] = n
			}
		}
	}
	return nil
}

// Errors of the descent's configuration.
var (
	ErrUnknownTunnel = errors.New("unknown tunnel")
	ErrBadPort       = errors.New("bad UDP port")
	ErrPortTaken     = errors.New("UDP port already in the FOU table")
	ErrTableFull     = errors.New("FOU table full")
)

// MaxEncapPorts bounds the FOU/GUE port table (the kernel's per-namespace
// FOU list, typically a handful of entries, which the series walks per
// packet).
const MaxEncapPorts = 16

// EncapPort is an entry of the FOU table: a UDP port that receives GUE, or
// direct FOU carrying the IP protocol Inner (4 or 41), which is not on the
// wire. An entry matches outer IPv4 and IPv6 alike, as a port configured
// for both families in the kernel's table does.
type EncapPort struct {
	Port  uint16
	GUE   bool  // GUE (FOU_ENCAP_GUE); otherwise direct FOU (FOU_ENCAP_DIRECT)
	Inner uint8 // direct FOU: the inner IP protocol, ipip (4) or ipv6 (41)
}

// String is "PORT:ipip", "PORT:ipv6" (FOU) or "PORT" (GUE).
func (e EncapPort) String() string {
	switch {
	case e.GUE:
		return strconv.Itoa(int(e.Port))
	case e.Inner == ipProtoIPv6:
		return strconv.Itoa(int(e.Port)) + ":ipv6"
	}
	return strconv.Itoa(int(e.Port)) + ":ipip"
}

// ParseFOUPort reads a direct FOU entry, "PORT:ipip" or "PORT:ipv6".
func ParseFOUPort(s string) (EncapPort, error) {
	p, proto, ok := strings.Cut(s, ":")
	if !ok {
		return EncapPort{}, fmt.Errorf("parse FOU port %q: want PORT:ipip or PORT:ipv6", s)
	}
	port, err := parsePort(p)
	if err != nil {
		return EncapPort{}, fmt.Errorf("parse FOU port %q: %w", s, err)
	}
	switch proto {
	case "ipip":
		return EncapPort{Port: port, Inner: ipProtoIPIP}, nil
	case "ipv6":
		return EncapPort{Port: port, Inner: ipProtoIPv6}, nil
	}
	return EncapPort{}, fmt.Errorf("parse FOU port %q: inner protocol %q, want ipip or ipv6", s, proto)
}

// ParseGUEPort reads a GUE entry, "PORT".
func ParseGUEPort(s string) (EncapPort, error) {
	port, err := parsePort(s)
	if err != nil {
		return EncapPort{}, fmt.Errorf("parse GUE port %q: %w", s, err)
	}
	return EncapPort{Port: port, GUE: true}, nil
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%w %q (want 1-65535)", ErrBadPort, s)
	}
	return uint16(n), nil
}

// Descent is the descent policy: which tunnels the slow path enters, and
// the FOU table for GUE and FOU. The zero value enters none. It is a plain
// value: a Dissector keeps its own copy.
type Descent struct {
	tunnels Tunnels
	nPorts  uint8
	ports   [MaxEncapPorts]EncapPort
}

// NewDescent returns the policy that enters the tunnels ts, with the FOU
// table ports. A port may appear once; GUE and FOU need their entries, which
// are ignored while their tunnel is off.
func NewDescent(ts Tunnels, ports ...EncapPort) (Descent, error) {
	d := Descent{tunnels: ts & AllTunnels}
	if len(ports) > MaxEncapPorts {
		return Descent{}, fmt.Errorf("new descent: %d FOU/GUE ports: %w (at most %d)", len(ports), ErrTableFull, MaxEncapPorts)
	}
	for _, p := range ports {
		if p.Port == 0 {
			return Descent{}, fmt.Errorf("new descent: %w 0", ErrBadPort)
		}
		if !p.GUE && p.Inner != ipProtoIPIP && p.Inner != ipProtoIPv6 {
			return Descent{}, fmt.Errorf("new descent: FOU port %d: inner protocol %d, want 4 (ipip) or 41 (ipv6)", p.Port, p.Inner)
		}
		for _, q := range d.ports[:d.nPorts] {
			if q.Port == p.Port {
				return Descent{}, fmt.Errorf("new descent: port %d (%v and %v): %w", p.Port, q, p, ErrPortTaken)
			}
		}
		d.ports[d.nPorts] = p
		d.nPorts++
	}
	return d, nil
}

// Tunnels is the set of tunnels the policy enters.
func (d Descent) Tunnels() Tunnels { return d.tunnels }

// Ports is the FOU table.
func (d Descent) Ports() []EncapPort { return append([]EncapPort(nil), d.ports[:d.nPorts]...) }

// IsZero reports whether the policy enters no tunnel.
func (d Descent) IsZero() bool { return d.tunnels == 0 }

// String is the tunnel list, then the table: "vxlan,gue gue=6080 fou=5555:ipip".
func (d Descent) String() string {
	s := d.tunnels.String()
	for _, p := range d.ports[:d.nPorts] {
		if p.GUE {
			s += " gue=" + p.String()
		} else {
			s += " fou=" + p.String()
		}
	}
	return s
}

// descender is a Descent with the count of descents into each tunnel: the
// slow path's view of the policy. A Dissector owns one; the package's
// functions make one on their stack.
type descender struct {
	Descent
	descended TunnelCounts
	last      Entry
}

// Entry is where a dissection last entered a UDP tunnel: the tunnel, the
// inner network header's ethertype and offset; Count is how many tunnels
// it entered (0: none).
type Entry struct {
	Tunnel Tunnel
	Proto  uint16
	Off    int
	Count  int
}

// DissectFrameEntry is DissectFrameDescend that also says where the
// dissection last entered a tunnel: for oracles that hand the running
// kernel, which has no descent, the inner packet instead.
func DissectFrameEntry(keys *FlowKeys, frame []byte, flags Flags, d Descent) (bool, Entry) {
	*keys = FlowKeys{}
	ds := descender{Descent: d}
	ok := walkDescend(keys, frame, flags, EthProtocol(frame), EthernetHdrLen, 0, &ds)
	return ok, ds.last
}

// Tunnel header facts (include/net/vxlan.h, geneve.h, gtp.h, gue.h).
const (
	udpHdrLen     = 8
	vxlanHdrLen   = 8
	geneveHdrLen  = 8
	gtp1HdrLen    = 8
	gueHdrLen     = 4
	portVXLAN     = 4789       // IANA_VXLAN_UDP_PORT
	portGeneve    = 6081       // GENEVE_UDP_PORT
	portGTPU      = 2152       // GTP1U_PORT
	vxlanFlagsVNI = 0x08000000 // VXLAN_HF_VNI: the I flag, every other bit of the word zero
	geneveOAM     = 0x80       // the O bit of byte 1
	gtpMsgGPDU    = 0xff
	gueFlagPriv   = 0x0001 // GUE_FLAG_PRIV, the one flag GUE_FLAGS_ALL holds
)

// udpEncap is __skb_flow_dissect_udp_encap: whether the policy enters the
// tunnel behind the UDP header at thoff of b (ipv4: the header before it is
// IPv4, the series' AF_INET), and then the tunnel, the inner ethertype and
// the inner network header's offset. It runs the series' classifiers
// (flow_dissect_*_inner_ok) in its order; the fast paths ask it too, so the
// two cannot disagree on what descends.
func (d *Descent) udpEncap(b []byte, thoff int, ipv4 bool) (t Tunnel, proto uint16, nhoff int, ok bool) {
	if !fits(b, thoff, udpHdrLen) {
		return 0, 0, 0, false
	}
	be := binary.BigEndian
	dport := be.Uint16(b[thoff+2:])
	rest := len(b) - thoff
	ts := d.tunnels
	if ipv4 && rest >= udpHdrLen+vxlanHdrLen+EthernetHdrLen {
		h := b[thoff+udpHdrLen : thoff+udpHdrLen+vxlanHdrLen+EthernetHdrLen]
		inner := be.Uint16(h[vxlanHdrLen+12:])
		innerIP := inner == EtherTypeIPv4 || inner == EtherTypeIPv6
		// VXLAN: plain RFC 7348 only (GBP and GPE set other flag bits).
		if ts.Has(TunnelVXLAN) && dport == portVXLAN && be.Uint32(h) == vxlanFlagsVNI && innerIP {
			return TunnelVXLAN, inner, thoff + udpHdrLen + vxlanHdrLen + EthernetHdrLen, true
		}
		// Geneve: version 0, no options, not OAM, transparent Ethernet
		// (the critical bit and the reserved bits are not looked at).
		if ts.Has(TunnelGeneve) && dport == portGeneve && h[0] == 0 && h[1]&geneveOAM == 0 && be.Uint16(h[2:]) == EtherTypeTEB && innerIP {
			return TunnelGeneve, inner, thoff + udpHdrLen + geneveHdrLen + EthernetHdrLen, true
		}
	}
	// GTP-U: GTPv1, PT 1, no sequence, N-PDU or extension header (the
	// spare bit 3 is not looked at), a G-PDU; the room of an IPv4 header
	// after it is asked for either inner version.
	if ts.Has(TunnelGTPU) && ipv4 && dport == portGTPU && rest >= udpHdrLen+gtp1HdrLen+ipv4MinHdrLen {
		h := b[thoff+udpHdrLen : thoff+udpHdrLen+gtp1HdrLen+1]
		if h[0]>>5 == 1 && h[0]&0x10 != 0 && h[0]&0x07 == 0 && h[1] == gtpMsgGPDU {
			switch h[gtp1HdrLen] >> 4 {
			case 4:
				return TunnelGTPU, EtherTypeIPv4, thoff + udpHdrLen + gtp1HdrLen, true
			case 6:
				return TunnelGTPU, EtherTypeIPv6, thoff + udpHdrLen + gtp1HdrLen, true
			}
		}
	}
	if ts&(1<<TunnelGUE|1<<TunnelFOU) == 0 {
		return 0, 0, 0, false
	}
	// The FOU table: the first entry with the port decides.
	for _, e := range d.ports[:d.nPorts] {
		if e.Port != dport {
			continue
		}
		if e.GUE {
			if ts.Has(TunnelGUE) {
				return gueInner(b, thoff)
			}
			return 0, 0, 0, false
		}
		if !ts.Has(TunnelFOU) {
			return 0, 0, 0, false
		}
		proto := uint16(EtherTypeIPv4)
		if e.Inner == ipProtoIPv6 {
			proto = EtherTypeIPv6
		}
		return TunnelFOU, proto, thoff + udpHdrLen, true
	}
	return 0, 0, 0, false
}

// gueInner is flow_dissect_gue_inner_ok for the GUE header behind the UDP
// header at thoff: version 0, a data message, no flag but the private one,
// IPv4 or IPv6 inside; the inner header starts after the options (hlen
// words), which must lie within b.
func gueInner(b []byte, thoff int) (Tunnel, uint16, int, bool) {
	off := thoff + udpHdrLen
	if !fits(b, off, gueHdrLen) {
		return 0, 0, 0, false
	}
	h := (*[gueHdrLen]byte)(b[off:])
	if h[0]>>6 != 0 || h[0]&0x20 != 0 || binary.BigEndian.Uint16(h[2:])&^gueFlagPriv != 0 {
		return 0, 0, 0, false
	}
	var proto uint16
	switch h[1] {
	case ipProtoIPIP:
		proto = EtherTypeIPv4
	case ipProtoIPv6:
		proto = EtherTypeIPv6
	default:
		return 0, 0, 0, false
	}
	n := gueHdrLen + int(h[0]&0x1f)*4
	if len(b)-off < n {
		return 0, 0, 0, false
	}
	return TunnelGUE, proto, off + n, true
}

// enters says whether the policy enters a tunnel behind the UDP header at
// thoff of b (see udpEncap): where a tunnel shape's fast path, which covers
// one descent, declines an inner UDP header.
func (d *Descent) enters(b []byte, thoff int, ipv4 bool) bool {
	_, _, _, ok := d.udpEncap(b, thoff, ipv4)
	return ok
}
