package dissect

import "encoding/binary"

// Typed views over the headers the slow path reads. Each view is an array of
// the exact number of bytes the kernel reads for that header (the length of
// its mandatory read), taken as (*view)(buf[off:]) once fits has checked the
// read: the compiler then knows the length and checks no accessor's bounds.

// Ethertypes the dissector knows (include/uapi/linux/if_ether.h).
const (
	EtherTypeIPv4   = 0x0800
	EtherTypeARP    = 0x0806
	EtherTypeRARP   = 0x8035
	EtherTypeVLAN   = 0x8100 // 802.1Q
	EtherTypeQinQ   = 0x88a8 // 802.1AD
	EtherTypeIPv6   = 0x86dd
	EtherTypePPP    = 0x880b // PPTP payload inside GRE v1
	EtherTypeMPLSUC = 0x8847
	EtherTypeMPLSMC = 0x8848
	EtherTypePPPoES = 0x8864
	EtherTypePRP    = 0x88fb
	EtherTypeTIPC   = 0x88ca
	EtherTypePTP    = 0x88f7
	EtherTypeHSR    = 0x892f
	EtherTypeCFM    = 0x8902
	EtherTypeFCoE   = 0x8906
	EtherTypeBATMAN = 0x4305
	EtherTypeTEB    = 0x6558 // transparent Ethernet bridging inside GRE
	EtherType8023   = 0x0001 // ETH_P_802_3: 802.3 length frame carrying FF FF (raw IPX)
	EtherType8022   = 0x0004 // ETH_P_802_2: 802.3 length frame with an LLC header
	minEtherType    = 0x0600 // type fields below this are 802.3 lengths
	EthernetHdrLen  = 14
	vlanHdrLen      = 4
	pppoeSesHdrLen  = 8 // PPPoE session header (6) and the PPP protocol field (2)
	mplsLabelLen    = 4
	fcoeHdrLen      = 38
	ptpHdrLen       = 34
	hsrTagLen       = 6
	tipcBasicHdrLen = 16
	batadvHdrLen    = 24 // batadv_unicast_packet (10) and the inner Ethernet header (14)
	ipv4MinHdrLen   = 20
	ipv6HdrLen      = 40
	ipv6OptHdrPeek  = 2 // next header and length of hop-by-hop, routing, dest options
	ipv6FragHdrLen  = 8
	greBaseHdrLen   = 4
	pppHdrLen       = 4 // address, control and protocol of a PPTP payload
	portsLen        = 4
	portsOffsetAH   = 4 // the SPI sits after next header, length and reserved
)

// IP protocol numbers the dissector branches on.
const (
	ipProtoHopOpts  = 0
	ipProtoICMP     = 1
	ipProtoIPIP     = 4
	ipProtoTCP      = 6
	ipProtoUDP      = 17
	ipProtoDCCP     = 33
	ipProtoIPv6     = 41
	ipProtoRouting  = 43
	ipProtoFragment = 44
	ipProtoGRE      = 47
	ipProtoESP      = 50
	ipProtoAH       = 51
	ipProtoDstOpts  = 60
	ipProtoSCTP     = 132
	ipProtoUDPLite  = 136
	ipProtoMPLS     = 137
)

// fits is the one bounds check of the slow path's reads: whether the n bytes
// at off lie within b. It is the kernel's __skb_header_pointer on a linear
// skb, where a read succeeds iff off+n <= len; written this way, it lets the
// compiler drop the checks of b[off:] and of the view's conversion.
func fits(b []byte, off, n int) bool {
	return off >= 0 && off <= len(b)-n
}

// ipv4Header is the fixed 20-byte part of an IPv4 header (RFC 791).
//
//	0       1       2       3
//	+-------+-------+-------+-------+
//	|ver|ihl|  tos  |  total length |
//	|  identification |flg|frag off |
//	|  ttl  | proto |   checksum    |
//	|        source address         |
//	|      destination address      |
type ipv4Header [ipv4MinHdrLen]byte

const (
	ipv4VerIHL    = 0 // version and IHL (the header length in 32-bit words); the version is never checked
	ipv4FragOff   = 6
	ipv4Protocol  = 9
	ipv4SrcAddr   = 12
	ipv4DstAddr   = 16
	ipv4MoreFrags = 0x2000
	ipv4OffsetMsk = 0x1fff
)

// ipv6Header is the fixed 40-byte IPv6 header (RFC 8200).
//
//	0       1       2       3
//	+-------+-------+-------+-------+
//	|ver| tclass|   flow label      |
//	| payload length| next  | hops  |
//	|   source address (16 bytes)   |
//	| destination address (16 bytes)|
type ipv6Header [ipv6HdrLen]byte

const (
	ipv6NextHeader = 6
	ipv6SrcAddr    = 8
	ipv6DstAddr    = 24
	ipv6LabelMask  = 0x000fffff
)

func (h *ipv6Header) FlowLabel() uint32 { return binary.BigEndian.Uint32(h[0:]) & ipv6LabelMask }
func (h *ipv6Header) NextHeader() uint8 { return h[ipv6NextHeader] }
func (h *ipv6Header) Addrs() [32]byte   { return [32]byte(h[ipv6SrcAddr:]) }

// vlanHeader is the 4 bytes after a TPID: TCI and the encapsulated ethertype.
type vlanHeader [vlanHdrLen]byte

const (
	vlanDEIBit = 0x1000 // never stored: the kernel's VLAN key has id and priority only
)

func (h *vlanHeader) TCI() uint16               { return binary.BigEndian.Uint16(h[0:]) }
func (h *vlanHeader) EncapsulatedProto() uint16 { return binary.BigEndian.Uint16(h[2:]) }

// pppoeSession is the PPPoE session header followed by the PPP protocol field.
//
//	0       1       2       3
//	+-------+-------+-------+-------+
//	|ver|typ| code  |  session id   |
//	|    length     | PPP protocol  |
type pppoeSession [pppoeSesHdrLen]byte

const (
	pppoeVerType  = 0x11 // version 1 and type 1 (is_pppoe_ses_hdr_valid)
	pppProtoIPv4  = 0x0021
	pppProtoIPv6  = 0x0057
	pppProtoMPLSU = 0x0281
	pppProtoMPLSM = 0x0283
)

func (h *pppoeSession) Valid() bool      { return h[0] == pppoeVerType && h[1] == 0 }
func (h *pppoeSession) Protocol() uint16 { return binary.BigEndian.Uint16(h[6:]) }

// greHeader is the 4-byte GRE base header (RFC 2784, RFC 2890, RFC 2637 for v1).
type greHeader [greBaseHdrLen]byte

const (
	greChecksum = 0x8000
	greRouting  = 0x4000
	greKey      = 0x2000
	greSeq      = 0x1000
	greAck      = 0x0080
	greVersion  = 0x0007
	// pptpKeyMask keeps the call id: the low half of the key word in network order.
	pptpKeyMask = 0x0000ffff
)

func (h *greHeader) FlagsVersion() uint16 { return binary.BigEndian.Uint16(h[0:]) }
func (h *greHeader) Protocol() uint16     { return binary.BigEndian.Uint16(h[2:]) }
