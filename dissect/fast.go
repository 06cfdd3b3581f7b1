package dissect

import (
	"encoding/binary"
	"math/bits"
)

// The fast paths: one straight-line function per packet shape. Each checks the
// whole shape's length once, reslices, and writes the keys with constant offsets,
// so the compiler drops the per-field bounds checks. The contract, enforced by the
// equivalence suite and the differential fuzzer: for any frame, a fast path either
// writes exactly the 80 key bytes the slow path writes and returns true (every
// shape they cover ends as a success), or returns false, and the caller runs the
// slow path, which starts from zeroed keys, so a decline may leave keys half
// written.
//
// They are written for the default flags (FLOW_DISSECTOR_F_STOP_AT_FLOW_LABEL
// alone); Dissector sends any other flag set to the slow path.

// The fast paths write the keys as ten little-endian 8-byte words, each in one
// store, without zeroing them first: the hash reads the keys back in the same
// aligned words, which a store of the same size and place forwards at once,
// whereas narrower or straddling stores make those loads wait. Offsets of the
// words:
const (
	wordControl = 0  // thoff, addr_type, control flags
	wordBasic   = 8  // n_proto (network order), ip_proto, padding, flow label
	wordVLAN    = 16 // VLAN TCI, TPID, ethertype, padding
	wordCVLAN   = 24 // never written
	wordPorts   = 32 // GRE key id, ports
	wordAddr0   = 40 // icmp (never written), address bytes 0..3
	wordAddr1   = 48 // address bytes 4..11 (IPv4: the destination, then 4 unused)
	wordAddr2   = 56 // address bytes 12..19
	wordAddr3   = 64 // address bytes 20..27
	wordAddr4   = 72 // address bytes 28..31, tail padding
	lo32        = 0xffffffff
)

// The words are built by the functions below (controlWord, basicWord8,
// hiWord, loWord), which hide from the compiler which of their bytes are
// zero: knowing it, the compiler splits a word's store into pieces (a byte, a
// half, zero words), which costs instructions and defeats store forwarding.
// Each store is written where its word is computed, on the same line: an
// inlined PutUint64 whose line holds no instruction of its own leaves a NOP
// behind (the inlining mark).

// controlWord is key word 0: thoff and addr_type, no control flags.
func controlWord(thoff int, at AddrType) uint64 {
	return bits.RotateLeft64(uint64(uint16(thoff))<<16|uint64(at)<<32, 48)
}

// basicWord8 is key word 8: n_proto as it lies in the frame (nProtoLE, its
// little-endian reading), ip_proto, the flow label.
func basicWord8(nProtoLE uint16, ipProto uint8, label uint32) uint64 {
	return bits.RotateLeft64(uint64(nProtoLE)<<8|uint64(ipProto)<<24|uint64(label)<<40, 56)
}

// hiWord is v<<32, loWord is v: a word whose other half is zero.
func hiWord(v uint32) uint64 { return bits.RotateLeft64(uint64(v), 32) }
func loWord(v uint32) uint64 { return bits.RotateLeft64(uint64(v)<<32, 32) }

// Key bytes 8..11 (n_proto in network order, ip_proto, padding) as one
// little-endian word.
func basicWord(nProto uint16, ipProto uint8) uint32 {
	return uint32(nProto>>8) | uint32(nProto&0xff)<<8 | uint32(ipProto)<<16
}

// The IPv4 and IPv6 ethertypes as they lie in a frame, read little-endian.
const (
	basicIPv4 = EtherTypeIPv4>>8 | EtherTypeIPv4&0xff<<8
	basicIPv6 = EtherTypeIPv6>>8 | EtherTypeIPv6&0xff<<8
)

// putControl writes key bytes 0..7: thoff, addr_type and the control flags.
func putControl(keys *FlowKeys, thoff int, addrType AddrType, ctl ControlFlags) {
	binary.LittleEndian.PutUint64(keys[OffTHoff:], uint64(uint16(thoff))|uint64(addrType)<<16|uint64(ctl)<<32)
}

