package hash

import "encoding/binary"

// NICFields says which fields a NIC feeds its Toeplitz hash, per flow type,
// beyond the source and destination addresses it always hashes: the ports
// of TCP and UDP over IPv4 and IPv6 (what `ethtool -n DEV rx-flow-hash tcp4`
// shows as "L4 bytes 0 & 1 [TCP/UDP src port]" and "L4 bytes 2 & 3").
type NICFields struct {
	TCP4Ports, UDP4Ports, TCP6Ports, UDP6Ports bool
}

// DefaultNICFields hashes the ports of unfragmented TCP and UDP over both
// families: most NICs' default, virtio-net's included.
var DefaultNICFields = NICFields{TCP4Ports: true, UDP4Ports: true, TCP6Ports: true, UDP6Ports: true}

// Ethernet types and IP protocols the NIC view reads.
const (
	etherTypeVLAN   = 0x8100
	etherTypeQinQ   = 0x88a8
	etherTypeIPv4   = 0x0800
	etherTypeIPv6   = 0x86dd
	protoTCP        = 6
	protoUDP        = 17
	protoHopOpts    = 0
	protoRouting    = 43
	protoFragment   = 44
	protoDstOpts    = 60
	protoAH         = 51
	maxVLANTags     = 2
	maxIPv6ExtHdrs  = 8
	ipv4FragMask    = 0x3fff // MF and the fragment offset
	ipv6FixedHdrLen = 40
)

// FromFrame returns the hash a NIC computes for an Ethernet frame, as the
// NIC sees it rather than as the kernel's dissector does: over the
// outermost IP header, after at most two VLAN tags (a NIC that strips a tag
// hashes the same header behind it), the ports of TCP and UDP as f says
// when the packet is not a fragment, the addresses alone otherwise; a
// tunnel's outer addresses, never its inner ones. IPv4's ports are read at
// the offset its IHL gives; IPv6 hop-by-hop, routing, destination options
// and authentication headers are skipped to find them (the addresses stay
// the fixed header's); a fragment header means no ports, and so does a
// frame too short to hold them. ok is false for a frame that is not IP, or
// too short for the addresses, which a NIC reports no hash for. This is
// virtio-net's RSS in QEMU, checked frame by frame on the corpus in the
// virtio lab (docs/virtio-lab.md). It does not allocate.
func (t *Toeplitz) FromFrame(frame []byte, f NICFields, sym Symmetry) (h uint32, ok bool) {
	return t.fromFrame(frame, f, portsByFields, sym)
}

// FromFrameDeclared is FromFrame with the ports taken as a device declared
// it hashed them (its hash type's L4 bit, kernel.RSSHashType.IsL4) rather
// than as NICFields would have it: the hash a device that says what it
// hashed must have computed. With withPorts and no room for the ports
// behind the IP header (a fragment header, a short frame), ok is false.
func (t *Toeplitz) FromFrameDeclared(frame []byte, withPorts bool, sym Symmetry) (h uint32, ok bool) {
	mode := portsNever
	if withPorts {
		mode = portsAlways
	}
	return t.fromFrame(frame, NICFields{}, mode, sym)
}

// How fromFrame decides on the ports.
const (
	portsByFields = iota // TCP and UDP as NICFields says, unfragmented
	portsAlways          // whatever the protocol, fragments excepted
	portsNever
)

func (t *Toeplitz) fromFrame(frame []byte, f NICFields, mode int, sym Symmetry) (h uint32, ok bool) {
	be := binary.BigEndian
	if len(frame) < 14 {
		return 0, false
	}
	et, off := be.Uint16(frame[12:]), 14
	for range maxVLANTags {
		if et != etherTypeVLAN && et != etherTypeQinQ {
			break
		}
		if len(frame) < off+4 {
			return 0, false
		}
		et, off = be.Uint16(frame[off+2:]), off+4
	}
	var in [36]byte
	var n, l4 int // bytes per address; offset of the L4 header, 0 for no ports
	switch et {
	case etherTypeIPv4:
		if len(frame) < off+20 {
			return 0, false
		}
		// The addresses are at fixed offsets; the ports at the header
		// length the IHL gives, whatever it is, as QEMU's virtio-net reads
		// them (an IHL below 5 is no IPv4 header, but the device hashes it).
		ihl := int(frame[off]&0x0f) * 4
		n = 4
		copy(in[:8], frame[off+12:off+20])
		proto := frame[off+9]
		frag := be.Uint16(frame[off+6:])&ipv4FragMask != 0
		if !frag && (mode == portsAlways || mode == portsByFields && (proto == protoTCP && f.TCP4Ports || proto == protoUDP && f.UDP4Ports)) {
			l4 = off + ihl
		}
	case etherTypeIPv6:
		if len(frame) < off+ipv6FixedHdrLen {
			return 0, false
		}
		n = 16
		copy(in[:32], frame[off+8:off+40])
		next, at := frame[off+6], off+ipv6FixedHdrLen
		for range maxIPv6ExtHdrs {
			if next != protoHopOpts && next != protoRouting && next != protoDstOpts && next != protoAH || len(frame) < at+8 {
				break
			}
			hdrLen := (int(frame[at+1]) + 1) * 8
			if next == protoAH {
				hdrLen = (int(frame[at+1]) + 2) * 4
			}
			next, at = frame[at], at+hdrLen
		}
		if next != protoFragment && (mode == portsAlways || mode == portsByFields && (next == protoTCP && f.TCP6Ports || next == protoUDP && f.UDP6Ports)) {
			l4 = at
		}
	default:
		return 0, false
	}
	withPorts := l4 > 0 && len(frame) >= l4+4
	if mode == portsAlways && !withPorts {
		return 0, false
	}
	if withPorts {
		copy(in[2*n:2*n+4], frame[l4:l4+4])
	}
	if sym != SymmetricNone {
		symmetrize(in[0:n], in[n:2*n], sym)
		symmetrize(in[2*n:2*n+2], in[2*n+2:2*n+4], sym)
	}
	return t.Hash(in[:tupleLen(n, withPorts)]), true
}

// HashFrameNIC is FromFrame with the steering's key and symmetry: the hash
// a NIC with that key computes for frame. ok is false unless the steering
// hashes with Toeplitz (KindToeplitz).
func (s *Steering) HashFrameNIC(frame []byte, f NICFields) (h uint32, ok bool) {
	if s.toeplitz == nil {
		return 0, false
	}
	return s.toeplitz.FromFrame(frame, f, s.sym)
}

// HashFrameDeclared is FromFrameDeclared with the steering's key and
// symmetry. ok is false unless the steering hashes with Toeplitz.
func (s *Steering) HashFrameDeclared(frame []byte, withPorts bool) (h uint32, ok bool) {
	if s.toeplitz == nil {
		return 0, false
	}
	return s.toeplitz.FromFrameDeclared(frame, withPorts, s.sym)
}
