package dissect

import (
	"encoding/binary"
	"math/rand/v2"
)

// MaxReDispatch is MAX_FLOW_DISSECT_HDRS: the number of re-dispatches (a new
// ethertype or a new IP protocol) one dissection may make. The first L3 pass is
// free; the request past the limit ends the dissection as a success.
const MaxReDispatch = 15

// verdict is what a protocol handler tells the state machine (enum flow_dissect_ret).
type verdict uint8

const (
	verdictContinue     verdict = iota // go on to the L4 stage (IPv4, IPv6)
	verdictGood                        // stop, result true
	verdictBad                         // stop, result false
	verdictProtoAgain                  // dispatch again on the new proto
	verdictIPProtoAgain                // dispatch again on the new ip_proto
)

// Dissect runs the kernel's flow dissector (__skb_flow_dissect with
// flow_keys_dissector) over buf, starting at offset nhoff with ethertype proto, and
// fills keys with the struct flow_keys image. keys is zeroed first, as
// __skb_get_hash does. The result is the kernel's boolean; the keys are meaningful
// either way (skb_get_hash hashes them regardless).
//
// buf is treated as one linear skb: a header read succeeds iff it ends within buf.
//
// Like the kernel's function, this is one state machine over a few named state
// variables; the common protocols are cases of its switches and the rest are
// helpers named after their kernel counterparts. IPv4, IPv6, VLAN and the ports
// stay in line: a call each on the shapes that dominate traffic was a large
// share of their cost (bench/instructions.sh counts it).
func Dissect(keys *FlowKeys, buf []byte, proto uint16, nhoff int, flags Flags) bool {
	*keys = FlowKeys{}
	return resume(keys, buf, flags, &walkState{proto: proto, nhoff: nhoff})
}

// walkState is the state machine's state at the top of a round, where it
// dispatches on an ethertype (protoAgain) or, with atIPProto, on an IP
// protocol (ipProtoAgain): a Dissector whose fast path declines after reading
// outer headers hands it over, with the keys those headers wrote, so that the
// slow path does not read them again.
type walkState struct {
	proto     uint16
	nhoff     int
	ipProto   uint8 // the last IP protocol read: the key if the next header cannot be read
	ctl       ControlFlags
	numHdrs   int   // re-dispatches made
	vlanLevel uint8 // tags seen: the first fills the VLAN key, the second is CVLAN (unused)
	atIPProto bool  // start at the L4 dispatch on ipProto, nhoff past the IP header
}

