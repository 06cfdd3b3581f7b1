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

// The words are written as bits.RotateLeft64 of a shifted value: the
// rotations hide from the compiler which bytes of a word are zero, which would
// make it split the word's store into pieces (a byte, a half, zero words),
// more instructions and stores the hash's loads cannot be forwarded from. Each
// is written out in the statement that stores it rather than in a helper: an
// inlined call whose statement has no instruction of its own leaves a NOP
// behind (its inlining mark), and so would a helper. Words of zeros are
// stored as arrays, for the same reason. In the rotations:
//
//	control: RotateLeft64(thoff<<16 | addr_type<<32, 48)
//	basic:   RotateLeft64(n_proto<<8 | ip_proto<<24 | flow_label<<40, 56)
//	hi half: RotateLeft64(v, 32)        lo half: RotateLeft64(v<<32, 32)

// controlWord is key word 0 with thoff and addr_type, no control flags (for
// the paths whose count does not depend on it).
func controlWord(thoff int, at AddrType) uint64 {
	return bits.RotateLeft64(uint64(uint16(thoff))<<16|uint64(at)<<32, 48)
}

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

// fastL3 is the tail of every shape: an IPv4 header without
// options or fragmentation, or an IPv6 header, at off (etype is its ethertype
// as it lies in the frame, read little-endian), followed by the ports of TCP
// or UDP (IPv6: or a non-zero flow label, where the default flags stop
// whatever follows), behind outer headers whose only key is the VLAN word vlan
// (0 for none). It writes all the keys when it matches, none when it
// declines. It is l4IPv4 and l4IPv6 behind a bounds check, for the callers
// whose offset or ethertype is not a constant.
func fastL3(keys *FlowKeys, f []byte, off int, etype uint16, vlan uint64) bool {
	switch etype {
	case basicIPv4:
		if off < 0 || off > len(f)-(ipv4MinHdrLen+portsLen) {
			return false
		}
		return l4IPv4(keys, (*[ipv4MinHdrLen + portsLen]byte)(f[off:]), control(off+ipv4MinHdrLen, 0), vlan, 0)
	case basicIPv6:
		if off < 0 || off > len(f)-(ipv6HdrLen+portsLen) {
			return false
		}
		return l4IPv6(keys, (*[ipv6HdrLen + portsLen]byte)(f[off:]), control(off+ipv6HdrLen, 0), vlan, 0)
	}
	return false
}

// control is key word 0 without the address type: thoff and the control
// flags ctl.
func control(thoff int, ctl ControlFlags) uint64 { return uint64(uint16(thoff)) | uint64(ctl)<<32 }

// l4IPv4 is fastL3 for the IPv4 header b (with the 4 bytes after it), with
// key word 0 control (see control), the VLAN word vlan and the key id keyID.
func l4IPv4(keys *FlowKeys, b *[ipv4MinHdrLen + portsLen]byte, control, vlan, keyID uint64) bool {
	le := binary.LittleEndian
	p := b[ipv4Protocol]
	if b[ipv4VerIHL]&0x0f != 5 || le.Uint16(b[ipv4FragOff:])&fragMask != 0 || (p != ipProtoTCP && p != ipProtoUDP) {
		return false
	}
	le.PutUint64(keys[wordControl:], control|uint64(AddrIPv4)<<16)
	le.PutUint64(keys[wordBasic:], bits.RotateLeft64(basicIPv4<<8|uint64(p)<<24, 56))
	le.PutUint64(keys[wordVLAN:], vlan)
	*(*[8]byte)(keys[wordCVLAN:]) = [8]byte{}
	le.PutUint64(keys[wordPorts:], uint64(le.Uint32(b[ipv4MinHdrLen:]))<<32|keyID)
	le.PutUint64(keys[wordAddr0:], bits.RotateLeft64(uint64(le.Uint32(b[ipv4SrcAddr:])), 32))
	le.PutUint64(keys[wordAddr1:], bits.RotateLeft64(uint64(le.Uint32(b[ipv4DstAddr:]))<<32, 32))
	*(*[24]byte)(keys[wordAddr2:]) = [24]byte{}
	return true
}