// matchIPv4L4 and putIPv4L4 are the IPv4 tail of the shapes: an IPv4 header
// without options or fragmentation at off, followed by at least the 4 port
// bytes of TCP or UDP. matchIPv4L4 says whether the header is one they cover,
// and its IP protocol; a decline leaves the keys alone. It is small enough to
// be inlined.
func matchIPv4L4(f []byte, off int) (uint8, bool) {
	if off > len(f)-(ipv4MinHdrLen+portsLen) {
		return 0, false
	}
	b := f[off : off+ipv4MinHdrLen+portsLen]
	p := b[ipv4Protocol]
	return p, b[ipv4VerIHL]&0x0f == 5 && binary.BigEndian.Uint16(b[ipv4FragOff:])&(ipv4MoreFrags|ipv4OffsetMsk) == 0 &&
		(p == ipProtoTCP || p == ipProtoUDP)
}

// putIPv4L4 writes the whole keys of the header matchIPv4L4 accepted (b, with
// the ports), at thoff less 20 in the frame, with the VLAN word of the tag
// before it (0 for none).
func putIPv4L4(keys *FlowKeys, b *[ipv4MinHdrLen + portsLen]byte, thoff int, p uint8, vlan uint64) {
	le := binary.LittleEndian
	le.PutUint64(keys[wordControl:], controlWord(thoff, AddrIPv4))
	le.PutUint64(keys[wordBasic:], basicWord8(basicIPv4, p, 0))
	le.PutUint64(keys[wordVLAN:], vlan)
	le.PutUint64(keys[wordPorts:], hiWord(le.Uint32(b[ipv4MinHdrLen:])))
	le.PutUint64(keys[wordAddr0:], hiWord(le.Uint32(b[ipv4SrcAddr:])))
	le.PutUint64(keys[wordAddr1:], loWord(le.Uint32(b[ipv4DstAddr:])))
	*(*[8]byte)(keys[wordCVLAN:]) = [8]byte{}
	*(*[24]byte)(keys[wordAddr2:]) = [24]byte{}
}

// fastIPv6L4 writes the keys of an IPv6 header at off followed by TCP or UDP, or,
// for a non-zero flow label, the keys of the label stop (the default flags stop
// there, whatever follows), with the VLAN word of the tag before it (0 for
// none). It writes all the keys when it matches, none when it declines.
func fastIPv6L4(keys *FlowKeys, f []byte, off int, vlan uint64) bool {
	if off > len(f)-ipv6HdrLen {
		return false
	}
	b := (*[ipv6HdrLen]byte)(f[off:])
	next := b[ipv6NextHeader]
	label := binary.BigEndian.Uint32(b[0:]) & ipv6LabelMask
	le := binary.LittleEndian
	var ports uint64
	if label == 0 {
		if off > len(f)-(ipv6HdrLen+portsLen) || (next != ipProtoTCP && next != ipProtoUDP) {
			return false
		}
		ports = hiWord(le.Uint32(f[off+ipv6HdrLen:]))
	}
	le.PutUint64(keys[wordControl:], controlWord(off+ipv6HdrLen, AddrIPv6))
	le.PutUint64(keys[wordBasic:], basicWord8(basicIPv6, next, label))
	le.PutUint64(keys[wordVLAN:], vlan)
	*(*[8]byte)(keys[wordCVLAN:]) = [8]byte{}
	le.PutUint64(keys[wordPorts:], ports)
	// The addresses lie at key bytes 44..75 as at header bytes 8..39.
	le.PutUint64(keys[wordAddr0:], hiWord(le.Uint32(b[8:])))
	a1, a2, a3 := le.Uint64(b[12:]), le.Uint64(b[20:]), le.Uint64(b[28:])
	le.PutUint64(keys[wordAddr1:], a1)
	le.PutUint64(keys[wordAddr2:], a2)
	le.PutUint64(keys[wordAddr3:], a3)
	le.PutUint64(keys[wordAddr4:], loWord(le.Uint32(b[36:])))
	return true
}

