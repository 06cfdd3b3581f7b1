package dissect

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
)

// Shape is a packet shape that has a fast path.
type Shape uint8

// The shapes. A frame's outer headers name at most one (ClassifyFrame).
const (
	ShapeEthIP Shape = iota // Ethernet + IPv4/IPv6 + TCP/UDP (or an IPv6 flow-label stop)
	ShapeVLAN               // one 802.1Q/802.1AD tag + IP + TCP/UDP
	ShapeQinQ               // two tags + IP + TCP/UDP
	ShapePPPoE              // PPPoE session + IPv4/IPv6 + TCP/UDP
	ShapeMPLS               // MPLS (the default dissector stops at the first label)
	ShapeIPIP               // IPIP, 4in6, 6in4, 6in6 chains + TCP/UDP
	ShapeGRE                // GRE v0 (checksum, key, sequence) + IP + TCP/UDP
	// The tunnel shapes: frames of their class exist only under a descent
	// policy that enters their tunnel (ClassifyFrameDescend); without one
	// the same frames are eth_ip's.
	ShapeVXLAN // IPv4 + UDP 4789 + VXLAN + Ethernet + IPv4/IPv6 + TCP/UDP, descended
	ShapeGTPU  // IPv4 + UDP 2152 + GTP-U G-PDU + IPv4/IPv6 + TCP/UDP, descended
	NumShapes
)

var shapeNames = [NumShapes]string{"eth_ip", "vlan", "qinq", "pppoe", "mpls", "ipip", "gre", "vxlan", "gtpu"}

// Tunnel is the UDP tunnel a tunnel shape descends into; false for the
// other shapes.
func (s Shape) Tunnel() (Tunnel, bool) {
	switch s {
	case ShapeVXLAN:
		return TunnelVXLAN, true
	case ShapeGTPU:
		return TunnelGTPU, true
	}
	return 0, false
}

// The policies entering one tunnel shape's tunnel alone: what runFast runs
// a tunnel shape's fast path under.
var (
	vxlanOnly = Descent{tunnels: Tunnels(0).With(TunnelVXLAN)}
	gtpuOnly  = Descent{tunnels: Tunnels(0).With(TunnelGTPU)}
)

func (s Shape) String() string {
	if s < NumShapes {
		return shapeNames[s]
	}
	return fmt.Sprintf("shape(%d)", uint8(s))
}

// ParseShape is the inverse of Shape.String.
func ParseShape(name string) (Shape, error) {
	for i, n := range shapeNames {
		if n == name {
			return Shape(i), nil
		}
	}
	return 0, fmt.Errorf("unknown shape %q (want one of %s)", name, strings.Join(shapeNames[:], ", "))
}

// Gates is the set of shapes whose fast path may run: one bit per Shape.
type Gates uint16

// Gate sets.
const (
	NoGates  Gates = 0
	AllGates Gates = 1<<NumShapes - 1
)

// Has reports whether s's gate is open.
func (g Gates) Has(s Shape) bool { return g&(1<<s) != 0 }

// With returns g with s's gate open.
func (g Gates) With(s Shape) Gates { return g | 1<<s }

// Without returns g with s's gate closed.
func (g Gates) Without(s Shape) Gates { return g &^ (1 << s) }

// String is "all", "none" or a comma-separated list, as ParseGates takes.
func (g Gates) String() string {
	switch g & AllGates {
	case AllGates:
		return "all"
	case NoGates:
		return "none"
	}
	var names []string
	for s := range NumShapes {
		if g.Has(s) {
			names = append(names, s.String())
		}
	}
	return strings.Join(names, ",")
}

// ParseGates reads "all", "none" or a comma-separated list of shape names.
func ParseGates(s string) (Gates, error) {
	switch s {
	case "all":
		return AllGates, nil
	case "none", "":
		return NoGates, nil
	}
	var g Gates
	for name := range strings.SplitSeq(s, ",") {
		sh, err := ParseShape(strings.TrimSpace(name))
		if err != nil {
			return 0, fmt.Errorf("parse gates %q: %w", s, err)
		}
		g = g.With(sh)
	}
	return g, nil
}