// resume runs Dissect's state machine from the top of a round in state st,
// over keys that hold what the rounds before it wrote. st is passed by
// pointer and read field by field: a struct argument is copied in wide words
// over the narrow stores that built it, which stalls store forwarding.
func resume(keys *FlowKeys, buf []byte, flags Flags, st *walkState) bool {
	proto, nhoff, ipProto, ctl, numHdrs, vlanLevel := st.proto, st.nhoff, st.ipProto, st.ctl, st.numHdrs, st.vlanLevel
	var (
		v  verdict
		ok bool
	)
	if st.atIPProto {
		goto ipProtoAgain
	}

protoAgain:
	v = verdictContinue
	switch proto {
	case EtherTypeIPv4:
		b, found := hdr(buf, nhoff, ipv4MinHdrLen)
		if !found {
			v = verdictBad
			break
		}
		h := ipv4Header(b)
		ihl := h.IHL()
		if ihl < 5 {
			v = verdictBad
			break
		}
		nhoff += ihl * 4
		ipProto = h.Protocol()
		copy(keys[OffIPv4Src:OffIPv4Src+8], h.Addrs())
		binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv4))
		// ip_is_fragment: MF or a non-zero offset.
		if frag := h.FragField(); frag&(ipv4MoreFrags|ipv4OffsetMsk) != 0 {
			ctl |= FlagIsFragment
			if frag&ipv4OffsetMsk != 0 {
				v = verdictGood
				break
			}
			ctl |= FlagFirstFrag
			if flags&FlagParse1stFrag == 0 {
				v = verdictGood
			}
		}
	case EtherTypeIPv6:
		b, found := hdr(buf, nhoff, ipv6HdrLen)
		if !found {
			v = verdictBad
			break
		}
		h := ipv6Header(b)
		ipProto = h.NextHeader()
		nhoff += ipv6HdrLen
		copy(keys[OffIPv6Src:OffIPv6Src+32], h.Addrs())
		binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrIPv6))
		if label := h.FlowLabel(); label != 0 {
			binary.LittleEndian.PutUint32(keys[OffFlowLabel:], label)
			if flags&FlagStopAtFlowLabel != 0 {
				v = verdictGood
			}
		}
	case EtherTypeVLAN, EtherTypeQinQ:
		b, found := hdr(buf, nhoff, vlanHdrLen)
		if !found {
			v = verdictBad
			break
		}
		h := vlanHeader(b)
		tpid := proto
		proto = h.EncapsulatedProto()
		nhoff += vlanHdrLen
		// Only the first tag of the whole dissection is stored; the second would be
		// the CVLAN key, which flow_keys_dissector does not use. The bit-fields are
		// vlan_id:12, vlan_dei:1, vlan_priority:3, and DEI is never written.
		if vlanLevel == 0 {
			binary.LittleEndian.PutUint16(keys[OffVLANTCI:], h.TCI()&^vlanDEIBit)
			binary.BigEndian.PutUint16(keys[OffVLANTPID:], tpid)
			binary.BigEndian.PutUint16(keys[OffVLANEthType:], proto)
			vlanLevel = 1
		}
		v = verdictProtoAgain
	case EtherTypePPPoES:
		proto, nhoff, v = dissectPPPoE(buf, proto, nhoff)
	case EtherTypeTIPC:
		v = dissectTIPC(keys, buf, nhoff)
	case EtherTypeMPLSUC, EtherTypeMPLSMC:
		// __skb_flow_dissect_mpls returns at once when neither MPLS key is used;
		// the caller still steps over one label.
		nhoff += mplsLabelLen
		v = verdictGood
	case EtherTypeFCoE:
		// The one handler that checks the linear length itself instead of reading.
		if len(buf)-nhoff < fcoeHdrLen {
			v = verdictBad
			break
		}
		nhoff += fcoeHdrLen
		v = verdictGood
	case EtherTypeARP, EtherTypeRARP, EtherTypeCFM:
		// Their keys (ARP, CFM) are not in flow_keys_dissector: the handlers return
		// good without reading.
		v = verdictGood
	case EtherTypeBATMAN:
		proto, nhoff, v = dissectBatadv(buf, proto, nhoff, flags)
		if v != verdictBad {
			ctl |= FlagEncapsulation
		}
	case EtherTypePTP:
		if _, found := hdr(buf, nhoff, ptpHdrLen); !found {
			v = verdictBad
			break
		}
		nhoff += ptpHdrLen
		v = verdictGood
	case EtherTypeHSR, EtherTypePRP:
		b, found := hdr(buf, nhoff, hsrTagLen)
		if !found {
			v = verdictBad
			break
		}
		proto = binary.BigEndian.Uint16(b[4:])
		nhoff += hsrTagLen
		v = verdictProtoAgain
	default:
		v = verdictBad
	}

	switch v {
	case verdictGood:
		goto outGood
	case verdictProtoAgain:
		if numHdrs++; numHdrs <= MaxReDispatch {
			goto protoAgain
		}
		goto outGood
	case verdictBad:
		goto outBad
	}

