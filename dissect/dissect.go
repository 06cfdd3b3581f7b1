package dissect

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

//go:generate go run gen_walk.go

// descending is false in walk and true in walkDescend, its copy that
// gen_walk.go generates: the descent's steps cost walk nothing.
const descending = false

// MaxReDispatch is MAX_FLOW_DISSECT_HDRS: the number of re-dispatches (a new
// ethertype or a new IP protocol) one dissection may make. The first L3 pass is
// free; the request past the limit ends the dissection as a success.
const MaxReDispatch = 15

// Dissect runs the kernel's flow dissector (__skb_flow_dissect with
// flow_keys_dissector) over buf, starting at offset nhoff with ethertype proto, and
// fills keys with the struct flow_keys image. keys is zeroed first, as
// __skb_get_hash does. The result is the kernel's boolean; the keys are meaningful
// either way (skb_get_hash hashes them regardless).
//
// buf is treated as one linear skb: a header read succeeds iff it ends within buf.
func Dissect(keys *FlowKeys, buf []byte, proto uint16, nhoff int, flags Flags) bool {
	*keys = FlowKeys{}
	return walk(keys, buf, flags, proto, nhoff, 0)
}

// DissectDescend is Dissect under the opt-in descent policy d (see
// Descent): the zero policy is Dissect.
func DissectDescend(keys *FlowKeys, buf []byte, proto uint16, nhoff int, flags Flags, d Descent) bool {
	*keys = FlowKeys{}
	if d.IsZero() {
		return walk(keys, buf, flags, proto, nhoff, 0)
	}
	ds := descender{Descent: d}
	return walkDescend(keys, buf, flags, proto, nhoff, 0, &ds)
}

// DissectFrameDescend is DissectFrame under the descent policy d.
func DissectFrameDescend(keys *FlowKeys, frame []byte, flags Flags, d Descent) bool {
	return DissectDescend(keys, frame, EthProtocol(frame), EthernetHdrLen, flags, d)
}

// walkState is the state machine's state at the top of a round, where it
// dispatches on an ethertype (protoAgain) or, with atIPProto in at, on an IP
// protocol (ipProtoAgain): a Dissector whose fast path declines after reading
// outer headers hands it over, with the keys those headers wrote, so that the
// slow path does not read them again.
type walkState struct {
	proto uint16
	nhoff int
	at    walkAt
}

// walkAt is the rest of a round's state, packed into one word so that walk
// takes it in a register: the last IP protocol read (bits 0-7, the key if
// the next header cannot be read), whether the round starts at the L4
// dispatch on that IP protocol, nhoff past the IP header (bit 8), the
// control flags (bits 16-23), the re-dispatches made (24-31) and the tags
// seen (32-39: the first fills the VLAN key, the second is CVLAN, unused).
// The zero value is the state at the start of a dissection.
type walkAt uint64

// atIPProto is walkAt's flag for a round that starts at the L4 dispatch.
const atIPProto walkAt = 1 << 8

// packAt packs a round's state (see walkAt).
func packAt(ipProto uint8, ctl ControlFlags, numHdrs int, vlanLevel uint8, l4 bool) walkAt {
	at := walkAt(ipProto) | walkAt(uint8(ctl))<<16 | walkAt(uint8(numHdrs))<<24 | walkAt(vlanLevel)<<32
	if l4 {
		at |= atIPProto
	}
	return at
}