// Path says which code produced a frame's keys: the slow path, or the fast path
// of one shape. The zero value is the slow path.
type Path uint8

// PathSlow is the generic dissector.
const PathSlow Path = 0

// FastPath is the Path of s's fast path.
func FastPath(s Shape) Path { return Path(s) + 1 }

// Shape is the fast path's shape; false for the slow path.
func (p Path) Shape() (Shape, bool) { return Shape(p - 1), p != PathSlow }

// String is "slow" or "fast:SHAPE".
func (p Path) String() string {
	if s, ok := p.Shape(); ok {
		return "fast:" + s.String()
	}
	return "slow"
}

// ShapeCounters count what happened to frames at one shape's gate.
type ShapeCounters struct {
	Fast     uint64 // frames this shape's fast path dissected
	Declined uint64 // frames of this shape's class its fast path declined (options, fragments, ...)
	Slow     uint64 // frames of this shape's class that ran the slow path (declined, or gate closed)
}

// Counters are a Dissector's per-shape counters, in the spirit of the kernel
// proposal's /proc/net/flow_dissector_stats. Slow[shape] + Other is the number of
// slow-path runs.
type Counters struct {
	Shape [NumShapes]ShapeCounters
	Other uint64 // slow-path runs for frames of no fast-path shape
	Flips uint64 // gate changes made by auto mode
	// Descended counts the slow path's descents into each UDP tunnel under
	// the opt-in descent policy (SetDescent): a frame with a tunnel inside
	// a tunnel counts once per descent.
	Descended TunnelCounts `json:"Descended,omitzero"`
}

// Add adds c2 into c, to total the counters of several workers.
func (c *Counters) Add(c2 *Counters) {
	for i := range c.Shape {
		c.Shape[i].Fast += c2.Shape[i].Fast
		c.Shape[i].Declined += c2.Shape[i].Declined
		c.Shape[i].Slow += c2.Shape[i].Slow
	}
	c.Other += c2.Other
	c.Flips += c2.Flips
	for i := range c.Descended {
		c.Descended[i] += c2.Descended[i]
	}
}

// Dissector is one worker's dissector: the fast paths behind their gates, the slow
// path behind them, and the counters. It is not safe for concurrent use: give each
// worker its own, so the counters need no atomics.
type Dissector struct {
	flags    Flags
	eligible bool  // the fast paths are written for DefaultFlags only
	gates    Gates // the gates asked for
	open     Gates // the gates in effect: gates, or none when not eligible
	// divert sends every frame past DissectFrame's dispatch, one byte
	// for both reasons: divertTick under auto mode while DissectFrame has
	// a frame to count for it (classPath counts it and takes the dispatch
	// again with the bit clear), divertDescent under a descent policy
	// (divertedPath checks the fast paths' hits). A byte, not the
	// pointers: storing a pointer would cost a write barrier's check.
	divert   uint8
	counters Counters
	auto     *Auto // nil unless the gates are chosen from the traffic
	// resumeAt is where the slow path goes on after the last decline: a fast
	// path that declines past its outer headers leaves their state here
	// (nhoff 0: start over), so that the slow path does not read them again.
	resumeAt walkState
	// ipRoute is the dispatch on the IP protocol of an outer IPv4 or IPv6
	// header, with the gates folded in: the shape (ipShape) whose gate is
	// closed, to count the slow path's run for, or one of the open routes.
	ipRoute [256]uint8
	// slowRuns counts the slow path's runs of a closed gate's frames that
	// ipRoute classified, by shape (as long as the values below routeOpen,
	// so that the index needs no bounds check); Counters adds them in.
	slowRuns [routeOpen]uint64
	// desc is the opt-in descent policy with its counts, nil when it
	// enters no tunnel: the slow path's one extra test then.
	desc *descender
}