// l4IPv6 is l4IPv4 for the IPv6 header b. The ports are read whether or not a
// flow label stops the dissection before them: a labelled header with fewer
// than 4 bytes after it is declined, for the slow path.
func l4IPv6(keys *FlowKeys, b *[ipv6HdrLen + portsLen]byte, control, vlan, keyID uint64) bool {
	le := binary.LittleEndian
	next := b[ipv6NextHeader]
	label := binary.BigEndian.Uint32(b[0:]) & ipv6LabelMask
	ports := le.Uint32(b[ipv6HdrLen:])
	if label != 0 {
		ports = 0
	} else if next != ipProtoTCP && next != ipProtoUDP {
		return false
	}
	le.PutUint64(keys[wordControl:], control|uint64(AddrIPv6)<<16)
	le.PutUint64(keys[wordBasic:], bits.RotateLeft64(basicIPv6<<8|uint64(next)<<24|uint64(label)<<40, 56))
	le.PutUint64(keys[wordVLAN:], vlan)
	*(*[8]byte)(keys[wordCVLAN:]) = [8]byte{}
	le.PutUint64(keys[wordPorts:], uint64(ports)<<32|keyID)
	// The addresses lie at key bytes 44..75 as at header bytes 8..39.
	le.PutUint64(keys[wordAddr0:], bits.RotateLeft64(uint64(le.Uint32(b[8:])), 32))
	// The three middle words are read byte by byte: the compiler makes each
	// read one 8-byte load, as from Uint64, without the inlining mark.
	le.PutUint64(keys[wordAddr1:], uint64(b[12])|uint64(b[13])<<8|uint64(b[14])<<16|uint64(b[15])<<24|
		uint64(b[16])<<32|uint64(b[17])<<40|uint64(b[18])<<48|uint64(b[19])<<56)
	le.PutUint64(keys[wordAddr2:], uint64(b[20])|uint64(b[21])<<8|uint64(b[22])<<16|uint64(b[23])<<24|
		uint64(b[24])<<32|uint64(b[25])<<40|uint64(b[26])<<48|uint64(b[27])<<56)
	le.PutUint64(keys[wordAddr3:], uint64(b[28])|uint64(b[29])<<8|uint64(b[30])<<16|uint64(b[31])<<24|
		uint64(b[32])<<32|uint64(b[33])<<40|uint64(b[34])<<48|uint64(b[35])<<56)
	le.PutUint64(keys[wordAddr4:], bits.RotateLeft64(uint64(le.Uint32(b[36:]))<<32, 32))
	return true
}

// handOver records in st where the slow path goes on after fastL3 declined
// the header at off of ethertype etype (little-endian, as fastL3 takes it),
// behind outer headers that took numHdrs re-dispatches and vlanLevel tags and
// whose key is the VLAN word vlan, and leaves the keys as the slow path has
// them there.
func (st *walkState) handOver(keys *FlowKeys, f []byte, off int, etype uint16, numHdrs int, vlanLevel uint8, vlan uint64) {
	switch etype {
	case basicIPv4:
		st.handOverIPv4(keys, f, off, numHdrs, vlanLevel, vlan)
	case basicIPv6:
		st.handOverIPv6(keys, f, off, numHdrs, vlanLevel, vlan)
	default:
		*keys = FlowKeys{}
		binary.LittleEndian.PutUint64(keys[wordVLAN:], vlan)
		st.set(etype>>8|etype<<8, off, 0, 0, numHdrs, vlanLevel, false)
	}
}

// handOverIPv4 records in st where the slow path goes on after fastL3
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
	st.nhoff, st.at = off+ihl*4, st.at|walkAt(b[ipv4Protocol])|atIPProto
}

// handOverIPv6 is handOverIPv4 for an IPv6 header fastL3 declined: one
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
		return // not declined by fastL3; the slow path's step decides
	}
	copy(keys[OffIPv6Src:OffIPv6Src+32], b[ipv6SrcAddr:ipv6SrcAddr+32])
	binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv6))
	st.nhoff, st.at = off+ipv6HdrLen, st.at|walkAt(b[ipv6NextHeader])|atIPProto
}

