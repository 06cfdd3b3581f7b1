package kernel

import (
	"encoding/binary"
	"syscall"
)

// XDPMetadata is what the device told the XDP metadata program about one
// received frame: its RX hash, the VLAN tag it stripped, its RX timestamp,
// each with the kfunc's result. Its zero value is a frame without metadata
// (received through the plain redirect program, or one whose metadata could
// not be written). ENODATA (the device has no value for this frame: on veth,
// a frame that arrived without an skb, or without a tag) and EOPNOTSUPP (the
// driver does not implement the kfunc) are the normal failures.
type XDPMetadata struct {
	// Timestamp is the device's RX timestamp in nanoseconds of the device's
	// clock (bpf_xdp_metadata_rx_timestamp); valid when Valid and
	// TimestampErr is 0. A device may succeed with 0: veth does when the skb
	// carries no hardware timestamp.
	Timestamp uint64
	// Hash is the device's hash of the frame (bpf_xdp_metadata_rx_hash);
	// valid when Valid and HashErr is 0.
	Hash uint32
	// HashType says what the device hashed; valid with Hash.
	HashType RSSHashType
	// VLANProto is the TPID of the stripped outer VLAN tag (0x8100 or
	// 0x88a8, host order) and VLANTCI its TCI
	// (bpf_xdp_metadata_rx_vlan_tag); valid when Valid and VLANErr is 0.
	VLANProto, VLANTCI uint16
	// HashErr, VLANErr and TimestampErr are the kfuncs' errors, 0 on
	// success.
	HashErr, VLANErr, TimestampErr KfuncErr
	// Valid tells whether the program wrote metadata in front of the frame;
	// every other field is zero when it did not.
	Valid bool
}

// KfuncErr is the error a metadata kfunc returned: the errno it returned
// negated (ENODATA, EOPNOTSUPP), 0 for success. It is 16 bits wide, as the
// program stores it, to keep XDPMetadata at 32 bytes.
type KfuncErr uint16

// Errno is the error as an errno, 0 for success.
func (e KfuncErr) Errno() syscall.Errno { return syscall.Errno(e) }

// String is "ok" or the errno's text.
func (e KfuncErr) String() string {
	if e == 0 {
		return "ok"
	}
	return syscall.Errno(e).Error()
}

// HasHash tells whether the device gave a hash for the frame.
func (m XDPMetadata) HasHash() bool { return m.Valid && m.HashErr == 0 }

// HasVLAN tells whether the device stripped a VLAN tag from the frame.
func (m XDPMetadata) HasVLAN() bool { return m.Valid && m.VLANErr == 0 }

// HasTimestamp tells whether the device gave a non-zero RX timestamp.
func (m XDPMetadata) HasTimestamp() bool {
	return m.Valid && m.TimestampErr == 0 && m.Timestamp != 0
}

// RSSHashType is the kernel's enum xdp_rss_hash_type (include/net/xdp.h,
// Linux 6.3): which headers the device's hash covered.
type RSSHashType uint32

// The bits of RSSHashType. A type with no bit set (RSSTypeNone) is a hash of
// the L2 header or of nothing known; veth reports RSSL4 alone for a hash the
// kernel computed from ports (skb->l4_hash) and RSSTypeNone otherwise.
const (
	RSSL3IPv4   RSSHashType = 1 << 0
	RSSL3IPv6   RSSHashType = 1 << 1
	RSSL3DynHdr RSSHashType = 1 << 2 // IPv4 options or IPv6 extension headers
	RSSL4       RSSHashType = 1 << 3 // the hash covers L4 ports
	RSSL4TCP    RSSHashType = 1 << 4
	RSSL4UDP    RSSHashType = 1 << 5
	RSSL4SCTP   RSSHashType = 1 << 6
	RSSL4IPSec  RSSHashType = 1 << 7
	RSSL4ICMP   RSSHashType = 1 << 8

	RSSTypeNone RSSHashType = 0
)

// IsL4 tells whether the hash covers the L4 ports: the kernel keeps such a
// hash as skb->hash with l4_hash set, and skb_get_hash returns it.
func (t RSSHashType) IsL4() bool { return t&RSSL4 != 0 }

var rssTypeNames = []string{"l3-ipv4", "l3-ipv6", "l3-dynhdr", "l4", "l4-tcp", "l4-udp", "l4-sctp", "l4-ipsec", "l4-icmp"}

// String names the set bits ("l3-ipv4|l4|l4-udp"), "none" for none.
func (t RSSHashType) String() string { return bitNames(uint64(t), rssTypeNames, "none") }

// XDPMetadataLen is the size of the metadata the program writes in front of
// each frame (struct layout below); it fits the kernel's limit on XDP
// metadata (a multiple of 4 bytes; older kernels take at most 32) and the
// 256 bytes of headroom before every frame in a UMEM frame (XSKHeadroom).
//
//	offset size
//	 0     8    RX timestamp (host order)
//	 8     4    RX hash (host order)
//	12     4    RSS hash type (enum xdp_rss_hash_type)
//	16     2    VLAN TPID (network order, as the kfunc writes it)
//	18     2    VLAN TCI (host order)
//	20     2    timestamp kfunc result (0 or -errno, s16)
//	22     2    hash kfunc result
//	24     2    VLAN kfunc result
//	26     2    zero
//	28     4    xdpMetadataMagic: the program wrote this metadata
const XDPMetadataLen = 32

// Offsets into the metadata.
const (
	metaTimestamp = 0
	metaHash      = 8
	metaHashType  = 12
	metaVLANProto = 16
	metaVLANTCI   = 18
	metaTSErr     = 20
	metaHashErr   = 22
	metaVLANErr   = 24
	metaMagic     = 28
)

// xdpMetadataMagic marks metadata the program wrote ("xdph" in memory order
// on a little-endian machine). The socket clears it when it gives a frame
// back to the kernel, so that a frame whose metadata could not be written
// never shows an earlier frame's.
const xdpMetadataMagic = 0x68706478

// ParseXDPMetadata decodes the metadata in the last XDPMetadataLen bytes of
// head, the bytes that end where the frame starts. It returns the zero
// XDPMetadata (not Valid) when head is shorter or holds no metadata the
// program wrote. It does not allocate.
func ParseXDPMetadata(head []byte) XDPMetadata {
	if len(head) < XDPMetadataLen {
		return XDPMetadata{}
	}
	b := head[len(head)-XDPMetadataLen:]
	ne := binary.NativeEndian
	if ne.Uint32(b[metaMagic:]) != xdpMetadataMagic {
		return XDPMetadata{}
	}
	return XDPMetadata{
		Valid:        true,
		Timestamp:    ne.Uint64(b[metaTimestamp:]),
		Hash:         ne.Uint32(b[metaHash:]),
		HashType:     RSSHashType(ne.Uint32(b[metaHashType:])),
		VLANProto:    binary.BigEndian.Uint16(b[metaVLANProto:]),
		VLANTCI:      ne.Uint16(b[metaVLANTCI:]),
		TimestampErr: kfuncErrno(ne.Uint16(b[metaTSErr:])),
		HashErr:      kfuncErrno(ne.Uint16(b[metaHashErr:])),
		VLANErr:      kfuncErrno(ne.Uint16(b[metaVLANErr:])),
	}
}

// kfuncErrno turns a kfunc's result, kept as its low 16 bits, into a
// KfuncErr: 0 for success, e for -e.
func kfuncErrno(ret uint16) KfuncErr { return KfuncErr(-int16(ret)) }