// Dissector.divert's bits.
const (
	divertTick    = 1 << iota // auto mode: count the frame (classPath)
	divertDescent             // a descent policy: check a fast path's hit (divertedPath)
)

// The open routes of Dissector.ipRoute; a value below routeOpen is the
// Shape of a closed gate.
const (
	routeOpen  = 0x80
	routeL4    = routeOpen     // eth_ip, TCP or UDP: the straight-line route
	routeEthIP = routeOpen + 1 // eth_ip, another protocol
	routeIPIP  = routeOpen + 2
	routeGRE   = routeOpen + 3
)

// NewDissector returns a dissector with the given flags and gates.
func NewDissector(flags Flags, gates Gates) *Dissector {
	d := &Dissector{flags: flags, eligible: flags == DefaultFlags}
	d.SetGates(gates)
	return d
}

// Gates returns the gates open now.
func (d *Dissector) Gates() Gates { return d.gates }

// SetGates opens exactly the gates in g. It does not change a single key byte of
// any later frame, only which code computes it.
func (d *Dissector) SetGates(g Gates) {
	d.gates = g & AllGates
	d.open = NoGates
	if d.eligible {
		d.open = d.gates
	}
	for p := range d.ipRoute {
		s := ipShape(uint8(p))
		switch {
		case !d.open.Has(s):
			d.ipRoute[p] = uint8(s)
		case s == ShapeIPIP:
			d.ipRoute[p] = routeIPIP
		case s == ShapeGRE:
			d.ipRoute[p] = routeGRE
		case p == ipProtoTCP || p == ipProtoUDP:
			d.ipRoute[p] = routeL4
		default:
			d.ipRoute[p] = routeEthIP
		}
	}
}

// Counters returns a copy of the counters.
func (d *Dissector) Counters() Counters {
	c := d.counters
	for s := range c.Shape {
		c.Shape[s].Slow += d.slowRuns[s]
	}
	if d.desc != nil {
		c.Descended = d.desc.descended
	}
	return c
}

// SetDescent sets the opt-in descent policy (the zero Descent: none, the
// default). Unlike the gates it changes keys: those of the frames it
// descends into. A fast path's keys of a frame whose UDP header the policy
// descends behind are a decline (redescend), so the keys stay the slow
// path's.
func (d *Dissector) SetDescent(p Descent) {
	var kept TunnelCounts
	if d.desc != nil {
		kept = d.desc.descended
	}
	d.desc = nil
	d.divert &^= divertDescent
	if !p.IsZero() {
		d.desc = &descender{Descent: p, descended: kept}
		d.divert |= divertDescent
	}
}

// Descent returns the descent policy.
func (d *Dissector) Descent() Descent {
	if d.desc == nil {
		return Descent{}
	}
	return d.desc.Descent
}

// redescend takes the keys the dispatch wrote for frame (received with
// the metadata tag, zero for none) by path p without the policy, and
// dissects frame again under it when the policy enters a tunnel at the
// dissection's last pass, a UDP header: walk and walkDescend agree up to
// the first tunnel entered, and a UDP header's pass is a dissection's last.
// A fast path's keys are then a decline. The keys name that pass's header
// (thoff) and family (addr_type); a fragment or a flow-label stop has none.
func (d *Dissector) redescend(keys *FlowKeys, frame []byte, tag VLANTag, ok bool, p Path) (bool, Path) {
	if keys[OffIPProto] != ipProtoUDP || keys.Flags()&FlagIsFragment != 0 || d.flags&(FlagStopAtEncap|FlagStopBeforeEncap) != 0 {
		return ok, p
	}
	if d.flags&FlagStopAtFlowLabel != 0 && keys.AddrType() == AddrIPv6 && keys.FlowLabel() != 0 {
		return ok, p
	}
	if _, _, _, enters := d.desc.udpEncap(frame, int(keys.THoff()), keys.AddrType() == AddrIPv4); !enters {
		return ok, p
	}
	if s, fast := p.Shape(); fast {
		d.counters.Shape[s].Fast--
		d.counters.Shape[s].Declined++
		d.counters.Shape[s].Slow++
	}
	if tag.IsZero() {
		return dissectWith(keys, frame, EthProtocol(frame), EthernetHdrLen, d.flags, d.desc), PathSlow
	}
	return dissectTaggedWith(keys, frame, EthProtocol(frame), EthernetHdrLen, tag, d.flags, d.desc), PathSlow
}