// fastEthIP is the eth_ip shape: Ethernet, IPv4 without options or
// fragmentation or IPv6, TCP or UDP (IPv6: or a flow-label stop).
func fastEthIP(keys *FlowKeys, f []byte) bool {
	return fastL3(keys, f, EthernetHdrLen, binary.LittleEndian.Uint16(f[12:]), 0)
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

// vlanWord is the VLAN key word of the tag at f[12:18] (TPID, TCI, inner type):
// the TCI in host order without DEI, then TPID and type as they lie.
func vlanWord(f []byte) uint64 {
	t := (*[6]byte)(f[12:])
	le := binary.LittleEndian
	tci := binary.BigEndian.Uint16(t[2:]) &^ vlanDEIBit
	return bits.RotateLeft64(uint64(tci)<<16|uint64(le.Uint16(t[0:]))<<32|uint64(le.Uint16(t[4:]))<<48, 48)
}

func isVLANType(t uint16) bool { return t == EtherTypeVLAN || t == EtherTypeQinQ }

// The VLAN, PPPoE and MPLS ethertypes and PPP protocols as they lie in a frame, read
// little-endian.
const (
	vlanLE   = EtherTypeVLAN>>8 | EtherTypeVLAN&0xff<<8
	qinqLE   = EtherTypeQinQ>>8 | EtherTypeQinQ&0xff<<8
	pppoeLE  = EtherTypePPPoES>>8 | EtherTypePPPoES&0xff<<8
	mplsUCLE = EtherTypeMPLSUC>>8 | EtherTypeMPLSUC&0xff<<8
	mplsMCLE = EtherTypeMPLSMC>>8 | EtherTypeMPLSMC&0xff<<8
	pppIPv4  = pppProtoIPv4>>8 | pppProtoIPv4&0xff<<8
	pppIPv6  = pppProtoIPv6>>8 | pppProtoIPv6&0xff<<8
	pppoeOK  = pppoeVerType // version/type and code bytes of a session frame, read little-endian
	vlanOff  = EthernetHdrLen + vlanHdrLen
	qinqOff  = EthernetHdrLen + 2*vlanHdrLen
	pppoeOff = EthernetHdrLen + pppoeSesHdrLen
)

// vlanTags says how many VLAN tags f (at least qinqOff long, with a VLAN
// ethertype) starts with, one or two, where its IP header starts and its
// ethertype (read little-endian).
func vlanTags(f []byte) (tags, off int, etype uint16) {
	le := binary.LittleEndian
	if t := le.Uint16(f[16:]); t != vlanLE && t != qinqLE {
		return 1, vlanOff, t
	}
	return 2, qinqOff, le.Uint16(f[20:])
}

// pppoeIP is the ethertype (read little-endian) of the IPv4 or IPv6 packet a
// valid PPPoE session header carries (f at least pppoeOff long), false for
// any other.
func pppoeIP(f []byte) (uint16, bool) {
	le := binary.LittleEndian
	if le.Uint16(f[EthernetHdrLen:]) != pppoeOK {
		return 0, false
	}
	switch le.Uint16(f[pppoeOff-2:]) {
	case pppIPv4:
		return basicIPv4, true
	case pppIPv6:
		return basicIPv6, true
	}
	return 0, false
}

// fastVLAN is the vlan shape: one 802.1Q or 802.1AD tag, then IP and TCP/UDP,
// and fastQinQ the qinq shape: two tags (only the outer one is stored). A
// frame declined past the tags leaves in *resumeAt where the slow path goes
// on, with the VLAN key written (see handOverIPv4). The Dissector's dispatch
// runs their steps itself (vlanPath, qinqPath).
func fastVLAN(keys *FlowKeys, f []byte, resumeAt *walkState) bool {
	return fastTagged(keys, f, resumeAt, 1)
}

func fastQinQ(keys *FlowKeys, f []byte, resumeAt *walkState) bool {
	return fastTagged(keys, f, resumeAt, 2)
}

func fastTagged(keys *FlowKeys, f []byte, resumeAt *walkState, want int) bool {
	if len(f) < qinqOff || !isVLANType(binary.BigEndian.Uint16(f[12:])) {
		if len(f) < vlanOff || want != 1 || !isVLANType(binary.BigEndian.Uint16(f[12:])) {
			return false
		}
		// Too short for a second tag: the slow path decides on the one tag.
		resumeAt.handOver(keys, f, vlanOff, binary.LittleEndian.Uint16(f[16:]), 1, 1, vlanWord(f))
		return false
	}
	tags, off, etype := vlanTags(f)
	if tags != want {
		return false
	}
	vlan := vlanWord(f)
	if fastL3(keys, f, off, etype, vlan) {
		return true
	}
	resumeAt.handOver(keys, f, off, etype, tags, 1, vlan)
	return false
}

// fastPPPoE is the pppoe shape: a valid PPPoE session header carrying IPv4 or
// IPv6, then TCP/UDP. A frame declined past the PPPoE header leaves in
// *resumeAt where the slow path goes on (see handOverIPv4). The Dissector's
// dispatch runs its steps itself (pppoePath).
func fastPPPoE(keys *FlowKeys, f []byte, resumeAt *walkState) bool {
	if len(f) < pppoeOff || binary.BigEndian.Uint16(f[12:]) != EtherTypePPPoES {
		return false
	}
	etype, ok := pppoeIP(f)
	if !ok {
		return false
	}
	if fastL3(keys, f, pppoeOff, etype, 0) {
		return true
	}
	resumeAt.handOver(keys, f, pppoeOff, etype, 1, 0, 0)
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
	le.PutUint64(keys[wordBasic:], bits.RotateLeft64(uint64(le.Uint16(f[12:]))<<8, 56))
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
			h := (*greHeader)(f[off:])
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
// stalls the store forwarding.
// Every field is set: a Dissector keeps one walkState for all its frames.
func (st *walkState) set(proto uint16, nhoff int, ipProto uint8, ctl ControlFlags, numHdrs int, vlanLevel uint8, l4 bool) {
	st.proto, st.nhoff, st.at = proto, nhoff, packAt(ipProto, ctl, numHdrs, vlanLevel, l4)
}

// The shapes' routes: dispatch (dissector.go) calls one per open gate, for
// frames at least ethIPv4Len long. Each counts its fast path's hits and, on
// a decline, hands the slow path the state to resume from (declinedPath).

// ipv6Path takes the eth_ip frames over IPv6 of an open gate that dispatch
// does not finish itself: a flow label before another protocol, which the
// fast path covers, and its declines.
func ipv6Path(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	if fastL3(keys, frame, EthernetHdrLen, basicIPv6, 0) {
		d.counters.Shape[ShapeEthIP].Fast++
		return true, FastPath(ShapeEthIP)
	}
	d.resumeAt.handOverIPv6(keys, frame, EthernetHdrLen, 0, 0, 0)
	return declinedPath(keys, frame, d, ShapeEthIP)
}

// vlanPath takes the frames of the vlan class and qinq those of the qinq class:
// fastVLAN's and fastQinQ's steps, with fastL3's written out for constant
// offsets. Each hit returns where its call returns, so that what a decline
// needs is reloaded on a decline only. The one-tag and two-tag steps repeat
// each other on purpose: one piece of code over a variable shape and offset
// counts more instructions per frame (bench/instructions.sh).
func vlanPath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	if len(frame) < vlanOff+ipv4MinHdrLen+portsLen {
		return classPath(keys, frame, d)
	}
	inner := uint16(frame[16]) | uint16(frame[17])<<8 // as le.Uint16, without an inlining mark
	switch inner {
	case basicIPv4:
		if l4IPv4(keys, (*[ipv4MinHdrLen + portsLen]byte)(frame[vlanOff:]), control(vlanOff+ipv4MinHdrLen, 0), vlanWord(frame), 0) {
			d.counters.Shape[ShapeVLAN].Fast++
			return true, FastPath(ShapeVLAN)
		}
	case basicIPv6:
		if len(frame) >= vlanOff+ipv6HdrLen+portsLen &&
			l4IPv6(keys, (*[ipv6HdrLen + portsLen]byte)(frame[vlanOff:]), control(vlanOff+ipv6HdrLen, 0), vlanWord(frame), 0) {
			d.counters.Shape[ShapeVLAN].Fast++
			return true, FastPath(ShapeVLAN)
		}
	}
	d.resumeAt.handOver(keys, frame, vlanOff, inner, 1, 1, vlanWord(frame))
	return declinedPath(keys, frame, d, ShapeVLAN)
}

func qinqPath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	if len(frame) < qinqOff+ipv4MinHdrLen+portsLen {
		return classPath(keys, frame, d)
	}
	inner := uint16(frame[20]) | uint16(frame[21])<<8
	switch inner {
	case basicIPv4:
		if l4IPv4(keys, (*[ipv4MinHdrLen + portsLen]byte)(frame[qinqOff:]), control(qinqOff+ipv4MinHdrLen, 0), vlanWord(frame), 0) {
			d.counters.Shape[ShapeQinQ].Fast++
			return true, FastPath(ShapeQinQ)
		}
	case basicIPv6:
		if len(frame) >= qinqOff+ipv6HdrLen+portsLen &&
			l4IPv6(keys, (*[ipv6HdrLen + portsLen]byte)(frame[qinqOff:]), control(qinqOff+ipv6HdrLen, 0), vlanWord(frame), 0) {
			d.counters.Shape[ShapeQinQ].Fast++
			return true, FastPath(ShapeQinQ)
		}
	}
	d.resumeAt.handOver(keys, frame, qinqOff, inner, 2, 1, vlanWord(frame))
	return declinedPath(keys, frame, d, ShapeQinQ)
}