// walk is the state machine of __skb_flow_dissect: from ethertype proto at
// nhoff, in the state at holds (zero at the start of a dissection).
//
// Like the kernel's function, it is one loop over a few named state
// variables, with a round per ethertype (protoAgain) and per IP protocol
// (ipProtoAgain). A step's verdict (enum flow_dissect_ret) is where it jumps:
// outGood and outBad, the exit; nextProto and nextIPProto (proto-again,
// ip-proto-again), which count the re-dispatch; IPv4 and IPv6 go on to
// ipProtoAgain (continue). The steps are written in line and the loop calls
// nothing: a call would make the compiler keep the state variables in memory
// across it, on every round. The one step that must call (TIPC's random key)
// ends the dissection, so it leaves the loop by a call in its return.
// IPv4, IPv6, VLAN and MPLS, then TCP and UDP, are tested first, in that
// order: a switch over all the cases would search them. The hottest steps read their
// fields by offset rather than through the views' accessors: an inlined
// call leaves a NOP behind (its inlining mark).
//
// walkDescend (walk_descend.go) is walk generated with descending true:
// the state machine under a descent policy ds, which only it pays for.
func walk(keys *FlowKeys, buf []byte, flags Flags, proto uint16, nhoff int, at walkAt) bool {
	var ds *descender // walkDescend's parameter
	var (
		ipProto   uint8
		ctl       ControlFlags
		numHdrs   int
		vlanLevel uint8
		poff      int // where the ports lie in the transport header
	)
	if at != 0 {
		if at&^0xff == atIPProto {
			// The L4 dispatch after a first IP header: the state a
			// closed gate's route hands over.
			ipProto = uint8(at)
			goto ipProtoAgain
		}
		ipProto, ctl, numHdrs, vlanLevel = uint8(at), ControlFlags(uint8(at>>16)), int(uint8(at>>24)), uint8(at>>32)
		if at&atIPProto != 0 {
			goto ipProtoAgain
		}
	}

protoAgain:
	if proto == EtherTypeIPv4 {
		if !fits(buf, nhoff, ipv4MinHdrLen) {
			goto outBad
		}
		h := (*ipv4Header)(buf[nhoff:])
		ihl := int(h[ipv4VerIHL] & 0x0f) // the version is never checked
		if ihl < 5 {
			goto outBad
		}
		nhoff += ihl * 4
		ipProto = h[ipv4Protocol]
		*(*[8]byte)(keys[OffIPv4Src:]) = [8]byte(h[ipv4SrcAddr:])
		keys[OffAddrType], keys[OffAddrType+1] = byte(AddrIPv4), 0
		// ip_is_fragment: MF or a non-zero offset.
		if frag := uint16(h[ipv4FragOff])<<8 | uint16(h[ipv4FragOff+1]); frag&(ipv4MoreFrags|ipv4OffsetMsk) != 0 {
			ctl |= FlagIsFragment
			if frag&ipv4OffsetMsk != 0 {
				goto outGood
			}
			ctl |= FlagFirstFrag
			if flags&FlagParse1stFrag == 0 {
				goto outGood
			}
		}
		goto ipProtoAgain
	}
	if proto == EtherTypeIPv6 {
		if !fits(buf, nhoff, ipv6HdrLen) {
			goto outBad
		}
		h := (*ipv6Header)(buf[nhoff:])
		ipProto = h.NextHeader()
		nhoff += ipv6HdrLen
		*(*[32]byte)(keys[OffIPv6Src:]) = h.Addrs()
		keys[OffAddrType], keys[OffAddrType+1] = byte(AddrIPv6), 0
		if label := h.FlowLabel(); label != 0 {
			binary.LittleEndian.PutUint32(keys[OffFlowLabel:], label)
			if flags&FlagStopAtFlowLabel != 0 {
				goto outGood
			}
		}
		goto ipProtoAgain
	}
	if proto == EtherTypeVLAN || proto == EtherTypeQinQ {
		if !fits(buf, nhoff, vlanHdrLen) {
			goto outBad
		}
		h := (*vlanHeader)(buf[nhoff:])
		tpid := proto
		proto = h.EncapsulatedProto()
		nhoff += vlanHdrLen
		// Only the first tag of the whole dissection is stored; the second would be
		// the CVLAN key, which flow_keys_dissector does not use. The bit-fields are
		// vlan_id:12, vlan_dei:1, vlan_priority:3, and DEI is never written. The
		// key's 8 bytes (TCI in host order, TPID and ethertype in network order,
		// padding) are one store, its word built through a rotation as the fast
		// paths build theirs (fast.go says why).
		if vlanLevel == 0 {
			binary.LittleEndian.PutUint64(keys[OffVLANTCI:], bits.RotateLeft64(uint64(h.TCI()&^vlanDEIBit)<<16|uint64(bits.ReverseBytes16(tpid))<<32|uint64(bits.ReverseBytes16(proto))<<48, 48))
			vlanLevel = 1
		}
		goto nextProto
	}
	if proto == EtherTypeMPLSUC || proto == EtherTypeMPLSMC {
		// __skb_flow_dissect_mpls returns at once when neither MPLS key is
		// used; the caller still steps over one label. The exit is written
		// out here, as in the ports step.
		return finish(keys, len(buf), nhoff+mplsLabelLen, proto, ipProto, ctl, true)
	}
	switch proto {
	case EtherTypePPPoES:
		// Kernel 6.18 (kernel-fidelity, errata 1) does not follow
		// protocol-field compression: the header is always 8 bytes, and a
		// compressed protocol reads as an invalid PPP protocol.
		if !fits(buf, nhoff, pppoeSesHdrLen) {
			goto outBad
		}
		h := (*pppoeSession)(buf[nhoff:])
		if !h.Valid() {
			goto outBad
		}
		nhoff += pppoeSesHdrLen
		switch p := h.Protocol(); p {
		case pppProtoIPv4:
			proto = EtherTypeIPv4
		case pppProtoIPv6:
			proto = EtherTypeIPv6
		case pppProtoMPLSU:
			proto = EtherTypeMPLSUC
		case pppProtoMPLSM:
			proto = EtherTypeMPLSMC
		default:
			// ppp_proto_is_valid: an odd low byte and an even high byte.
			if p&0x0101 == 0x0001 {
				goto outGood
			}
			goto outBad
		}
		goto nextProto
	case EtherTypeTIPC:
		if !fits(buf, nhoff, tipcBasicHdrLen) {
			goto outBad
		}
		return dissectTIPC(keys, (*[tipcBasicHdrLen]byte)(buf[nhoff:]), len(buf), proto, nhoff, ipProto, ctl)
	case EtherTypeFCoE:
		// The one handler that checks the linear length itself instead of reading.
		if len(buf)-nhoff < fcoeHdrLen {
			goto outBad
		}
		nhoff += fcoeHdrLen
		goto outGood
	case EtherTypeARP, EtherTypeRARP, EtherTypeCFM:
		// Their keys (ARP, CFM) are not in flow_keys_dissector: the handlers return
		// good without reading.
		goto outGood
	case EtherTypeBATMAN:
		// __skb_flow_dissect_batadv: a batman-adv unicast packet (compat
		// version 15) carrying an Ethernet frame.
		const (
			batadvUnicast       = 0x40
			batadvCompatVersion = 15
		)
		if !fits(buf, nhoff, batadvHdrLen) {
			goto outBad
		}
		b := (*[batadvHdrLen]byte)(buf[nhoff:])
		if b[1] != batadvCompatVersion || b[0] != batadvUnicast {
			goto outBad
		}
		proto = binary.BigEndian.Uint16(b[22:])
		nhoff += batadvHdrLen
		ctl |= FlagEncapsulation
		if flags&FlagStopAtEncap != 0 {
			goto outGood
		}
		goto nextProto
	case EtherTypePTP:
		if !fits(buf, nhoff, ptpHdrLen) {
			goto outBad
		}
		nhoff += ptpHdrLen
		goto outGood
	case EtherTypeHSR, EtherTypePRP:
		if !fits(buf, nhoff, hsrTagLen) {
			goto outBad
		}
		proto = binary.BigEndian.Uint16((*[hsrTagLen]byte)(buf[nhoff:])[4:])
		nhoff += hsrTagLen
		goto nextProto
	}
	goto outBad

ipProtoAgain:
	if ipProto != ipProtoTCP && ipProto != ipProtoUDP {
		// Every L4 pass but a fragment's writes the ports word, zero for a
		// protocol without ports: only a UDP tunnel's descent leaves
		// non-zero ports behind it for this to clear. The IPv6 fragment
		// header's own pass, which sets the fragment flag, clears them
		// only where it fails (below).
		if descending && ctl&FlagIsFragment == 0 && (ipProto != ipProtoFragment || proto != EtherTypeIPv6) {
			*(*[portsLen]byte)(keys[OffPorts:]) = [portsLen]byte{}
		}
		switch ipProto {
		case ipProtoGRE:
			if flags&FlagStopBeforeEncap != 0 {
				goto outGood
			}
			// __skb_flow_dissect_gre: GRE version 0 and PPTP (version 1).
			// The early good exits (routing, version, non-PPTP v1) and the
			// failures do not enter the tunnel: nhoff stays, and the
			// encapsulation flag is not set.
			if !fits(buf, nhoff, greBaseHdrLen) {
				goto outBad
			}
			h := (*greHeader)(buf[nhoff:])
			fv := h.FlagsVersion()
			if fv&greRouting != 0 {
				goto outGood
			}
			ver := fv & greVersion
			if ver > 1 {
				goto outGood
			}
			// proto takes the GRE protocol before any other check: a stop or
			// failure below reports it as n_proto.
			proto = h.Protocol()
			if ver == 1 && !(proto == EtherTypePPP && fv&greKey != 0) {
				goto outGood
			}
			off := nhoff + greBaseHdrLen
			if fv&greChecksum != 0 {
				off += 4 // checksum and reserved1, not read
			}
			if fv&greKey != 0 {
				if !fits(buf, off, 4) {
					goto outBad
				}
				key := binary.BigEndian.Uint32((*[4]byte)(buf[off:])[:])
				if ver == 1 {
					key &= pptpKeyMask
				}
				binary.BigEndian.PutUint32(keys[OffKeyID:], key)
				off += 4
			}
			if fv&greSeq != 0 {
				off += 4
			}
			if ver == 0 {
				if proto == EtherTypeTEB {
					if !fits(buf, off, EthernetHdrLen) {
						goto outBad
					}
					proto = binary.BigEndian.Uint16((*[EthernetHdrLen]byte)(buf[off:])[12:])
					off += EthernetHdrLen
					// NET_IP_ALIGN is 0 on x86-64, so the readable length is not capped here.
				}
			} else {
				if fv&greAck != 0 {
					off += 4
				}
				if !fits(buf, off, pppHdrLen) {
					goto outBad
				}
				// The address and control bytes are assumed, never checked. Other PPP
				// protocols leave proto at 0x880b, which the next L3 pass rejects.
				switch binary.BigEndian.Uint16((*[pppHdrLen]byte)(buf[off:])[2:]) {
				case pppProtoIPv4:
					proto = EtherTypeIPv4
				case pppProtoIPv6:
					proto = EtherTypeIPv6
				}
				off += pppHdrLen
			}
			nhoff = off
			ctl |= FlagEncapsulation
			if flags&FlagStopAtEncap != 0 {
				goto outGood
			}
			goto nextProto
		case ipProtoHopOpts, ipProtoRouting, ipProtoDstOpts:
			// Extension headers only count behind an IPv6 header.
			if proto != EtherTypeIPv6 {
				goto outGood
			}
			if !fits(buf, nhoff, ipv6OptHdrPeek) {
				goto outBad
			}
			b := (*[ipv6OptHdrPeek]byte)(buf[nhoff:])
			ipProto = b[0]
			nhoff += (int(b[1]) + 1) << 3
			// The ports of this pass are those of the next header, read
			// here; they stay if the next round is refused.
			if ctl&FlagIsFragment == 0 {
				var ports [portsLen]byte
				if poff := portsOffset(ipProto); poff >= 0 && fits(buf, nhoff+poff, portsLen) {
					ports = *(*[portsLen]byte)(buf[nhoff+poff:])
				}
				*(*[portsLen]byte)(keys[OffPorts:]) = ports
			}
			goto nextIPProto
		case ipProtoFragment:
			if proto != EtherTypeIPv6 {
				goto outGood
			}
			if !fits(buf, nhoff, ipv6FragHdrLen) {
				if descending && ctl&FlagIsFragment == 0 {
					*(*[portsLen]byte)(keys[OffPorts:]) = [portsLen]byte{}
				}
				goto outBad
			}
			b := (*[ipv6FragHdrLen]byte)(buf[nhoff:])
			ctl |= FlagIsFragment
			nhoff += ipv6FragHdrLen
			ipProto = b[0]
			// An offset of zero (also an atomic fragment, M=0) is a first fragment.
			if binary.BigEndian.Uint16(b[2:])&0xfff8 == 0 {
				ctl |= FlagFirstFrag
				if flags&FlagParse1stFrag != 0 {
					goto nextIPProto
				}
			}
			goto outGood
		case ipProtoIPIP, ipProtoIPv6:
			// IP-in-IP: the inner header starts where the outer one ended.
			if flags&FlagStopBeforeEncap != 0 {
				goto outGood
			}
			proto = EtherTypeIPv4
			if ipProto == ipProtoIPv6 {
				proto = EtherTypeIPv6
			}
			ctl |= FlagEncapsulation
			if flags&FlagStopAtEncap != 0 {
				goto outGood
			}
			goto nextProto
		case ipProtoMPLS:
			// MPLS-in-IP: no encapsulation flag, the stop flags are not consulted.
			proto = EtherTypeMPLSUC
			goto nextProto
		case ipProtoDCCP, ipProtoESP, ipProtoSCTP, ipProtoUDPLite:
		case ipProtoAH:
			poff = portsOffsetAH // the SPI
		default:
			// ICMP, L2TPv3 and the rest fill only keys this dissector does
			// not use, and have no ports.
			goto outGood
		}
	}
	// __skb_flow_dissect_ports (proto_ports_offset: the SPI for ESP and AH),
	// unless a fragment was seen. The kernel writes the ports word on every
	// L4 pass, zero when the protocol has none or they cannot be read. A
	// pass that ends here wrote no other: the word still holds zero (a
	// dissection starts it so, tunnel passes write zero), or what the
	// extension header before read, for this protocol at this offset.
	if ctl&FlagIsFragment == 0 && fits(buf, nhoff+poff, portsLen) {
		*(*[portsLen]byte)(keys[OffPorts:]) = *(*[portsLen]byte)(buf[nhoff+poff:])
	} else if descending && ctl&FlagIsFragment == 0 {
		*(*[portsLen]byte)(keys[OffPorts:]) = [portsLen]byte{} // a tunnel's outer ports go
	}
	// The opt-in UDP tunnel descent (descent.go), after the ports of a UDP
	// header that is no fragment. It leaves the loop by a call in its
	// return, as TIPC's step does, so that the loop calls nothing.
	if descending && ipProto == ipProtoUDP && ctl&FlagIsFragment == 0 {
		return descend(keys, buf, flags, proto, nhoff, walkAt(ctl)<<16|walkAt(numHdrs)<<24, ds)
	}
	// The exit written out here, not jumped to: the jump would first move
	// the state into the registers the other ways in hold it in.
	return finish(keys, len(buf), nhoff, proto, ipProto, ctl, true)

nextProto:
	if numHdrs++; numHdrs <= MaxReDispatch {
		goto protoAgain
	}
	goto outGood
nextIPProto:
	if numHdrs++; numHdrs <= MaxReDispatch {
		goto ipProtoAgain
	}
outGood:
	return finish(keys, len(buf), nhoff, proto, ipProto, ctl, true)
outBad:
	return finish(keys, len(buf), nhoff, proto, ipProto, ctl, false)
}