// DissectFrame dissects a whole Ethernet frame like the package's DissectFrame and
// says which code produced the keys. The frame's outer headers name at most one
// candidate shape (its class, see ClassifyFrame); when that shape's gate is open
// its fast path is tried, and the slow path runs when it declines, when the gate
// is closed, when the frame has no fast-path shape, or when the flags are not the
// default ones. Frames of other shapes never pay for an open gate: a gate costs
// only its declines, on frames of its own class that its fast path does not cover.
//
// The route goes one way: one dispatch on the ethertype (and for IP the IP
// protocol, through ipRoute) names the class, which the counters count. A
// closed gate is one branch there, to the slow path, which goes on from the
// state past the outer header the dispatch read (an IPv4 header that is no
// fragment, an IPv6 header without a flow label, the VLAN tags, a PPPoE
// header carrying IP; MPLS's step ends the dissection) as its loop would
// after that header, or starts over. An open gate goes on to its shape's
// function (fast.go), which completes the keys or hands the slow path the
// state to resume from. eth+IPv4+TCP/UDP, the most common frame, is written
// here without a call. Frames too short for these reads, and every frame
// under auto mode, go by classPath, which classifies with ClassifyFrame and
// comes back here for the frames of an open gate; the equivalence suite
// holds the counters to ClassifyFrame's class on every frame it tries.
// Under a descent policy every frame goes by divertedPath, which sends the
// frames of a tunnel shape's class (ClassifyFrameDescend) to that shape's
// fast path or the slow path, and checks the others' keys (redescend).
func (d *Dissector) DissectFrame(keys *FlowKeys, frame []byte) (bool, Path) {
	return dispatch(keys, frame, d)
}

// divertedPath takes the frames DissectFrame's dispatch diverts (see
// Dissector.divert) or is too short for: classPath's, and under a descent
// policy the dispatch's own, whose keys it checks (redescend), so that the
// frames without a policy pay nothing for it.
func divertedPath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	if d.divert&divertDescent == 0 {
		return classPath(keys, frame, d)
	}
	if b := frame; d.desc.tunnels&(1<<TunnelVXLAN|1<<TunnelGTPU) != 0 && len(b) >= ethIPv4Len && uint16(b[12])|uint16(b[13])<<8 == basicIPv4 {
		// The tunnel shapes' classes (tunnelShape), for an IPv4 header
		// without options read here, with constant offsets; a frame too
		// short for them is of none.
		if b[EthernetHdrLen+ipv4VerIHL]&0x0f == 5 {
			if b[EthernetHdrLen+ipv4Protocol] == ipProtoUDP {
				switch uint16(b[tunUDPOff+2])<<8 | uint16(b[tunUDPOff+3]) {
				case portVXLAN:
					if d.desc.tunnels.Has(TunnelVXLAN) {
						return vxlanPath(keys, frame, d)
					}
				case portGTPU:
					if d.desc.tunnels.Has(TunnelGTPU) {
						return gtpuPath(keys, frame, d)
					}
				}
			}
		} else if s, ok := d.desc.tunnelShape(frame); ok {
			return tunnelUDPPath(keys, frame, d, s)
		}
	}
	d.divert &^= divertDescent
	ok, p := dispatch(keys, frame, d)
	d.divert |= divertDescent
	return d.redescend(keys, frame, VLANTag{}, ok, p)
}

