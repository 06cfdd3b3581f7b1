package kernel

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// RSSConfig is a device's receive-side scaling setup, as `ethtool -x`
// shows it: the hash key, the hash function and the indirection table that
// maps a hash to a receive queue.
type RSSConfig struct {
	// Key is the hash key (for Toeplitz, the key the hash is computed with);
	// empty when the device has none to show.
	Key []byte
	// Indirection is the indirection table: a frame with hash h goes to
	// receive queue Indirection[h % len(Indirection)]. Empty when the device
	// has none to show.
	Indirection []uint32
	// HashFunc is the hash function in use.
	HashFunc RSSHashFunc
	// InputXfrm is how the device transforms the input before hashing
	// (RXH_XFRM_*: symmetric XOR, Linux 6.8); 0 for none.
	InputXfrm RSSInputXfrm
}

// RSSHashFunc is a set of ETH_RSS_HASH_* bits (include/uapi/linux/ethtool.h):
// the hash function a device uses.
type RSSHashFunc uint8

// The hash functions.
const (
	RSSToeplitz RSSHashFunc = 1 << 0 // ETH_RSS_HASH_TOP
	RSSXOR      RSSHashFunc = 1 << 1 // ETH_RSS_HASH_XOR
	RSSCRC32    RSSHashFunc = 1 << 2 // ETH_RSS_HASH_CRC32
)

// String names the functions as ethtool does ("toeplitz", "xor", "crc32").
func (f RSSHashFunc) String() string {
	return bitNames(uint64(f), []string{"toeplitz", "xor", "crc32"}, "none")
}

// RSSInputXfrm is a set of RXH_XFRM_* bits.
type RSSInputXfrm uint8

// The input transformations.
const (
	RSSSymXOR   RSSInputXfrm = 1 << 0 // RXH_XFRM_SYM_XOR: fields XORed with their reverse
	RSSSymORXOR RSSInputXfrm = 1 << 1 // RXH_XFRM_SYM_OR_XOR, Linux 6.13
)

func (x RSSInputXfrm) String() string {
	return bitNames(uint64(x), []string{"sym-xor", "sym-or-xor"}, "none")
}

// bitNames joins the names of the set bits of v (bit i named names[i]) with
// '|', bits without a name in hex; none when v is 0.
func bitNames(v uint64, names []string, none string) string {
	if v == 0 {
		return none
	}
	var parts []string
	var named uint64
	for i, n := range names {
		if n != "" {
			named |= 1 << i
			if v&(1<<i) != 0 {
				parts = append(parts, n)
			}
		}
	}
	if rest := v &^ named; rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", rest))
	}
	return strings.Join(parts, "|")
}

// Bounds on what a device may report: far above every driver's (the largest
// indirection tables have a few thousand entries, keys up to 52 bytes), low
// enough that a confused driver cannot make the reader allocate much.
const (
	maxRSSIndirection = 1 << 16
	maxRSSKey         = 1 << 10
)

// rxfhHeaderLen is the size of struct ethtool_rxfh before its rss_config
// array: cmd, rss_context, indir_size, key_size (u32 each), hfunc,
// input_xfrm, rsvd8[2] (u8 each), rsvd32.
const rxfhHeaderLen = 24

// Offsets into struct ethtool_rxfh.
const (
	rxfhCmd       = 0
	rxfhIndirSize = 8
	rxfhKeySize   = 12
	rxfhHFunc     = 16
	rxfhInputXfrm = 17
)

// rxfhSizes reads the table and key sizes of an ethtool_rxfh header, checked
// against the bounds.
func rxfhSizes(b []byte) (indir, key int, err error) {
	if len(b) < rxfhHeaderLen {
		return 0, 0, fmt.Errorf("ethtool RSS reply of %d bytes, shorter than its %d-byte header", len(b), rxfhHeaderLen)
	}
	ne := binary.NativeEndian
	i, k := ne.Uint32(b[rxfhIndirSize:]), ne.Uint32(b[rxfhKeySize:])
	if i > maxRSSIndirection || k > maxRSSKey {
		return 0, 0, fmt.Errorf("ethtool RSS reply: indirection table of %d entries and key of %d bytes, want at most %d and %d", i, k, maxRSSIndirection, maxRSSKey)
	}
	return int(i), int(k), nil
}

