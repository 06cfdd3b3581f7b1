package corpus

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// MutationKind says what Mutate did to a frame.
type MutationKind uint8

// Kinds of random mutation.
const (
	// FlipBits XORs one byte with Value.
	FlipBits MutationKind = iota + 1
	// SetByte sets one byte to Value.
	SetByte
	// SetWord sets two bytes to a 16-bit Value taken from the Ethernet
	// types, PPP protocols and flag words the dissector branches on.
	SetWord
	// Truncate cuts the frame to Off bytes.
	Truncate
	// Pad appends bytes (Value each) until the frame is Off bytes long, as
	// Ethernet padding or a trailer would.
	Pad
	// SetPort sets the transport port at Off to Value.
	SetPort
	// SwapDirection exchanges the outermost IP addresses and, when found,
	// the transport ports: the reply direction of the same flow.
	SwapDirection
)

// Mutation describes one random mutation.
type Mutation struct {
	Kind MutationKind
	// Off is the offset of the changed bytes, or for Truncate and Pad the
	// frame's new length.
	Off   int
	Value uint32
}

func (m Mutation) String() string {
	switch m.Kind {
	case FlipBits:
		return fmt.Sprintf("flip[%d]^%#02x", m.Off, m.Value)
	case SetByte:
		return fmt.Sprintf("set[%d]=%#02x", m.Off, m.Value)
	case SetWord:
		return fmt.Sprintf("set16[%d]=%#04x", m.Off, m.Value)
	case Truncate:
		return fmt.Sprintf("trunc=%d", m.Off)
	case Pad:
		return fmt.Sprintf("pad=%d-%02x", m.Off, m.Value)
	case SetPort:
		return fmt.Sprintf("port[%d]=%d", m.Off, m.Value)
	case SwapDirection:
		return "swap"
	}
	return "none"
}

// Values the dissector branches on, favoured by SetByte and SetWord: IPv4
// version/IHL bytes, IP protocols (hop-by-hop, IPIP, TCP, UDP, IPv6, GRE),
// PPPoE version/type.
var (
	interestingBytes = []uint8{0x00, 0x01, 0x7f, 0x80, 0xff, 0x45, 0x46, 0x4f, 0x60, 0x04, 0x06, 0x11, 0x29, 0x2c, 0x2f, 0x3c, 0x88}
	interestingWords = []uint16{
		etherTypeIPv4, etherTypeIPv6, etherType8021Q, etherType8021AD, etherTypePPPoES, etherTypeMPLS,
		etherTypeMPLSMC, etherTypeTEB, etherTypePPP, etherTypeTIPC, etherTypeBatmanAdv, etherTypeHSR,
		etherTypeFCoE, pppIPv4, pppIPv6, pppMPLS, 0x2000, 0x3000, 0x4000, 0x0000, 0xffff, 0x0001,
	}
	interestingPorts = []uint16{0, 1, 53, 80, 443, 1024, 1025, 1026, 8080, 65535}
)

// Mutate writes into dst's storage a copy of base with one random mutation,
// and returns it with what was done. When base is Comparable so is the
// result: mutations that would make the oracle refuse the frame, or turn it
// into a TIPC keep-alive, are drawn again (after 16 draws base is returned
// unchanged, as a Truncate to its own length).
func Mutate(rng *rand.Rand, base, dst []byte) ([]byte, Mutation) {
	for range 16 {
		frame, m := mutateOnce(rng, base, dst)
		if Comparable(frame) || !Comparable(base) {
			return frame, m
		}
		dst = frame
	}
	return append(dst[:0], base...), Mutation{Kind: Truncate, Off: len(base)}
}