// dispatch is DissectFrame's dispatch. It takes the Dissector last, so that
// the keys and the frame arrive in the registers the slow path (walk) takes
// them in: a closed gate's route moves no argument.
func dispatch(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	if len(frame) < ethIPv4Len || d.divert != 0 {
		return divertedPath(keys, frame, d)
	}
	le := binary.LittleEndian
	// Little-endian reads written out byte by byte, which leaves no
	// inlining mark (see the note on the key words in fast.go).
	b := (*[ethIPv4Len]byte)(frame)
	h := uint32(b[12]) | uint32(b[13])<<8 | uint32(b[14])<<16 | uint32(b[15])<<24 // ethertype, version and IHL, TOS
	if uint16(h) == basicIPv4 {
		p := b[EthernetHdrLen+ipv4Protocol]
		r := d.ipRoute[p]
		if r < routeOpen {
			d.slowRuns[r]++
			ihl := int(b[EthernetHdrLen+ipv4VerIHL] & 0x0f)
			if ihl < 5 || (uint16(b[EthernetHdrLen+ipv4FragOff])|uint16(b[EthernetHdrLen+ipv4FragOff+1])<<8)&fragMask != 0 {
				return Dissect(keys, frame, EtherTypeIPv4, EthernetHdrLen, d.flags), PathSlow
			}
			// The slow path's IPv4 step, for a header that is no
			// fragment: its keys, then the L4 dispatch past it.
			*keys = FlowKeys{}
			*(*[8]byte)(keys[OffIPv4Src:]) = [8]byte(b[EthernetHdrLen+ipv4SrcAddr:])
			keys[OffAddrType] = byte(AddrIPv4)
			return walk(keys, frame, d.flags, EtherTypeIPv4, EthernetHdrLen+ihl*4, walkAt(p)|atIPProto), PathSlow
		}
		if r == routeL4 && h&typeIHLMask == typeIHL5 && (uint16(b[EthernetHdrLen+ipv4FragOff])|uint16(b[EthernetHdrLen+ipv4FragOff+1])<<8)&fragMask == 0 {
			// l4IPv4's stores, without a call.
			le.PutUint64(keys[wordControl:], bits.RotateLeft64(uint64(ethIPv4Len-portsLen)<<16|uint64(AddrIPv4)<<32, 48))
			le.PutUint64(keys[wordBasic:], bits.RotateLeft64(basicIPv4<<8|uint64(p)<<24, 56))
			*(*[16]byte)(keys[wordVLAN:]) = [16]byte{}
			le.PutUint64(keys[wordPorts:], bits.RotateLeft64(uint64(le.Uint32(b[ethIPv4Len-portsLen:])), 32))
			le.PutUint64(keys[wordAddr0:], bits.RotateLeft64(uint64(le.Uint32(b[EthernetHdrLen+ipv4SrcAddr:])), 32))
			le.PutUint64(keys[wordAddr1:], bits.RotateLeft64(uint64(le.Uint32(b[EthernetHdrLen+ipv4DstAddr:]))<<32, 32))
			*(*[24]byte)(keys[wordAddr2:]) = [24]byte{}
			d.counters.Shape[ShapeEthIP].Fast++
			return true, FastPath(ShapeEthIP)
		}
		switch r {
		case routeIPIP:
			return ipipPath(keys, frame, d)
		case routeGRE:
			return grePath(keys, frame, d)
		}
		// An eth_ip frame its fast path declines (options, a fragment,
		// another protocol): the slow path starts over.
		d.counters.Shape[ShapeEthIP].Declined++
		return slowPath(keys, frame, d, ShapeEthIP)
	}
	switch uint16(h) {
	case basicIPv6:
		if len(frame) < EthernetHdrLen+ipv6HdrLen {
			// Too short for the next header to name the class.
			return classPath(keys, frame, d)
		}
		r := d.ipRoute[frame[EthernetHdrLen+ipv6NextHeader]]
		if r < routeOpen {
			d.slowRuns[r]++
			if b[15]&0x0f|b[16]|b[17] != 0 {
				return Dissect(keys, frame, EtherTypeIPv6, EthernetHdrLen, d.flags), PathSlow
			}
			// The slow path's IPv6 step, for a header without a flow
			// label: its keys, then the L4 dispatch.
			*keys = FlowKeys{}
			a := (*[ipv6HdrLen]byte)(frame[EthernetHdrLen:])
			*(*[16]byte)(keys[OffIPv6Src:]) = [16]byte(a[ipv6SrcAddr:])
			*(*[16]byte)(keys[OffIPv6Src+16:]) = [16]byte(a[ipv6SrcAddr+16:])
			keys[OffAddrType] = byte(AddrIPv6)
			return walk(keys, frame, d.flags, EtherTypeIPv6, EthernetHdrLen+ipv6HdrLen, walkAt(b[EthernetHdrLen+ipv6NextHeader])|atIPProto), PathSlow
		}
		if r == routeL4 && len(frame) >= EthernetHdrLen+ipv6HdrLen+portsLen {
			// l4IPv6 takes every TCP/UDP header: counted before the
			// call, nothing is live after it.
			d.counters.Shape[ShapeEthIP].Fast++
			l4IPv6(keys, (*[ipv6HdrLen + portsLen]byte)(frame[EthernetHdrLen:]), control(EthernetHdrLen+ipv6HdrLen, 0), 0, 0)
			return true, FastPath(ShapeEthIP)
		}
		switch r {
		case routeIPIP:
			return ipipPath(keys, frame, d)
		case routeGRE:
			return grePath(keys, frame, d)
		}
		return ipv6Path(keys, frame, d)
	case vlanLE, qinqLE:
		// The slow path's VLAN steps: the first tag writes the VLAN key,
		// a second only moves on.
		if t := uint16(b[16]) | uint16(b[17])<<8; t == vlanLE || t == qinqLE {
			if d.open.Has(ShapeQinQ) {
				return qinqPath(keys, frame, d)
			}
			d.counters.Shape[ShapeQinQ].Slow++
			*keys = FlowKeys{}
			le.PutUint64(keys[wordVLAN:], vlanWord(frame))
			return walk(keys, frame, d.flags, uint16(b[20])<<8|uint16(b[21]), qinqOff, packAt(0, 0, 2, 1, false)), PathSlow
		}
		if d.open.Has(ShapeVLAN) {
			return vlanPath(keys, frame, d)
		}
		d.counters.Shape[ShapeVLAN].Slow++
		*keys = FlowKeys{}
		le.PutUint64(keys[wordVLAN:], vlanWord(frame))
		return walk(keys, frame, d.flags, uint16(b[16])<<8|uint16(b[17]), vlanOff, packAt(0, 0, 1, 1, false)), PathSlow
	case pppoeLE:
		if d.open.Has(ShapePPPoE) {
			return pppoePath(keys, frame, d)
		}
		d.counters.Shape[ShapePPPoE].Slow++
		// The slow path's PPPoE step, for a valid session header carrying
		// IPv4 or IPv6.
		proto := uint16(EtherTypeIPv4)
		switch ppp := uint16(b[pppoeOff-2]) | uint16(b[pppoeOff-1])<<8; {
		case uint16(b[EthernetHdrLen])|uint16(b[EthernetHdrLen+1])<<8 != pppoeOK:
			return Dissect(keys, frame, EtherTypePPPoES, EthernetHdrLen, d.flags), PathSlow
		case ppp == pppIPv6:
			proto = EtherTypeIPv6
		case ppp != pppIPv4:
			return Dissect(keys, frame, EtherTypePPPoES, EthernetHdrLen, d.flags), PathSlow
		}
		*keys = FlowKeys{}
		return walk(keys, frame, d.flags, proto, pppoeOff, packAt(0, 0, 1, 0, false)), PathSlow
	case mplsUCLE, mplsMCLE:
		if !d.open.Has(ShapeMPLS) {
			// The slow path's MPLS step, which ends the dissection.
			d.counters.Shape[ShapeMPLS].Slow++
			*keys = FlowKeys{}
			return finish(keys, len(frame), EthernetHdrLen+mplsLabelLen, bits.ReverseBytes16(uint16(h)), 0, 0, true), PathSlow
		}
		// putMPLS, without its call, for a frame longer than the label.
		le.PutUint64(keys[wordControl:], controlWord(EthernetHdrLen+mplsLabelLen, AddrNone))
		le.PutUint64(keys[wordBasic:], bits.RotateLeft64(uint64(uint16(h))<<8, 56))
		*(*[64]byte)(keys[wordVLAN:]) = [64]byte{}
		d.counters.Shape[ShapeMPLS].Fast++
		return true, FastPath(ShapeMPLS)
	}
	d.counters.Other++
	return DissectFrame(keys, frame, d.flags), PathSlow
}