// pppoePath takes the PPPoE session frames: fastPPPoE's steps, with fastL3's
// written out for constant offsets.
func pppoePath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	b := (*[ethIPv4Len]byte)(frame)
	// Little-endian reads written out byte by byte, which leaves no
	// inlining mark (see the note on the key words in fast.go).
	inner := uint16(b[pppoeOff-2]) | uint16(b[pppoeOff-1])<<8 // the PPP protocol, for now
	switch valid := uint16(b[EthernetHdrLen])|uint16(b[EthernetHdrLen+1])<<8 == pppoeOK; {
	case valid && inner == pppIPv4:
		inner = basicIPv4
		if len(frame) >= pppoeOff+ipv4MinHdrLen+portsLen &&
			l4IPv4(keys, (*[ipv4MinHdrLen + portsLen]byte)(frame[pppoeOff:]), control(pppoeOff+ipv4MinHdrLen, 0), 0, 0) {
			d.counters.Shape[ShapePPPoE].Fast++
			return true, FastPath(ShapePPPoE)
		}
	case valid && inner == pppIPv6:
		inner = basicIPv6
		if len(frame) >= pppoeOff+ipv6HdrLen+portsLen &&
			l4IPv6(keys, (*[ipv6HdrLen + portsLen]byte)(frame[pppoeOff:]), control(pppoeOff+ipv6HdrLen, 0), 0, 0) {
			d.counters.Shape[ShapePPPoE].Fast++
			return true, FastPath(ShapePPPoE)
		}
	default:
		d.resumeAt.nhoff = 0
		return declinedPath(keys, frame, d, ShapePPPoE)
	}
	d.resumeAt.handOver(keys, frame, pppoeOff, inner, 1, 0, 0)
	return declinedPath(keys, frame, d, ShapePPPoE)
}