// descend is the descent step after the ports of the UDP header at nhoff,
// with walk's control flags and re-dispatch count in at: unless the caller stops at or before a tunnel, the
// first tunnel the policy enters sets FLOW_DIS_ENCAPSULATION and the
// dissection re-dispatches on the inner header (a re-dispatch like any
// other, bounded by MaxReDispatch); otherwise the dissection ends here.
func descend(keys *FlowKeys, buf []byte, flags Flags, proto uint16, nhoff int, at walkAt, ds *descender) bool {
	const ipProto = ipProtoUDP
	ctl, numHdrs := ControlFlags(uint8(at>>16)), int(uint8(at>>24))
	// Levels past the first tag write nothing: the VLAN key says whether
	// one was seen.
	var vlanLevel uint8
	if keys[OffVLANTPID]|keys[OffVLANTPID+1] != 0 {
		vlanLevel = 1
	}
	if flags&(FlagStopAtEncap|FlagStopBeforeEncap) != 0 {
		return finish(keys, len(buf), nhoff, proto, ipProto, ctl, true)
	}
	t, p, off, ok := ds.udpEncap(buf, nhoff, proto == EtherTypeIPv4)
	if !ok {
		return finish(keys, len(buf), nhoff, proto, ipProto, ctl, true)
	}
	ds.descended[t]++
	ds.last = Entry{Tunnel: t, Proto: p, Off: off, Count: ds.last.Count + 1}
	ctl |= FlagEncapsulation
	if numHdrs++; numHdrs > MaxReDispatch {
		return finish(keys, len(buf), off, p, ipProto, ctl, true)
	}
	return walkDescend(keys, buf, flags, p, off, packAt(ipProto, ctl, numHdrs, vlanLevel, false), ds)
}