// classPath classifies a frame with ClassifyFrame and runs its class's
// fast path or the slow path: for frames too short for DissectFrame's
// reads, and under auto mode, whose every frame it counts and whose frames
// of an open gate it hands back to DissectFrame's dispatch. Each fast path
// is called directly, not through runFast.
func classPath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	ticking := d.divert&divertTick != 0
	if ticking {
		d.auto.tick(d)
	}
	s, ok := ClassifyFrame(frame)
	if !ok {
		d.counters.Other++
		return DissectFrame(keys, frame, d.flags), PathSlow
	}
	if !d.open.Has(s) {
		if d.auto != nil {
			d.auto.probe(s, frame)
		}
		return slowPath(keys, frame, d, s)
	}
	if ticking && len(frame) >= ethIPv4Len {
		// An open gate under auto mode: DissectFrame's dispatch costs
		// fewer instructions than the fast paths below.
		d.divert &^= divertTick
		ok, path := d.DissectFrame(keys, frame)
		d.divert |= divertTick
		return ok, path
	}
	var hit bool
	d.resumeAt.nhoff = 0
	switch s {
	case ShapeEthIP:
		if hit = fastEthIP(keys, frame); !hit && frame[13] != 0x00 { // 0x86dd, not 0x0800
			d.resumeAt.handOverIPv6(keys, frame, EthernetHdrLen, 0, 0, 0)
		}
	case ShapeVLAN:
		hit = fastVLAN(keys, frame, &d.resumeAt)
	case ShapeQinQ:
		hit = fastQinQ(keys, frame, &d.resumeAt)
	case ShapePPPoE:
		hit = fastPPPoE(keys, frame, &d.resumeAt)
	case ShapeMPLS:
		hit = fastMPLS(keys, frame)
	case ShapeIPIP:
		hit = fastTunnel(keys, frame, ipProtoIPIP, &d.resumeAt)
	case ShapeGRE:
		hit = fastTunnel(keys, frame, ipProtoGRE, &d.resumeAt)
	}
	if hit {
		d.counters.Shape[s].Fast++
		return true, FastPath(s)
	}
	return declinedPath(keys, frame, d, s)
}