func mutateOnce(rng *rand.Rand, base, dst []byte) ([]byte, Mutation) {
	frame := append(dst[:0], base...)
	if len(frame) == 0 {
		return frame, Mutation{Kind: Truncate}
	}
	// Headers live near the start: aim three byte changes in four there.
	pos := func(width int) int {
		n := len(frame) - width + 1
		if n <= 0 {
			return -1
		}
		if rng.IntN(4) != 0 && n > 96 {
			n = 96
		}
		return rng.IntN(n)
	}
	switch k := rng.IntN(16); {
	case k < 4:
		off := pos(1)
		v := uint8(1 + rng.IntN(255))
		frame[off] ^= v
		return frame, Mutation{Kind: FlipBits, Off: off, Value: uint32(v)}
	case k < 6:
		off := pos(1)
		v := interestingBytes[rng.IntN(len(interestingBytes))]
		frame[off] = v
		return frame, Mutation{Kind: SetByte, Off: off, Value: uint32(v)}
	case k < 8:
		off := pos(2)
		if off < 0 {
			break
		}
		v := interestingWords[rng.IntN(len(interestingWords))]
		binary.BigEndian.PutUint16(frame[off:], v)
		return frame, Mutation{Kind: SetWord, Off: off, Value: uint32(v)}
	case k < 10:
		if len(frame) <= minFrameLen {
			break
		}
		n := minFrameLen + rng.IntN(len(frame)-minFrameLen)
		return frame[:n], Mutation{Kind: Truncate, Off: n}
	case k < 11:
		v := uint8(0)
		if rng.IntN(2) == 0 {
			v = uint8(rng.IntN(256))
		}
		for range 1 + rng.IntN(32) {
			frame = append(frame, v)
		}
		return frame, Mutation{Kind: Pad, Off: len(frame), Value: uint32(v)}
	case k < 14:
		l := locate(frame)
		if l.ports < 0 {
			break
		}
		off := l.ports + 2*rng.IntN(2)
		v := uint16(rng.Uint32())
		if rng.IntN(2) == 0 {
			v = interestingPorts[rng.IntN(len(interestingPorts))]
		}
		binary.BigEndian.PutUint16(frame[off:], v)
		return frame, Mutation{Kind: SetPort, Off: off, Value: uint32(v)}
	default:
		l := locate(frame)
		if l.addrs < 0 {
			break
		}
		swapHalves(frame[l.addrs : l.addrs+2*l.addrLen])
		if l.ports >= 0 {
			swapHalves(frame[l.ports : l.ports+4])
		}
		return frame, Mutation{Kind: SwapDirection, Off: l.addrs}
	}
	// The drawn kind did not apply to this frame: flip a byte instead.
	off := pos(1)
	v := uint8(1 + rng.IntN(255))
	frame[off] ^= v
	return frame, Mutation{Kind: FlipBits, Off: off, Value: uint32(v)}
}

func swapHalves(b []byte) {
	h := len(b) / 2
	for i := range h {
		b[i], b[h+i] = b[h+i], b[i]
	}
}

// location is where locate found the outermost IP addresses (source then
// destination, addrLen bytes each) and transport ports; -1 when not found.
type location struct {
	addrs, addrLen, ports int
}

// locate finds the outermost IP header behind Ethernet, VLAN tags and a
// PPPoE session, and its TCP/UDP/UDP-Lite/SCTP/DCCP ports when the header is
// not a fragment and has no IPv6 extension headers. It is a test-frame tool,
// not a dissector: it gives up on anything else.
func locate(frame []byte) location {
	l := location{addrs: -1, ports: -1}
	off := 12
	var typ uint16
	for {
		if off+2 > len(frame) {
			return l
		}
		typ = binary.BigEndian.Uint16(frame[off:])
		off += 2
		if typ != etherType8021Q && typ != etherType8021AD {
			break
		}
		off += 2
	}
	if typ == etherTypePPPoES {
		if off+8 > len(frame) {
			return l
		}
		switch binary.BigEndian.Uint16(frame[off+6:]) {
		case pppIPv4:
			typ = etherTypeIPv4
		case pppIPv6:
			typ = etherTypeIPv6
		default:
			return l
		}
		off += 8
	}
	var proto uint8
	var l4 int
	switch typ {
	case etherTypeIPv4:
		if off+20 > len(frame) || frame[off]&0x0F < 5 {
			return l
		}
		l.addrs, l.addrLen = off+12, 4
		if binary.BigEndian.Uint16(frame[off+6:])&0x3FFF != 0 {
			return l
		}
		proto, l4 = frame[off+9], off+4*int(frame[off]&0x0F)
	case etherTypeIPv6:
		if off+40 > len(frame) {
			return l
		}
		l.addrs, l.addrLen = off+8, 16
		proto, l4 = frame[off+6], off+40
	default:
		return l
	}
	switch proto {
	case ipProtoTCP, ipProtoUDP, ipProtoUDPLite, ipProtoSCTP, ipProtoDCCP:
		if l4+4 <= len(frame) {
			l.ports = l4
		}
	}
	return l
}