// dissectWith is Dissect under the descent ds (nil: none).
func dissectWith(keys *FlowKeys, buf []byte, proto uint16, nhoff int, flags Flags, ds *descender) bool {
	*keys = FlowKeys{}
	return walkWith(keys, buf, flags, proto, nhoff, 0, ds)
}

// walkWith is walk under the descent ds, walk itself for none.
func walkWith(keys *FlowKeys, buf []byte, flags Flags, proto uint16, nhoff int, at walkAt, ds *descender) bool {
	if ds == nil {
		return walk(keys, buf, flags, proto, nhoff, at)
	}
	return walkDescend(keys, buf, flags, proto, nhoff, at, ds)
}

// finish is the exit of a good and a bad end alike (out_good, out_bad): the
// three fields the kernel writes last, thoff as min_t(u16, nhoff, len), and
// the result ok.
func finish(keys *FlowKeys, n int, nhoff int, proto uint16, ipProto uint8, ctl ControlFlags, ok bool) bool {
	thoff := uint16(nhoff)
	if l := uint16(n); l < thoff {
		thoff = l
	}
	binary.LittleEndian.PutUint16(keys[OffTHoff:], thoff)
	binary.LittleEndian.PutUint32(keys[OffFlags:], uint32(ctl))
	binary.BigEndian.PutUint16(keys[OffNProto:], proto)
	keys[OffIPProto] = ipProto
	return ok
}