// slowPath runs the slow path for a frame of class s.
func slowPath(keys *FlowKeys, frame []byte, d *Dissector, s Shape) (bool, Path) {
	d.counters.Shape[s].Slow++
	return DissectFrame(keys, frame, d.flags), PathSlow
}

// runFast runs s's fast path.
func runFast(s Shape, keys *FlowKeys, frame []byte) bool {
	var resumeAt walkState
	switch s {
	case ShapeEthIP:
		return fastEthIP(keys, frame)
	case ShapeVLAN:
		return fastVLAN(keys, frame, &resumeAt)
	case ShapeQinQ:
		return fastQinQ(keys, frame, &resumeAt)
	case ShapePPPoE:
		return fastPPPoE(keys, frame, &resumeAt)
	case ShapeMPLS:
		return fastMPLS(keys, frame)
	case ShapeIPIP:
		return fastTunnel(keys, frame, ipProtoIPIP, &resumeAt)
	case ShapeGRE:
		return fastTunnel(keys, frame, ipProtoGRE, &resumeAt)
	case ShapeVXLAN:
		return fastVXLAN(keys, frame, &vxlanOnly)
	case ShapeGTPU:
		return fastGTPU(keys, frame, &gtpuOnly)
	}
	return false
}

// FastDissect runs only s's fast path over a whole Ethernet frame: true with the
// keys written, or false (a decline; the keys are then undefined). It is for
// tests and benchmarks that hold a fast path to its contract. A tunnel
// shape's runs under the policy entering its tunnel alone (Shape.Tunnel):
// its keys are DissectFrameDescend's under that policy.
func FastDissect(s Shape, keys *FlowKeys, frame []byte) bool {
	return len(frame) >= EthernetHdrLen && runFast(s, keys, frame)
}