// outerIP reads the outer header of a tunnel frame of dispatch's (IPv4, or
// IPv6 at least ipv6HdrLen long after Ethernet): where the next header
// starts, the IP protocol, the outer ethertype (as it lies, read
// little-endian), and whether the header is one the straight-line tunnel
// paths cover (IPv4 without options or fragmentation, IPv6 without a flow
// label).
func outerIP(frame []byte) (off int, proto uint8, outer uint16, ok bool) {
	b := (*[ethIPv4Len]byte)(frame)
	outer = uint16(b[12]) | uint16(b[13])<<8 // as le.Uint16, without an inlining mark
	if outer == basicIPv6 {
		return EthernetHdrLen + ipv6HdrLen, b[EthernetHdrLen+ipv6NextHeader], outer,
			binary.BigEndian.Uint32(b[EthernetHdrLen:])&ipv6LabelMask == 0
	}
	return EthernetHdrLen + ipv4MinHdrLen, b[EthernetHdrLen+ipv4Protocol], outer,
		b[EthernetHdrLen+ipv4VerIHL]&0x0f == 5 && (uint16(b[EthernetHdrLen+ipv4FragOff])|uint16(b[EthernetHdrLen+ipv4FragOff+1])<<8)&fragMask == 0
}

// ipipPath takes the frames of the ipip class. It covers one level of IP-in-IP
// straight-line (4in4, 6in4, 6in6) with l4IPv4 or l4IPv6; 4in6 (whose inner
// IPv4 header leaves the outer IPv6 address bytes in the keys), deeper chains
// and what else it does not cover go on to fastTunnel's loop, which starts
// over.
func ipipPath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	off, proto, outer, ok := outerIP(frame)
	switch {
	case !ok:
	case proto == ipProtoIPv6:
		if off <= len(frame)-(ipv6HdrLen+portsLen) &&
			l4IPv6(keys, (*[ipv6HdrLen + portsLen]byte)(frame[off:]), control(off+ipv6HdrLen, FlagEncapsulation), 0, 0) {
			d.counters.Shape[ShapeIPIP].Fast++
			return true, FastPath(ShapeIPIP)
		}
	case outer == basicIPv4: // and proto 4
		// off is inner4in4 here; the constant keeps off out of what has to
		// be kept across l4IPv4's call.
		if len(frame) >= inner4in4+ipv4MinHdrLen+portsLen {
			b := (*[ipv4MinHdrLen + portsLen]byte)(frame[inner4in4:])
			if l4IPv4(keys, b, control(inner4in4+ipv4MinHdrLen, FlagEncapsulation), 0, 0) {
				d.counters.Shape[ShapeIPIP].Fast++
				return true, FastPath(ShapeIPIP)
			}
			if innerIPv4Stops(b) {
				d.resumeAt.handOverInner(keys, frame, inner4in4, ipProtoIPIP, 0)
				return declinedPath(keys, frame, d, ShapeIPIP)
			}
		}
	}
	return tunnelPath(keys, frame, d, ShapeIPIP, ipProtoIPIP)
}

// grePath takes the frames of the gre class. It covers one level of GRE version
// 0 (with optional checksum, key and sequence) into IPv4 or IPv6
// straight-line, as ipip does, and leaves the rest (IPv4 in IPv6, transparent
// Ethernet bridging, other flags, deeper chains) to fastTunnel's loop.
func grePath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	off, _, outer, ok := outerIP(frame)
	if ok && off <= len(frame)-(greBaseHdrLen+8) {
		// Room for the base header, checksum and key.
		g := (*[greBaseHdrLen + 8]byte)(frame[off:])
		fv := binary.BigEndian.Uint16(g[0:])
		inner := uint16(g[2]) | uint16(g[3])<<8
		// Each of checksum, key and sequence adds 4 bytes, in that order.
		c, k, q := int(fv>>15), int(fv>>13&1), int(fv>>12&1)
		keyID := uint64(binary.LittleEndian.Uint32(g[greBaseHdrLen+4*c:]) & -uint32(k))
		off += greBaseHdrLen + 4*(c+k+q)
		switch {
		case fv&^(greChecksum|greKey|greSeq) != 0:
		case inner == basicIPv6:
			if off <= len(frame)-(ipv6HdrLen+portsLen) &&
				l4IPv6(keys, (*[ipv6HdrLen + portsLen]byte)(frame[off:]), control(off+ipv6HdrLen, FlagEncapsulation), 0, keyID) {
				d.counters.Shape[ShapeGRE].Fast++
				return true, FastPath(ShapeGRE)
			}
		case inner == basicIPv4 && outer == basicIPv4:
			if off <= len(frame)-(ipv4MinHdrLen+portsLen) {
				b := (*[ipv4MinHdrLen + portsLen]byte)(frame[off:])
				if l4IPv4(keys, b, control(off+ipv4MinHdrLen, FlagEncapsulation), 0, keyID) {
					d.counters.Shape[ShapeGRE].Fast++
					return true, FastPath(ShapeGRE)
				}
				if innerIPv4Stops(b) {
					d.resumeAt.handOverInner(keys, frame, off, ipProtoGRE, keyID)
					return declinedPath(keys, frame, d, ShapeGRE)
				}
			}
		}
	}
	return tunnelPath(keys, frame, d, ShapeGRE, ipProtoGRE)
}