// decodeRXFH decodes a struct ethtool_rxfh that ETHTOOL_GRSSH filled: its
// header, then the indirection table (indir_size u32s), then the key
// (key_size bytes).
func decodeRXFH(b []byte) (RSSConfig, error) {
	indir, key, err := rxfhSizes(b)
	if err != nil {
		return RSSConfig{}, err
	}
	if want := rxfhHeaderLen + 4*indir + key; len(b) < want {
		return RSSConfig{}, fmt.Errorf("ethtool RSS reply of %d bytes, want %d for %d table entries and a %d-byte key", len(b), want, indir, key)
	}
	c := RSSConfig{HashFunc: RSSHashFunc(b[rxfhHFunc]), InputXfrm: RSSInputXfrm(b[rxfhInputXfrm])}
	if indir > 0 {
		c.Indirection = make([]uint32, indir)
		for i := range c.Indirection {
			c.Indirection[i] = binary.NativeEndian.Uint32(b[rxfhHeaderLen+4*i:])
		}
	}
	if key > 0 {
		off := rxfhHeaderLen + 4*indir
		c.Key = append([]byte(nil), b[off:off+key]...)
	}
	return c, nil
}

// RXHashFields is a set of RXH_* bits (include/uapi/linux/ethtool.h): the
// header fields a device feeds its RSS hash for one kind of flow, as
// `ethtool -n IFACE rx-flow-hash tcp4` shows them.
type RXHashFields uint64

// The fields.
const (
	RXHL2DA    RXHashFields = 1 << 1  // destination MAC address
	RXHVLAN    RXHashFields = 1 << 2  // VLAN tag
	RXHL3Proto RXHashFields = 1 << 3  // L3 protocol
	RXHIPSrc   RXHashFields = 1 << 4  // IP source address
	RXHIPDst   RXHashFields = 1 << 5  // IP destination address
	RXHL4B01   RXHashFields = 1 << 6  // L4 bytes 0-1: the source port
	RXHL4B23   RXHashFields = 1 << 7  // L4 bytes 2-3: the destination port
	RXHDiscard RXHashFields = 1 << 31 // frames of this flow type are dropped
)

// rxhNames names the RXH bits, as ethtool's rx-flow-hash letters spell
// them out; bits without a name print in hex.
var rxhNames = []string{1: "l2da", 2: "vlan", 3: "l3-proto", 4: "ip-src", 5: "ip-dst", 6: "l4-b0-1", 7: "l4-b2-3"}

// String names the fields ("ip-src|ip-dst|l4-b0-1|l4-b2-3").
func (f RXHashFields) String() string {
	s := bitNames(uint64(f&^RXHDiscard), rxhNames, "none")
	if f&RXHDiscard != 0 {
		s = "discard|" + s
	}
	return s
}

// RSSFlowType is an ethtool flow type (TCP_V4_FLOW and so on).
type RSSFlowType uint32

// The flow types whose hash fields decide the RSS hash of TCP and UDP.
const (
	TCPv4Flow RSSFlowType = 0x01
	UDPv4Flow RSSFlowType = 0x02
	TCPv6Flow RSSFlowType = 0x05
	UDPv6Flow RSSFlowType = 0x06
)

func (t RSSFlowType) String() string {
	switch t {
	case TCPv4Flow:
		return "tcp4"
	case UDPv4Flow:
		return "udp4"
	case TCPv6Flow:
		return "tcp6"
	case UDPv6Flow:
		return "udp6"
	default:
		return fmt.Sprintf("flow-type-%#x", uint32(t))
	}
}