// handOverIPv4 records in st where the slow path goes on after matchIPv4L4
// declined the IPv4 header at off, behind outer headers that took numHdrs
// re-dispatches and vlanLevel tags, and leaves the keys as the slow path has
// them there, with the VLAN word vlan. A header declined only for its
// options, or for what follows it, is handed over past itself: the keys hold
// what the slow path's IPv4 step writes, and the slow path goes on at its L4
// dispatch, so that the header is not read twice. Any other is left to the
// slow path's own IPv4 step.
func (st *walkState) handOverIPv4(keys *FlowKeys, f []byte, off, numHdrs int, vlanLevel uint8, vlan uint64) {
	*keys = FlowKeys{}
	binary.LittleEndian.PutUint64(keys[wordVLAN:], vlan)
	st.set(EtherTypeIPv4, off, 0, 0, numHdrs, vlanLevel, false)
	if off > len(f)-ipv4MinHdrLen {
		return
	}
	b := f[off : off+ipv4MinHdrLen]
	ihl := int(b[ipv4VerIHL] & 0x0f)
	if ihl < 5 || binary.BigEndian.Uint16(b[ipv4FragOff:])&(ipv4MoreFrags|ipv4OffsetMsk) != 0 {
		return // a fragment, or a bad IHL: the slow path's IPv4 step decides
	}
	copy(keys[OffIPv4Src:OffIPv4Src+8], b[ipv4SrcAddr:ipv4SrcAddr+8])
	binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv4))
	st.nhoff, st.ipProto, st.atIPProto = off+ihl*4, b[ipv4Protocol], true
}

// handOverIPv6 is handOverIPv4 for a header fastIPv6L4 declined: one
// without a flow label, followed by an extension header, another protocol or
// a truncated TCP/UDP header, goes on at the slow path's L4 dispatch.
func (st *walkState) handOverIPv6(keys *FlowKeys, f []byte, off, numHdrs int, vlanLevel uint8, vlan uint64) {
	*keys = FlowKeys{}
	binary.LittleEndian.PutUint64(keys[wordVLAN:], vlan)
	st.set(EtherTypeIPv6, off, 0, 0, numHdrs, vlanLevel, false)
	if off > len(f)-ipv6HdrLen {
		return
	}
	b := f[off : off+ipv6HdrLen]
	if binary.BigEndian.Uint32(b)&ipv6LabelMask != 0 {
		return // not declined by fastIPv6L4; the slow path's step decides
	}
	copy(keys[OffIPv6Src:OffIPv6Src+32], b[ipv6SrcAddr:ipv6SrcAddr+32])
	binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv6))
	st.nhoff, st.ipProto, st.atIPProto = off+ipv6HdrLen, b[ipv6NextHeader], true
}

// fastEthIPv4 is the eth_ip shape with IPv4: Ethernet, IPv4 without options or
// fragmentation, TCP or UDP, at constant offsets.
func fastEthIPv4(keys *FlowKeys, f []byte) bool {
	p, ok := matchEthIPv4(f)
	if ok {
		putIPv4L4(keys, (*[ipv4MinHdrLen + portsLen]byte)(f[EthernetHdrLen:]), ethIPv4Len-portsLen, p, 0)
	}
	return ok
}

// Little-endian words over frame bytes 12..15 and 20..23: the masks keep the
// ethertype and the IHL nibble, then the MF bit and the fragment offset. One
// compare each instead of five.
const (
	ethIPv4Len  = EthernetHdrLen + ipv4MinHdrLen + portsLen
	typeIHLMask = 0x0f_ffff
	typeIHL5    = 0x05_0008 // 08 00, IHL 5
	fragMask    = 0xff3f    // MF and offset, as they lie in bytes 20..21
)

// matchEthIPv4 says whether f is an eth_ip IPv4 frame the fast path covers, and
// its IP protocol.
func matchEthIPv4(f []byte) (uint8, bool) {
	if len(f) < ethIPv4Len {
		return 0, false
	}
	le := binary.LittleEndian
	w := le.Uint32(f[EthernetHdrLen+ipv4FragOff:])
	p := uint8(w >> 24)
	return p, le.Uint32(f[12:])&typeIHLMask == typeIHL5 && w&fragMask == 0 && (p == ipProtoTCP || p == ipProtoUDP)
}

// fastEthIPv6 is the eth_ip shape with IPv6: TCP or UDP, or a flow-label stop.
func fastEthIPv6(keys *FlowKeys, f []byte) bool {
	if binary.BigEndian.Uint16(f[12:]) != EtherTypeIPv6 {
		return false
	}
	return fastIPv6L4(keys, f, EthernetHdrLen, 0)
}

// vlanWord is the VLAN key word of the tag at f[12:18] (TPID, TCI, inner type):
// the TCI in host order without DEI, then TPID and type as they lie.
func vlanWord(f []byte) uint64 {
	t := (*[6]byte)(f[12:])
	le := binary.LittleEndian
	tci := binary.BigEndian.Uint16(t[2:]) &^ vlanDEIBit
	return bits.RotateLeft64(uint64(tci)<<16|uint64(le.Uint16(t[0:]))<<32|uint64(le.Uint16(t[4:]))<<48, 48)
}