// tunnelPath takes the frames of tunnel class s (IP protocol ipProto) that the
// straight-line paths of ipip and gre do not cover: fastTunnel's loop, which
// starts over, or the slow path from where it stopped.
func tunnelPath(keys *FlowKeys, frame []byte, d *Dissector, s Shape, ipProto uint8) (bool, Path) {
	d.resumeAt.nhoff = 0
	if fastTunnel(keys, frame, ipProto, &d.resumeAt) {
		d.counters.Shape[s].Fast++
		return true, FastPath(s)
	}
	return declinedPath(keys, frame, d, s)
}

// inner4in4 is where the inner header of IPv4 in IPv4 starts.
const inner4in4 = EthernetHdrLen + ipv4MinHdrLen

// innerIPv4Stops says whether fastTunnel's loop would decline the inner IPv4
// header b at once: one with options or a fragment.
func innerIPv4Stops(b *[ipv4MinHdrLen + portsLen]byte) bool {
	return b[ipv4VerIHL]&0x0f != 5 || (uint16(b[ipv4FragOff])|uint16(b[ipv4FragOff+1])<<8)&fragMask != 0
}

// handOverInner records in st where the slow path goes on, and leaves the
// keys as it has them there, when the straight-line tunnel paths decline the
// inner IPv4 header at off (innerIPv4Stops), one level inside the tunnel
// that the outer IPv4 header of frame enters with IP protocol ipProto (and
// GRE key keyID, as it lies): what fastTunnel's loop would leave on
// declining that header, without the loop reading the outer headers again.
// The slow path goes on at the inner header's round, with the outer
// header's keys: that round costs less than handing it over past the inner
// header, as handOverIPv4 does (bench/instructions.sh and NearMissFrame).
func (st *walkState) handOverInner(keys *FlowKeys, frame []byte, off int, ipProto uint8, keyID uint64) {
	b := (*[ethIPv4Len]byte)(frame)
	*keys = FlowKeys{}
	*(*[8]byte)(keys[OffIPv4Src:]) = [8]byte(b[EthernetHdrLen+ipv4SrcAddr:])
	binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv4))
	binary.LittleEndian.PutUint32(keys[OffKeyID:], uint32(keyID))
	st.set(EtherTypeIPv4, off, ipProto, FlagEncapsulation, 1, 0, false)
}

// declinedPath counts a decline of s's fast path and runs the slow path on
// the frame: from where the fast path stopped (d.resumeAt), in the state the
// slow path would have reached there (re-dispatches, VLAN key, the keys the
// headers before wrote), or from the start when it stopped before its outer
// headers. The headers the fast path has read are not read again, so a
// decline costs about what its tests cost.
func declinedPath(keys *FlowKeys, frame []byte, d *Dissector, s Shape) (bool, Path) {
	d.counters.Shape[s].Declined++
	d.counters.Shape[s].Slow++
	if d.resumeAt.nhoff == 0 {
		return DissectFrame(keys, frame, d.flags), PathSlow
	}
	return walk(keys, frame, d.flags, d.resumeAt.proto, d.resumeAt.nhoff, d.resumeAt.at), PathSlow
}

// The tunnel shapes' offsets: the outer UDP header behind an IPv4 header
// without options, the tunnel header behind it, and the inner IP header.
const (
	tunUDPOff     = EthernetHdrLen + ipv4MinHdrLen
	tunHdrOff     = tunUDPOff + udpHdrLen
	vxlanInnerOff = tunHdrOff + vxlanHdrLen + EthernetHdrLen
	gtpuInnerOff  = tunHdrOff + gtp1HdrLen
)

// outerUDP4 says whether f (at least tunHdrOff long) starts with Ethernet,
// IPv4 without options or fragmentation, and UDP to port: the outer headers
// of the tunnel shapes.
func outerUDP4(f []byte, port uint16) bool {
	b := (*[tunHdrOff]byte)(f)
	return uint16(b[12])|uint16(b[13])<<8 == basicIPv4 && b[EthernetHdrLen+ipv4VerIHL]&0x0f == 5 &&
		(uint16(b[EthernetHdrLen+ipv4FragOff])|uint16(b[EthernetHdrLen+ipv4FragOff+1])<<8)&fragMask == 0 &&
		b[EthernetHdrLen+ipv4Protocol] == ipProtoUDP && binary.BigEndian.Uint16(b[tunUDPOff+2:]) == port
}

