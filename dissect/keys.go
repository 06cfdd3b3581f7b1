package dissect

import (
	"encoding/binary"
	"net/netip"
)

// FlowKeys is the kernel's 80-byte struct flow_keys image as it lies in memory on
// x86-64 (include/net/flow_dissector.h), written field by field at fixed offsets.
// Network-order fields (n_proto, ports, addresses, VLAN TPID and ethertype, GRE key)
// hold raw packet bytes; host-order fields (thoff, addr_type, flags, flow label,
// VLAN TCI bits) are little-endian. The address area is a union: an IPv4 header
// writes only bytes 44..51 and leaves whatever an outer IPv6 header wrote behind it.
//
// The zero value is the state the kernel starts every dissection from.
//
//	 0      2          4                8       10       11  12
//	+------+----------+----------------+-------+--------+---+-----------+
//	|thoff |addr_type | control flags  |n_proto|ip_proto|pad|flow_label |
//	+------+----------+----------------+-------+--------+---+-----------+
//	16 vlan tci | tpid | eth_type | pad    24 cvlan (never written)
//	32 GRE key id    36 sport | dport    40 icmp (never written)
//	44 addrs: IPv4 src,dst (8) | IPv6 src,dst (32) | TIPC key (4)    76 tail pad
type FlowKeys [80]byte

// Offsets of the members of struct flow_keys.
const (
	OffTHoff       = 0
	OffAddrType    = 2
	OffFlags       = 4
	OffNProto      = 8
	OffIPProto     = 10
	OffFlowLabel   = 12
	OffVLANTCI     = 16
	OffVLANTPID    = 18
	OffVLANEthType = 20
	OffCVLAN       = 24
	OffKeyID       = 32
	OffPorts       = 36
	OffICMP        = 40
	OffAddrs       = 44
	OffIPv4Src     = 44
	OffIPv4Dst     = 48
	OffIPv6Src     = 44
	OffIPv6Dst     = 60
	OffTIPCKey     = 44

	// HashOffset is FLOW_KEYS_HASH_OFFSET: the hashed region starts at basic.
	HashOffset = 8
)

// AddrType is control.addr_type: the flow dissector key id of the addresses stored.
type AddrType uint16

// Address types the default dissector stores.
const (
	AddrNone AddrType = 0
	AddrIPv4 AddrType = 2 // FLOW_DISSECTOR_KEY_IPV4_ADDRS
	AddrIPv6 AddrType = 3 // FLOW_DISSECTOR_KEY_IPV6_ADDRS
	AddrTIPC AddrType = 8 // FLOW_DISSECTOR_KEY_TIPC
)

func (a AddrType) String() string {
	switch a {
	case AddrNone:
		return "none"
	case AddrIPv4:
		return "ipv4"
	case AddrIPv6:
		return "ipv6"
	case AddrTIPC:
		return "tipc"
	}
	return "unknown"
}

// ControlFlags is control.flags.
type ControlFlags uint32

// Control flags the default dissector sets.
const (
	FlagIsFragment    ControlFlags = 0x01 // FLOW_DIS_IS_FRAGMENT
	FlagFirstFrag     ControlFlags = 0x02 // FLOW_DIS_FIRST_FRAG
	FlagEncapsulation ControlFlags = 0x40 // FLOW_DIS_ENCAPSULATION (6.11+ value)
)

// Flags are the FLOW_DISSECTOR_F_* flags that steer a dissection.
type Flags uint32

// Dissector flags (include/net/flow_dissector.h, 5.x and later values).
const (
	FlagParse1stFrag    Flags = 1                   // keep going past a first fragment (ports still not read)
	FlagStopAtFlowLabel Flags = 2                   // stop after an IPv6 header with a non-zero flow label
	FlagStopAtEncap     Flags = 4                   // stop after entering a tunnel
	FlagStopBeforeEncap Flags = 8                   // stop before entering a tunnel
	DefaultFlags              = FlagStopAtFlowLabel // what skb_get_hash passes
	allFlags                  = FlagParse1stFrag | FlagStopAtFlowLabel | FlagStopAtEncap | FlagStopBeforeEncap
)