func isVLANType(t uint16) bool { return t == EtherTypeVLAN || t == EtherTypeQinQ }

// fastVLAN is the vlan shape: one 802.1Q or 802.1AD tag, then IP and TCP/UDP.
// A frame declined past the tag leaves in *resumeAt where the slow path goes
// on, with the VLAN key written (see handOverIPv4).
func fastVLAN(keys *FlowKeys, f []byte, resumeAt *walkState) bool {
	const off = EthernetHdrLen + vlanHdrLen
	if len(f) < off || !isVLANType(binary.BigEndian.Uint16(f[12:])) {
		return false
	}
	vlan := vlanWord(f)
	switch proto := binary.BigEndian.Uint16(f[16:]); proto {
	case EtherTypeIPv4:
		if p, ok := matchIPv4L4(f, off); ok {
			putIPv4L4(keys, (*[ipv4MinHdrLen + portsLen]byte)(f[off:]), off+ipv4MinHdrLen, p, vlan)
			return true
		}
		resumeAt.handOverIPv4(keys, f, off, 1, 1, vlan)
	case EtherTypeIPv6:
		if fastIPv6L4(keys, f, off, vlan) {
			return true
		}
		resumeAt.handOverIPv6(keys, f, off, 1, 1, vlan)
	default:
		*keys = FlowKeys{}
		binary.LittleEndian.PutUint64(keys[wordVLAN:], vlan)
		resumeAt.set(proto, off, 0, 0, 1, 1, false)
	}
	return false
}

// fastQinQ is the qinq shape: two tags (only the outer one is stored), then IP and
// TCP/UDP. Its declines are recorded like fastVLAN's. It repeats fastVLAN's
// body rather than share a helper, which would cost the hits a call.
func fastQinQ(keys *FlowKeys, f []byte, resumeAt *walkState) bool {
	const off = EthernetHdrLen + 2*vlanHdrLen
	if len(f) < off || !isVLANType(binary.BigEndian.Uint16(f[12:])) ||
		!isVLANType(binary.BigEndian.Uint16(f[16:])) {
		return false
	}
	vlan := vlanWord(f)
	switch proto := binary.BigEndian.Uint16(f[20:]); proto {
	case EtherTypeIPv4:
		if p, ok := matchIPv4L4(f, off); ok {
			putIPv4L4(keys, (*[ipv4MinHdrLen + portsLen]byte)(f[off:]), off+ipv4MinHdrLen, p, vlan)
			return true
		}
		resumeAt.handOverIPv4(keys, f, off, 2, 1, vlan)
	case EtherTypeIPv6:
		if fastIPv6L4(keys, f, off, vlan) {
			return true
		}
		resumeAt.handOverIPv6(keys, f, off, 2, 1, vlan)
	default:
		*keys = FlowKeys{}
		binary.LittleEndian.PutUint64(keys[wordVLAN:], vlan)
		resumeAt.set(proto, off, 0, 0, 2, 1, false)
	}
	return false
}

// fastPPPoE is the pppoe shape: a valid PPPoE session header carrying IPv4 or
// IPv6, then TCP/UDP. A frame declined past the PPPoE header leaves in
// *resumeAt where the slow path goes on (see handOverIPv4).
func fastPPPoE(keys *FlowKeys, f []byte, resumeAt *walkState) bool {
	const off = EthernetHdrLen + pppoeSesHdrLen
	if len(f) < off || binary.BigEndian.Uint16(f[12:]) != EtherTypePPPoES {
		return false
	}
	h := pppoeSession(f[EthernetHdrLen:off])
	if !h.Valid() {
		return false
	}
	switch h.Protocol() {
	case pppProtoIPv4:
		if p, ok := matchIPv4L4(f, off); ok {
			putIPv4L4(keys, (*[ipv4MinHdrLen + portsLen]byte)(f[off:]), off+ipv4MinHdrLen, p, 0)
			return true
		}
		resumeAt.handOverIPv4(keys, f, off, 1, 0, 0)
	case pppProtoIPv6:
		if fastIPv6L4(keys, f, off, 0) {
			return true
		}
		resumeAt.handOverIPv6(keys, f, off, 1, 0, 0)
	}
	return false
}