// fastVXLAN is the vxlan shape under the policy desc, which enters VXLAN:
// Ethernet, IPv4 without options or fragmentation, UDP to 4789, a VXLAN
// header with only the VNI flag, an untagged inner Ethernet header of IPv4
// or IPv6, then TCP or UDP (see innerL4). The keys are the slow path's
// after the descent: the inner flow's, with FLOW_DIS_ENCAPSULATION.
func fastVXLAN(keys *FlowKeys, f []byte, desc *Descent) bool {
	if len(f) < vxlanInnerOff+ipv4MinHdrLen+portsLen || !desc.tunnels.Has(TunnelVXLAN) || !outerUDP4(f, portVXLAN) ||
		binary.BigEndian.Uint32(f[tunHdrOff:]) != vxlanFlagsVNI {
		return false
	}
	return innerL4(keys, f, vxlanInnerOff, binary.LittleEndian.Uint16(f[vxlanInnerOff-2:]), desc)
}

// fastGTPU is the gtpu shape under the policy desc, which enters GTP-U:
// Ethernet, IPv4 without options or fragmentation, UDP to 2152, a GTPv1-U
// G-PDU header without sequence, N-PDU or extension header (8 bytes), then
// IPv4 or IPv6 by its version nibble and TCP or UDP (see innerL4).
func fastGTPU(keys *FlowKeys, f []byte, desc *Descent) bool {
	if len(f) < gtpuInnerOff+ipv4MinHdrLen+portsLen || !desc.tunnels.Has(TunnelGTPU) || !outerUDP4(f, portGTPU) {
		return false
	}
	h := (*[gtp1HdrLen + 1]byte)(f[tunHdrOff:])
	if h[0]>>5 != 1 || h[0]&0x10 == 0 || h[0]&0x07 != 0 || h[1] != gtpMsgGPDU {
		return false
	}
	switch h[gtp1HdrLen] >> 4 {
	case 4:
		return innerL4(keys, f, gtpuInnerOff, basicIPv4, desc)
	case 6:
		return innerL4(keys, f, gtpuInnerOff, basicIPv6, desc)
	}
	return false
}

// innerL4 is the tail of the tunnel shapes: the inner IP header at off (of
// ethertype etype, as it lies, read little-endian) one descent deep, as
// fastL3 takes it, but declined where the slow path under desc does more:
// an inner IPv6 header with a flow label (the dissection stops there with
// the outer UDP ports in the keys) and an inner UDP header the policy
// enters too.
func innerL4(keys *FlowKeys, f []byte, off int, etype uint16, desc *Descent) bool {
	switch etype {
	case basicIPv4:
		if off < 0 || off > len(f)-(ipv4MinHdrLen+portsLen) {
			return false
		}
		b := (*[ipv4MinHdrLen + portsLen]byte)(f[off:])
		if b[ipv4Protocol] == ipProtoUDP && desc.enters(f, off+ipv4MinHdrLen, true) {
			return false
		}
		return l4IPv4(keys, b, control(off+ipv4MinHdrLen, FlagEncapsulation), 0, 0)
	case basicIPv6:
		if off < 0 || off > len(f)-(ipv6HdrLen+portsLen) {
			return false
		}
		b := (*[ipv6HdrLen + portsLen]byte)(f[off:])
		if binary.BigEndian.Uint32(b[0:])&ipv6LabelMask != 0 {
			return false
		}
		if b[ipv6NextHeader] == ipProtoUDP && desc.enters(f, off+ipv6HdrLen, false) {
			return false
		}
		return l4IPv6(keys, b, control(off+ipv6HdrLen, FlagEncapsulation), 0, 0)
	}
	return false
}

// tunnelUDPPath takes the frames of tunnel shape s's class under a
// descending Dissector's policy that vxlanPath and gtpuPath do not: those
// with an outer IPv4 header with options, which the tunnel shapes do not
// cover (a decline of an open gate). The slow path runs under the policy.
func tunnelUDPPath(keys *FlowKeys, frame []byte, d *Dissector, s Shape) (bool, Path) {
	if d.divert&divertTick != 0 {
		d.auto.tick(d)
	}
	if d.open.Has(s) {
		d.counters.Shape[s].Declined++
	}
	d.counters.Shape[s].Slow++
	return dissectWith(keys, frame, EtherTypeIPv4, EthernetHdrLen, d.flags, d.desc), PathSlow
}

