package dissect

import (
	"net/netip"
	"strconv"
)

// AppendTo appends the keys as one line of text to b, as String spells
// them, without allocating:
//
//	ipv4 198.18.0.1:1025 > 198.18.0.2:80 proto 6 thoff 34
//
// The address type comes first, then the addresses and ports (netip's
// spelling: an IPv6 address in brackets) or a TIPC key; n_proto follows
// when it is not the one the address type implies; then ip_proto and thoff,
// and the control flags, first VLAN tag, IPv6 flow label and GRE key when
// they are not zero.
func (k *FlowKeys) AppendTo(b []byte) []byte {
	at := k.AddrType()
	b = append(b, at.String()...)
	switch at {
	case AddrIPv4, AddrIPv6:
		b = append(b, ' ')
		b = netip.AddrPortFrom(k.Src(), k.SrcPort()).AppendTo(b)
		b = append(b, " > "...)
		b = netip.AddrPortFrom(k.Dst(), k.DstPort()).AppendTo(b)
	case AddrTIPC:
		b = append(b, " key 0x"...)
		b = appendHex(b, uint64(k.TIPCKey()), 8)
	}
	if impliedEtherType(at) != k.NProto() {
		b = append(b, " n_proto "...)
		b = appendEtherType(b, k.NProto())
	}
	b = append(b, " proto "...)
	b = strconv.AppendUint(b, uint64(k.IPProto()), 10)
	b = append(b, " thoff "...)
	b = strconv.AppendUint(b, uint64(k.THoff()), 10)
	if f := k.Flags(); f != 0 {
		b = append(b, " flags 0x"...)
		b = strconv.AppendUint(b, uint64(f), 16)
	}
	if tpid := k.VLANTPID(); tpid != 0 {
		b = append(b, " vlan "...)
		b = strconv.AppendUint(b, uint64(k.VLANID()), 10)
		b = append(b, " prio "...)
		b = strconv.AppendUint(b, uint64(k.VLANPriority()), 10)
		b = append(b, " tpid "...)
		b = appendEtherType(b, tpid)
		b = append(b, " type "...)
		b = appendEtherType(b, k.VLANEthType())
	}
	if label := k.FlowLabel(); label != 0 {
		b = append(b, " label 0x"...)
		b = strconv.AppendUint(b, uint64(label), 16)
	}
	if id := k.KeyID(); id != 0 {
		b = append(b, " keyid 0x"...)
		b = appendHex(b, uint64(id), 8)
	}
	return b
}

// String is the keys as one line of text (AppendTo).
func (k *FlowKeys) String() string { return string(k.AppendTo(make([]byte, 0, 96))) }

// impliedEtherType is the n_proto that goes with addresses of type at, 0 when
// there is none.
func impliedEtherType(at AddrType) uint16 {
	switch at {
	case AddrIPv4:
		return EtherTypeIPv4
	case AddrIPv6:
		return EtherTypeIPv6
	}
	return 0
}

// appendEtherType appends t as "0x" and 4 hex digits.
func appendEtherType(b []byte, t uint16) []byte {
	return appendHex(append(b, "0x"...), uint64(t), 4)
}

// appendHex appends v as lower-case hex, zero-padded to digits.
func appendHex(b []byte, v uint64, digits int) []byte {
	const hexDigits = "0123456789abcdef"
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hexDigits[(v>>(4*i))&0xf])
	}
	return b
}