// fastMPLS is the mpls shape: flow_keys_dissector uses no MPLS key, so the slow
// path steps over one label and stops, whatever follows, without reading it:
// even a frame cut inside the label is a success, with thoff at the frame's
// end. It covers its whole class and never declines.
func fastMPLS(keys *FlowKeys, f []byte) bool {
	t := binary.BigEndian.Uint16(f[12:])
	if t != EtherTypeMPLSUC && t != EtherTypeMPLSMC {
		return false
	}
	putMPLS(keys, f)
	return true
}

// putMPLS writes the keys of an MPLS frame (ethertype at f[12:14]).
func putMPLS(keys *FlowKeys, f []byte) {
	le := binary.LittleEndian
	le.PutUint64(keys[wordControl:], controlWord(min(EthernetHdrLen+mplsLabelLen, len(f)), AddrNone))
	le.PutUint64(keys[wordBasic:], basicWord8(le.Uint16(f[12:]), 0, 0))
	*(*[64]byte)(keys[wordVLAN:]) = [64]byte{}
}

// fastTunnel is the ipip and gre shapes: Ethernet, then a chain of IPv4/IPv6
// headers joined by IP-in-IP (4, 41) or GRE version 0 (with optional checksum, key
// and sequence, carrying IP or, by transparent Ethernet bridging, an untagged
// Ethernet frame of IP; no routing or other flags), ending in TCP or UDP. It
// descends in a loop that counts re-dispatches like the slow path and declines at
// MaxReDispatch, so the slow path decides what the bound does, at the same depth.
// A shape must start with the tunnel it is named after (first == ipProtoIPIP for
// both 4 and 41, or ipProtoGRE).
//
// A decline inside the chain (an inner header with options, a fragment, a
// flow label, another protocol, the bound) leaves in *resumeAt the slow
// path's state where the loop stopped: the rounds before it wrote the keys
// the slow path's would have (addresses, address type, GRE key id; the ports
// stay zero, the last fields are written at the end), so the slow path goes
// on from there instead of reading the outer headers again. resumeAt is left
// alone (nhoff 0) when the frame is declined before the keys are touched.
func fastTunnel(keys *FlowKeys, f []byte, first uint8, resumeAt *walkState) bool {
	proto := binary.BigEndian.Uint16(f[12:])
	// Decline other shapes before touching the keys: the outer IP protocol.
	switch {
	case proto == EtherTypeIPv4 && len(f) >= EthernetHdrLen+ipv4MinHdrLen:
		if p := f[EthernetHdrLen+ipv4Protocol]; p != first && !(first == ipProtoIPIP && p == ipProtoIPv6) {
			return false
		}
	case proto == EtherTypeIPv6 && len(f) >= EthernetHdrLen+ipv6HdrLen:
		if p := f[EthernetHdrLen+ipv6NextHeader]; p != first && !(first == ipProtoIPIP && p == ipProtoIPv6) {
			return false
		}
	default:
		return false
	}
	le := binary.LittleEndian
	off := EthernetHdrLen
	var ctl ControlFlags
	var ipProto uint8 // the last IP protocol read, as the slow path keeps it
	*keys = FlowKeys{}
	for depth := 0; ; depth++ {
		// A decline in this switch: the slow path goes on at the top of
		// this round, on proto at off.
		switch proto {
		case EtherTypeIPv4:
			if off > len(f)-ipv4MinHdrLen {
				resumeAt.set(proto, off, ipProto, ctl, depth, 0, false)
				return false
			}
			b := f[off : off+ipv4MinHdrLen]
			if b[ipv4VerIHL]&0x0f != 5 || binary.BigEndian.Uint16(b[ipv4FragOff:])&(ipv4MoreFrags|ipv4OffsetMsk) != 0 {
				resumeAt.set(proto, off, ipProto, ctl, depth, 0, false)
				return false
			}
			ipProto = b[ipv4Protocol]
			le.PutUint64(keys[OffIPv4Src:], le.Uint64(b[ipv4SrcAddr:]))
			binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv4))
			off += ipv4MinHdrLen
		case EtherTypeIPv6:
			if off > len(f)-ipv6HdrLen {
				resumeAt.set(proto, off, ipProto, ctl, depth, 0, false)
				return false
			}
			b := f[off : off+ipv6HdrLen]
			if binary.BigEndian.Uint32(b)&ipv6LabelMask != 0 {
				resumeAt.set(proto, off, ipProto, ctl, depth, 0, false)
				return false
			}
			ipProto = b[ipv6NextHeader]
			a0, a1, a2, a3 := le.Uint64(b[ipv6SrcAddr:]), le.Uint64(b[ipv6SrcAddr+8:]), le.Uint64(b[ipv6SrcAddr+16:]), le.Uint64(b[ipv6SrcAddr+24:])
			le.PutUint64(keys[OffIPv6Src:], a0)
			le.PutUint64(keys[OffIPv6Src+8:], a1)
			le.PutUint64(keys[OffIPv6Src+16:], a2)
			le.PutUint64(keys[OffIPv6Src+24:], a3)
			binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv6))
			off += ipv6HdrLen
		default:
			resumeAt.set(proto, off, ipProto, ctl, depth, 0, false)
			return false
		}
		// A decline from here on: the slow path goes on at this round's L4
		// dispatch, on ipProto past the IP header (of type proto) just read.
		switch ipProto {
		case ipProtoTCP, ipProtoUDP:
			if off > len(f)-portsLen {
				resumeAt.set(proto, off, ipProto, ctl, depth, 0, true)
				return false
			}
			le.PutUint32(keys[OffPorts:], le.Uint32(f[off:]))
			binary.LittleEndian.PutUint16(keys[OffTHoff:], uint16(off))
			binary.LittleEndian.PutUint32(keys[OffFlags:], uint32(ctl))
			binary.LittleEndian.PutUint32(keys[OffNProto:], basicWord(proto, ipProto))
			return true
		case ipProtoIPIP:
			proto = EtherTypeIPv4
		case ipProtoIPv6:
			proto = EtherTypeIPv6
		case ipProtoGRE:
			if off > len(f)-greBaseHdrLen {
				resumeAt.set(proto, off, ipProto, ctl, depth, 0, true)
				return false
			}
			h := greHeader(f[off : off+greBaseHdrLen])
			fv := h.FlagsVersion()
			if fv&^(greChecksum|greKey|greSeq) != 0 {
				resumeAt.set(proto, off, ipProto, ctl, depth, 0, true)
				return false // routing, version 1+, ack, recursion or reserved bits
			}
			inner := h.Protocol()
			n := greBaseHdrLen
			if fv&greChecksum != 0 {
				n += 4
			}
			if fv&greKey != 0 {
				if off+n > len(f)-4 {
					resumeAt.set(proto, off, ipProto, ctl, depth, 0, true)
					return false
				}
				le.PutUint32(keys[OffKeyID:], le.Uint32(f[off+n:]))
				n += 4
			}
			if fv&greSeq != 0 {
				n += 4
			}
			if inner == EtherTypeTEB {
				// Transparent Ethernet bridging: the inner Ethernet header's
				// type goes on in the same re-dispatch; a tagged inner frame
				// (its VLAN key) is declined by the next round.
				if off+n > len(f)-EthernetHdrLen {
					resumeAt.set(proto, off, ipProto, ctl, depth, 0, true)
					return false
				}
				inner = binary.BigEndian.Uint16(f[off+n+12:])
				n += EthernetHdrLen
			}
			proto = inner
			off += n
		default:
			resumeAt.set(proto, off, ipProto, ctl, depth, 0, true)
			return false
		}
		ctl |= FlagEncapsulation
		if depth+1 >= MaxReDispatch {
			resumeAt.set(proto, off, ipProto, ctl, depth+1, 0, false)
			return false
		}
	}
}

// set records a resume point field by field: built whole and copied, the
// struct would be read back in wider words than it was written, which
// stalls the store forwarding (a decline took 15 ns more).
// Every field is set: a Dissector keeps one walkState for all its frames.
func (st *walkState) set(proto uint16, nhoff int, ipProto uint8, ctl ControlFlags, numHdrs int, vlanLevel uint8, atIPProto bool) {
	st.proto, st.nhoff, st.ipProto, st.ctl = proto, nhoff, ipProto, ctl
	st.numHdrs, st.vlanLevel, st.atIPProto = numHdrs, vlanLevel, atIPProto
}