// THoff is control.thoff: the transport offset from the start of the buffer,
// clamped to its length.
func (k *FlowKeys) THoff() uint16 { return binary.LittleEndian.Uint16(k[OffTHoff:]) }

// AddrType is control.addr_type.
func (k *FlowKeys) AddrType() AddrType {
	return AddrType(binary.LittleEndian.Uint16(k[OffAddrType:]))
}

// Flags is control.flags.
func (k *FlowKeys) Flags() ControlFlags {
	return ControlFlags(binary.LittleEndian.Uint32(k[OffFlags:]))
}

// NProto is basic.n_proto as a host-order ethertype.
func (k *FlowKeys) NProto() uint16 { return binary.BigEndian.Uint16(k[OffNProto:]) }

// IPProto is basic.ip_proto.
func (k *FlowKeys) IPProto() uint8 { return k[OffIPProto] }

// FlowLabel is tags.flow_label: the 20-bit IPv6 flow label, 0 when none was stored.
func (k *FlowKeys) FlowLabel() uint32 { return binary.LittleEndian.Uint32(k[OffFlowLabel:]) }

// VLANID is the 12-bit id of the first VLAN tag, valid when VLANTPID is non-zero.
func (k *FlowKeys) VLANID() uint16 { return binary.LittleEndian.Uint16(k[OffVLANTCI:]) & 0x0fff }

// VLANPriority is the 3-bit PCP of the first VLAN tag.
func (k *FlowKeys) VLANPriority() uint8 {
	return uint8(binary.LittleEndian.Uint16(k[OffVLANTCI:]) >> 13)
}

// VLANTPID is the TPID (0x8100 or 0x88a8) of the first VLAN tag, 0 when there was none.
func (k *FlowKeys) VLANTPID() uint16 { return binary.BigEndian.Uint16(k[OffVLANTPID:]) }

// VLANEthType is the ethertype that followed the first VLAN tag.
func (k *FlowKeys) VLANEthType() uint16 { return binary.BigEndian.Uint16(k[OffVLANEthType:]) }

// KeyID is the GRE key (for PPTP the call id in the low 16 bits), as a big-endian number.
func (k *FlowKeys) KeyID() uint32 { return binary.BigEndian.Uint32(k[OffKeyID:]) }

// SrcPort is ports.src as a host-order number (the SPI's high half for ESP/AH).
func (k *FlowKeys) SrcPort() uint16 { return binary.BigEndian.Uint16(k[OffPorts:]) }

// DstPort is ports.dst as a host-order number.
func (k *FlowKeys) DstPort() uint16 { return binary.BigEndian.Uint16(k[OffPorts+2:]) }

// PortsWord is ports.ports as the kernel reads it on x86-64 (little-endian u32).
func (k *FlowKeys) PortsWord() uint32 { return binary.LittleEndian.Uint32(k[OffPorts:]) }

// Src is the source address for IPv4 and IPv6 keys; the zero Addr otherwise.
func (k *FlowKeys) Src() netip.Addr {
	switch k.AddrType() {
	case AddrIPv4:
		return netip.AddrFrom4([4]byte(k[OffIPv4Src : OffIPv4Src+4]))
	case AddrIPv6:
		return netip.AddrFrom16([16]byte(k[OffIPv6Src : OffIPv6Src+16]))
	}
	return netip.Addr{}
}

// Dst is the destination address for IPv4 and IPv6 keys; the zero Addr otherwise.
func (k *FlowKeys) Dst() netip.Addr {
	switch k.AddrType() {
	case AddrIPv4:
		return netip.AddrFrom4([4]byte(k[OffIPv4Dst : OffIPv4Dst+4]))
	case AddrIPv6:
		return netip.AddrFrom16([16]byte(k[OffIPv6Dst : OffIPv6Dst+16]))
	}
	return netip.Addr{}
}

// TIPCKey is the TIPC key (the source node) for TIPC keys.
func (k *FlowKeys) TIPCKey() uint32 { return binary.BigEndian.Uint32(k[OffTIPCKey:]) }
