package nicrss

import "encoding/binary"

// Typed views over the headers the device reads, each the exact number of
// bytes it reads, taken as (*view)(b[off:]) once hdr has checked the read.

const (
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86dd
	etherTypeVLAN = 0x8100 // 802.1Q
	etherTypeQinQ = 0x88a8 // 802.1ad

	ethHdrLen     = 14
	vlanHdrLen    = 4
	ipv4HdrLen    = 20
	ipv6HdrLen    = 40
	extHdrLen     = 2 // next header and length of an IPv6 extension header
	routingHdrLen = 8 // next, length, routing type, segments left, reserved
	greHdrLen     = 4
	tcpHdrLen     = 20 // the device reads the whole fixed TCP header
	udpHdrLen     = 8
)

// IP protocol numbers.
const (
	protoHopOpts  = 0
	protoIPIP     = 4
	protoTCP      = 6
	protoUDP      = 17
	protoIPv6     = 41
	protoRouting  = 43
	protoFragment = 44
	protoGRE      = 47
	protoAH       = 51
	protoDstOpts  = 60
	protoMobility = 135
)

// hdr is the one bounds check of every read: the n bytes at off, if they
// lie within b.
func hdr(b []byte, off, n int) ([]byte, bool) {
	if off < 0 || off > len(b)-n {
		return nil, false
	}
	return b[off : off+n], true
}

// ethHeader is an Ethernet header: destination, source, EtherType.
type ethHeader [ethHdrLen]byte

func (h *ethHeader) EtherType() uint16 { return binary.BigEndian.Uint16(h[12:]) }

// vlanTag is an 802.1Q/802.1ad tag after its TPID: TCI, then the
// encapsulated EtherType.
type vlanTag [vlanHdrLen]byte

func (h *vlanTag) EncapsulatedProto() uint16 { return binary.BigEndian.Uint16(h[2:]) }

// ipv4Header is the fixed part of an IPv4 header (RFC 791).
//
//	|ver|ihl|  tos  |  total length |
//	|  identification |flg|frag off |
//	|  ttl  | proto |   checksum    |
//	|        source address         |
//	|      destination address      |
type ipv4Header [ipv4HdrLen]byte

const (
	ipv4MoreFrags  = 0x2000
	ipv4OffsetMask = 0x1fff
)

func (h *ipv4Header) Version() uint8 { return h[0] >> 4 }
func (h *ipv4Header) IHL() int       { return int(h[0]&0x0f) * 4 }
func (h *ipv4Header) IsFragment() bool {
	return binary.BigEndian.Uint16(h[6:])&(ipv4MoreFrags|ipv4OffsetMask) != 0
}
func (h *ipv4Header) Protocol() uint8 { return h[9] }
func (h *ipv4Header) Src() []byte     { return h[12:16] }
func (h *ipv4Header) Dst() []byte     { return h[16:20] }

// ipv6Header is the fixed IPv6 header (RFC 8200).
//
//	|ver| tclass|   flow label      |
//	| payload length| next  | hops  |
//	|   source address (16 bytes)   |
//	| destination address (16 bytes)|
type ipv6Header [ipv6HdrLen]byte

func (h *ipv6Header) NextHeader() uint8 { return h[6] }
func (h *ipv6Header) Src() []byte       { return h[8:24] }
func (h *ipv6Header) Dst() []byte       { return h[24:40] }

// extHeader is the start of an IPv6 extension header: next header and the
// length in 8-byte units after the first 8.
type extHeader [extHdrLen]byte

func (h *extHeader) NextHeader() uint8 { return h[0] }
func (h *extHeader) Len() int          { return (int(h[1]) + 1) * 8 }

// routingHeader is the fixed part of an IPv6 routing header (RFC 8200 4.4);
// a type 2 header (RFC 6275 6.4) carries one address after it: the mobile
// node's home address, which the _EX hash types take as the destination.
type routingHeader [routingHdrLen]byte

func (h *routingHeader) LenField() uint8     { return h[1] }
func (h *routingHeader) RoutingType() uint8  { return h[2] }
func (h *routingHeader) SegmentsLeft() uint8 { return h[3] }

// greHeader is the GRE base header (RFC 2784, RFC 2890).
type greHeader [greHdrLen]byte

const (
	greChecksum = 0x8000
	greRouting  = 0x4000
	greKey      = 0x2000
	greSeq      = 0x1000
	greVersion  = 0x0007
)

func (h *greHeader) FlagsVersion() uint16 { return binary.BigEndian.Uint16(h[0:]) }
func (h *greHeader) Protocol() uint16     { return binary.BigEndian.Uint16(h[2:]) }

// Destination option types the _EX hash types look for (RFC 8200, RFC 6275).
const (
	optPad1        = 0x00
	optHomeAddress = 0xc9
)