// vxlanPath takes the frames of the vxlan class with an IPv4 header without
// options (divertedPath has read it, its protocol and port): fastVXLAN's
// steps with innerL4's written out for constant offsets, then the slow path
// under the policy on a decline or a closed gate.
func vxlanPath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	if d.divert&divertTick != 0 {
		d.auto.tick(d)
	}
	if d.open.Has(ShapeVXLAN) && len(frame) >= vxlanInnerOff+ipv4MinHdrLen+portsLen {
		b := (*[vxlanInnerOff + ipv4MinHdrLen + portsLen]byte)(frame)
		if (uint16(b[EthernetHdrLen+ipv4FragOff])|uint16(b[EthernetHdrLen+ipv4FragOff+1])<<8)&fragMask == 0 &&
			binary.BigEndian.Uint32(b[tunHdrOff:]) == vxlanFlagsVNI {
			switch uint16(b[vxlanInnerOff-2]) | uint16(b[vxlanInnerOff-1])<<8 {
			case basicIPv4:
				h := (*[ipv4MinHdrLen + portsLen]byte)(b[vxlanInnerOff:])
				if (h[ipv4Protocol] != ipProtoUDP || !d.desc.enters(frame, vxlanInnerOff+ipv4MinHdrLen, true)) &&
					l4IPv4(keys, h, control(vxlanInnerOff+ipv4MinHdrLen, FlagEncapsulation), 0, 0) {
					d.counters.Shape[ShapeVXLAN].Fast++
					d.desc.descended[TunnelVXLAN]++
					return true, FastPath(ShapeVXLAN)
				}
			case basicIPv6:
				if len(frame) >= vxlanInnerOff+ipv6HdrLen+portsLen {
					h := (*[ipv6HdrLen + portsLen]byte)(frame[vxlanInnerOff:])
					if binary.BigEndian.Uint32(h[0:])&ipv6LabelMask == 0 &&
						(h[ipv6NextHeader] != ipProtoUDP || !d.desc.enters(frame, vxlanInnerOff+ipv6HdrLen, false)) &&
						l4IPv6(keys, h, control(vxlanInnerOff+ipv6HdrLen, FlagEncapsulation), 0, 0) {
						d.counters.Shape[ShapeVXLAN].Fast++
						d.desc.descended[TunnelVXLAN]++
						return true, FastPath(ShapeVXLAN)
					}
				}
			}
		}
		d.counters.Shape[ShapeVXLAN].Declined++
	}
	d.counters.Shape[ShapeVXLAN].Slow++
	return dissectWith(keys, frame, EtherTypeIPv4, EthernetHdrLen, d.flags, d.desc), PathSlow
}

// gtpuPath is vxlanPath for the frames of the gtpu class: fastGTPU's steps.
func gtpuPath(keys *FlowKeys, frame []byte, d *Dissector) (bool, Path) {
	if d.divert&divertTick != 0 {
		d.auto.tick(d)
	}
	if d.open.Has(ShapeGTPU) && len(frame) >= gtpuInnerOff+ipv4MinHdrLen+portsLen {
		b := (*[gtpuInnerOff + ipv4MinHdrLen + portsLen]byte)(frame)
		g := b[tunHdrOff]
		if (uint16(b[EthernetHdrLen+ipv4FragOff])|uint16(b[EthernetHdrLen+ipv4FragOff+1])<<8)&fragMask == 0 &&
			g>>5 == 1 && g&0x10 != 0 && g&0x07 == 0 && b[tunHdrOff+1] == gtpMsgGPDU {
			switch b[gtpuInnerOff] >> 4 {
			case 4:
				h := (*[ipv4MinHdrLen + portsLen]byte)(b[gtpuInnerOff:])
				if (h[ipv4Protocol] != ipProtoUDP || !d.desc.enters(frame, gtpuInnerOff+ipv4MinHdrLen, true)) &&
					l4IPv4(keys, h, control(gtpuInnerOff+ipv4MinHdrLen, FlagEncapsulation), 0, 0) {
					d.counters.Shape[ShapeGTPU].Fast++
					d.desc.descended[TunnelGTPU]++
					return true, FastPath(ShapeGTPU)
				}
			case 6:
				if len(frame) >= gtpuInnerOff+ipv6HdrLen+portsLen {
					h := (*[ipv6HdrLen + portsLen]byte)(frame[gtpuInnerOff:])
					if binary.BigEndian.Uint32(h[0:])&ipv6LabelMask == 0 &&
						(h[ipv6NextHeader] != ipProtoUDP || !d.desc.enters(frame, gtpuInnerOff+ipv6HdrLen, false)) &&
						l4IPv6(keys, h, control(gtpuInnerOff+ipv6HdrLen, FlagEncapsulation), 0, 0) {
						d.counters.Shape[ShapeGTPU].Fast++
						d.desc.descended[TunnelGTPU]++
						return true, FastPath(ShapeGTPU)
					}
				}
			}
		}
		d.counters.Shape[ShapeGTPU].Declined++
	}
	d.counters.Shape[ShapeGTPU].Slow++
	return dissectWith(keys, frame, EtherTypeIPv4, EthernetHdrLen, d.flags, d.desc), PathSlow
}
