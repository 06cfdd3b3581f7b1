package corpus

import "encoding/binary"

// Limits of the kernel oracle's BPF_PROG_TEST_RUN, measured on Linux 6.18
// (see package internal/kernel).
const (
	// minFrameLen is a whole Ethernet header.
	minFrameLen = 14
	// maxFrameLen is one page less the test run's headroom and shared info.
	maxFrameLen = 3712
)

// FitsOracle reports whether the kernel's test run accepts frame: 14 to 3712
// bytes, and at least a 20-byte IPv4 or 40-byte IPv6 header after an Ethernet
// header of that type.
func FitsOracle(frame []byte) bool {
	if len(frame) < minFrameLen || len(frame) > maxFrameLen {
		return false
	}
	switch binary.BigEndian.Uint16(frame[12:]) {
	case etherTypeIPv4:
		return len(frame) >= minFrameLen+20
	case etherTypeIPv6:
		return len(frame) >= minFrameLen+40
	}
	return true
}

// Comparable reports whether the kernel's hash of frame can be compared with
// another implementation's: the oracle accepts it (FitsOracle) and it is not
// a TIPC link keep-alive, which the kernel keys with fresh random bytes.
// Keep-alives are looked for behind the Ethernet header, VLAN tags, HSR/PRP
// tags and batman-adv unicast headers, not inside IP tunnels.
func Comparable(frame []byte) bool {
	return FitsOracle(frame) && !tipcKeepAlive(frame)
}

// tipcKeepAlive walks the layer-2 headers of frame to a TIPC header and
// reports whether its first word marks a link-protocol keep-alive
// (net/core/flow_dissector.c, __skb_flow_dissect, ETH_P_TIPC).
func tipcKeepAlive(frame []byte) bool {
	off := 12 // the Ethernet type
	for {
		if off+2 > len(frame) {
			return false
		}
		typ := binary.BigEndian.Uint16(frame[off:])
		next := off + 2 // the header after the type field
		switch typ {
		case etherType8021Q, etherType8021AD:
			off = next + 2 // the tag's inner type
		case etherTypeHSR, etherTypePRP:
			off = next + 4
		case etherTypeBatmanAdv:
			off = next + 10 + 12 // unicast header, then the inner Ethernet type
		case etherTypeTIPC:
			if next+4 > len(frame) {
				return false
			}
			const keepAlive = 0x0E080000
			return binary.BigEndian.Uint32(frame[next:])&keepAlive == keepAlive
		default:
			return false
		}
	}
}