// ClassifyFrame names the class of a frame by its outer headers alone (ethertype,
// a second tag, the outer IP protocol): the one shape whose fast path is tried on
// it; false for a frame of no fast-path shape. A frame of a class may still be one
// its fast path declines (IP options, fragments, extension headers, ...).
func ClassifyFrame(f []byte) (Shape, bool) {
	if len(f) < EthernetHdrLen {
		return 0, false
	}
	switch binary.BigEndian.Uint16(f[12:]) {
	case EtherTypeIPv4:
		if len(f) < EthernetHdrLen+ipv4MinHdrLen {
			return ShapeEthIP, true
		}
		return ipShape(f[EthernetHdrLen+ipv4Protocol]), true
	case EtherTypeIPv6:
		if len(f) < EthernetHdrLen+ipv6HdrLen {
			return ShapeEthIP, true
		}
		return ipShape(f[EthernetHdrLen+ipv6NextHeader]), true
	case EtherTypeVLAN, EtherTypeQinQ:
		if len(f) >= EthernetHdrLen+vlanHdrLen && isVLANType(binary.BigEndian.Uint16(f[16:])) {
			return ShapeQinQ, true
		}
		return ShapeVLAN, true
	case EtherTypePPPoES:
		return ShapePPPoE, true
	case EtherTypeMPLSUC, EtherTypeMPLSMC:
		return ShapeMPLS, true
	}
	return 0, false
}

// ClassifyFrameDescend is ClassifyFrame for a Dissector under the descent
// policy d: an IPv4 frame of UDP to the VXLAN or GTP-U port (the UDP header
// where the IHL puts it) is of that tunnel's shape when d enters the
// tunnel, whether or not the tunnel's header then matches.
func ClassifyFrameDescend(f []byte, d Descent) (Shape, bool) {
	if s, ok := d.tunnelShape(f); ok {
		return s, true
	}
	return ClassifyFrame(f)
}

// tunnelShape is the tunnel shape of f's class under d (see
// ClassifyFrameDescend), false for none.
func (d *Descent) tunnelShape(f []byte) (Shape, bool) {
	if d.tunnels&(1<<TunnelVXLAN|1<<TunnelGTPU) == 0 || len(f) < EthernetHdrLen+ipv4MinHdrLen ||
		binary.BigEndian.Uint16(f[12:]) != EtherTypeIPv4 || f[EthernetHdrLen+ipv4Protocol] != ipProtoUDP {
		return 0, false
	}
	off := EthernetHdrLen + int(f[EthernetHdrLen+ipv4VerIHL]&0x0f)*4
	if off < EthernetHdrLen+ipv4MinHdrLen || off > len(f)-4 {
		return 0, false
	}
	switch binary.BigEndian.Uint16(f[off+2:]) {
	case portVXLAN:
		return ShapeVXLAN, d.tunnels.Has(TunnelVXLAN)
	case portGTPU:
		return ShapeGTPU, d.tunnels.Has(TunnelGTPU)
	}
	return 0, false
}

// ipShape is the class of an outer IP header by its protocol: the tunnels
// their own, every other eth_ip.
func ipShape(ipProto uint8) Shape {
	switch ipProto {
	case ipProtoIPIP, ipProtoIPv6:
		return ShapeIPIP
	case ipProtoGRE:
		return ShapeGRE
	}
	return ShapeEthIP
}
