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