ipProtoAgain:
	v = verdictContinue
	switch ipProto {
	case ipProtoGRE:
		if flags&FlagStopBeforeEncap != 0 {
			v = verdictGood
			break
		}
		var entered bool
		proto, nhoff, entered, v = dissectGRE(keys, buf, proto, nhoff, flags)
		if entered {
			ctl |= FlagEncapsulation
		}
	case ipProtoHopOpts, ipProtoRouting, ipProtoDstOpts:
		// Extension headers only count behind an IPv6 header.
		if proto != EtherTypeIPv6 {
			break
		}
		b, found := hdr(buf, nhoff, ipv6OptHdrPeek)
		if !found {
			v = verdictBad
			break
		}
		ipProto = b[0]
		nhoff += (int(b[1]) + 1) << 3
		v = verdictIPProtoAgain
	case ipProtoFragment:
		if proto != EtherTypeIPv6 {
			break
		}
		b, found := hdr(buf, nhoff, ipv6FragHdrLen)
		if !found {
			v = verdictBad
			break
		}
		ctl |= FlagIsFragment
		nhoff += ipv6FragHdrLen
		ipProto = b[0]
		v = verdictGood
		// An offset of zero (also an atomic fragment, M=0) is a first fragment.
		if binary.BigEndian.Uint16(b[2:])&0xfff8 == 0 {
			ctl |= FlagFirstFrag
			if flags&FlagParse1stFrag != 0 {
				v = verdictIPProtoAgain
			}
		}
	case ipProtoIPIP, ipProtoIPv6:
		// IP-in-IP: the inner header starts where the outer one ended.
		if flags&FlagStopBeforeEncap != 0 {
			v = verdictGood
			break
		}
		proto = EtherTypeIPv4
		if ipProto == ipProtoIPv6 {
			proto = EtherTypeIPv6
		}
		ctl |= FlagEncapsulation
		v = verdictProtoAgain
		if flags&FlagStopAtEncap != 0 {
			v = verdictGood
		}
	case ipProtoMPLS:
		// MPLS-in-IP: no encapsulation flag, the stop flags are not consulted.
		proto = EtherTypeMPLSUC
		v = verdictProtoAgain
	}
	// TCP, ICMP, L2TPv3, ESP and AH only fill keys this dissector does not use.

	// __skb_flow_dissect_ports, on every L4 pass until a fragment is seen, also on
	// passes that then enter a tunnel: those zero the ports word.
	if ctl&FlagIsFragment == 0 {
		var ports uint32
		if poff := portsOffset(ipProto); poff >= 0 {
			if p, found := hdr(buf, nhoff+poff, portsLen); found {
				ports = binary.LittleEndian.Uint32(p)
			}
		}
		binary.LittleEndian.PutUint32(keys[OffPorts:], ports)
	}

	switch v {
	case verdictProtoAgain:
		if numHdrs++; numHdrs <= MaxReDispatch {
			goto protoAgain
		}
	case verdictIPProtoAgain:
		if numHdrs++; numHdrs <= MaxReDispatch {
			goto ipProtoAgain
		}
	case verdictBad:
		goto outBad
	}

outGood:
	ok = true
	goto out
outBad:
	ok = false