// DissectFrame dissects a whole Ethernet frame the way the kernel does on transmit
// and in BPF_PROG_TEST_RUN: the ethertype from EthProtocol, the network header at
// offset 14, so thoff counts from the first byte of the frame. A frame shorter than
// an Ethernet header (which the kernel never sees) ends as a failed dissection.
func DissectFrame(keys *FlowKeys, frame []byte, flags Flags) bool {
	return Dissect(keys, frame, EthProtocol(frame), EthernetHdrLen, flags)
}

// EthProtocol is the skb->protocol that eth_type_trans gives a frame: the type
// field when it is an ethertype (>= 0x0600); for an 802.3 length field
// ETH_P_802_3 when the payload starts with FF FF (raw IPX) and ETH_P_802_2
// otherwise. It returns 0 for a frame shorter than an Ethernet header.
func EthProtocol(frame []byte) uint16 {
	if len(frame) < EthernetHdrLen {
		return 0
	}
	t := binary.BigEndian.Uint16(frame[12:])
	if t >= minEtherType {
		return t
	}
	if len(frame) >= EthernetHdrLen+2 && frame[14] == 0xff && frame[15] == 0xff {
		return EtherType8023
	}
	return EtherType8022
}

// portsOffset is proto_ports_offset: where the 4 port bytes sit in the transport
// header (the SPI for ESP and AH), or -1 for a protocol without ports.
func portsOffset(ipProto uint8) int {
	switch ipProto {
	case ipProtoTCP, ipProtoUDP, ipProtoDCCP, ipProtoESP, ipProtoSCTP, ipProtoUDPLite:
		return 0
	case ipProtoAH:
		return portsOffsetAH
	}
	return -1
}

// tipcKeepAliveMask selects the user and message type bits of a TIPC link-protocol
// keep-alive (msg_is_keepalive).
const tipcKeepAliveMask = 0x0e080000

// dissectTIPC is the ETH_P_TIPC case, which ends the dissection, on the
// basic header b of a buffer of n bytes: the key is the source node (word
// 3). For link keep-alives the kernel (tipc_hdr_rps_key) draws a fresh random
// key per packet to spread them; so do we, so such frames never share a
// flow, as in the kernel. It takes the header rather than the buffer so that
// walk need not keep the buffer's capacity for this call.
func dissectTIPC(keys *FlowKeys, b *[tipcBasicHdrLen]byte, n int, proto uint16, nhoff int, ipProto uint8, ctl ControlFlags) bool {
	if binary.BigEndian.Uint32(b[:])&tipcKeepAliveMask == tipcKeepAliveMask {
		binary.LittleEndian.PutUint32(keys[OffTIPCKey:], rand.Uint32())
	} else {
		*(*[4]byte)(keys[OffTIPCKey:]) = [4]byte(b[12:16])
	}
	binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrTIPC))
	return finish(keys, n, nhoff, proto, ipProto, ctl, true)
}