out:
	// Both exits write the same three fields; thoff is min_t(u16, nhoff, len).
	thoff := uint16(nhoff)
	if l := uint16(len(buf)); l < thoff {
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

// dissectPPPoE is the ETH_P_PPP_SES case. Kernel 6.18 (kernel-fidelity, errata 1) does
// not follow protocol-field compression: the header is always 8 bytes, and a
// compressed protocol reads as an invalid PPP protocol.
func dissectPPPoE(buf []byte, proto uint16, nhoff int) (uint16, int, verdict) {
	b, ok := hdr(buf, nhoff, pppoeSesHdrLen)
	if !ok {
		return proto, nhoff, verdictBad
	}
	h := pppoeSession(b)
	if !h.Valid() {
		return proto, nhoff, verdictBad
	}
	nhoff += pppoeSesHdrLen
	switch p := h.Protocol(); p {
	case pppProtoIPv4:
		return EtherTypeIPv4, nhoff, verdictProtoAgain
	case pppProtoIPv6:
		return EtherTypeIPv6, nhoff, verdictProtoAgain
	case pppProtoMPLSU:
		return EtherTypeMPLSUC, nhoff, verdictProtoAgain
	case pppProtoMPLSM:
		return EtherTypeMPLSMC, nhoff, verdictProtoAgain
	default:
		// ppp_proto_is_valid: an odd low byte and an even high byte.
		if p&0x0101 == 0x0001 {
			return proto, nhoff, verdictGood
		}
		return proto, nhoff, verdictBad
	}
}

// tipcKeepAliveMask selects the user and message type bits of a TIPC link-protocol
// keep-alive (msg_is_keepalive).
const tipcKeepAliveMask = 0x0e080000

// dissectTIPC is the ETH_P_TIPC case: the key is the source node (word 3). For link
// keep-alives the kernel (tipc_hdr_rps_key) draws a fresh random key per packet to
// spread them; so do we, so such frames never share a flow, as in the kernel.
func dissectTIPC(keys *FlowKeys, buf []byte, nhoff int) verdict {
	b, ok := hdr(buf, nhoff, tipcBasicHdrLen)
	if !ok {
		return verdictBad
	}
	if binary.BigEndian.Uint32(b)&tipcKeepAliveMask == tipcKeepAliveMask {
		binary.LittleEndian.PutUint32(keys[OffTIPCKey:], rand.Uint32())
	} else {
		copy(keys[OffTIPCKey:OffTIPCKey+4], b[12:16])
	}
	binary.LittleEndian.PutUint16(keys[OffAddrType:], uint16(AddrTIPC))
	return verdictGood
}

// dissectBatadv is __skb_flow_dissect_batadv: a batman-adv unicast packet (compat
// version 15) carrying an Ethernet frame. Unless it fails, the caller sets the
// encapsulation flag.
func dissectBatadv(buf []byte, proto uint16, nhoff int, flags Flags) (uint16, int, verdict) {
	const (
		batadvUnicast       = 0x40
		batadvCompatVersion = 15
	)
	b, ok := hdr(buf, nhoff, batadvHdrLen)
	if !ok || b[1] != batadvCompatVersion || b[0] != batadvUnicast {
		return proto, nhoff, verdictBad
	}
	proto = binary.BigEndian.Uint16(b[22:])
	nhoff += batadvHdrLen
	if flags&FlagStopAtEncap != 0 {
		return proto, nhoff, verdictGood
	}
	return proto, nhoff, verdictProtoAgain
}

// dissectGRE is __skb_flow_dissect_gre: GRE version 0 and PPTP (version 1). It
// returns the new proto and offset, and whether the tunnel was entered (the
// encapsulation flag), which the early good exits (routing, version, non-PPTP v1)
// and the failures do not set.
func dissectGRE(keys *FlowKeys, buf []byte, proto uint16, nhoff int, flags Flags) (_ uint16, _ int, entered bool, _ verdict) {
	b, ok := hdr(buf, nhoff, greBaseHdrLen)
	if !ok {
		return proto, nhoff, false, verdictBad
	}
	h := greHeader(b)
	fv := h.FlagsVersion()
	if fv&greRouting != 0 {
		return proto, nhoff, false, verdictGood
	}
	ver := fv & greVersion
	if ver > 1 {
		return proto, nhoff, false, verdictGood
	}
	// proto takes the GRE protocol before any other check: a stop or failure below
	// reports it as n_proto.
	proto = h.Protocol()
	if ver == 1 && !(proto == EtherTypePPP && fv&greKey != 0) {
		return proto, nhoff, false, verdictGood
	}
	off := greBaseHdrLen
	if fv&greChecksum != 0 {
		off += 4 // checksum and reserved1, not read
	}
	if fv&greKey != 0 {
		k, ok := hdr(buf, nhoff+off, 4)
		if !ok {
			return proto, nhoff, false, verdictBad
		}
		key := binary.BigEndian.Uint32(k)
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
			eth, ok := hdr(buf, nhoff+off, EthernetHdrLen)
			if !ok {
				return proto, nhoff, false, verdictBad
			}
			proto = binary.BigEndian.Uint16(eth[12:])
			off += EthernetHdrLen
			// NET_IP_ALIGN is 0 on x86-64, so the readable length is not capped here.
		}
	} else {
		if fv&greAck != 0 {
			off += 4
		}
		ppp, ok := hdr(buf, nhoff+off, pppHdrLen)
		if !ok {
			return proto, nhoff, false, verdictBad
		}
		// The address and control bytes are assumed, never checked. Other PPP
		// protocols leave proto at 0x880b, which the next L3 pass rejects.
		switch binary.BigEndian.Uint16(ppp[2:]) {
		case pppProtoIPv4:
			proto = EtherTypeIPv4
		case pppProtoIPv6:
			proto = EtherTypeIPv6
		}
		off += pppHdrLen
	}
	nhoff += off
	if flags&FlagStopAtEncap != 0 {
		return proto, nhoff, true, verdictGood
	}
	return proto, nhoff, true, verdictProtoAgain
}
