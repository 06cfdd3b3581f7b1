package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
)

// Frames returns the base frame of every corpus shape, rounds times over,
// addressed to dst, each rewritten to be a flow of its own as far as its
// flow keys allow:
//
//   - where the keys hold transport ports (or an SPI), the source port
//     becomes the frame's index (plus 1024), written where the dissector
//     reads it;
//   - otherwise, where they hold IP addresses, the source address becomes
//     one of 198.18.128.0/17 or 2001:db8:ffff::/48 numbered by the index;
//   - otherwise (ARP, MPLS, TIPC, PPP control frames and the other shapes
//     whose keys hold neither ports nor IP addresses), the frame keeps its
//     flow.
//
// A rewrite is kept only when dissecting the frame again changes the keys
// in the rewritten field and nowhere else, so every frame keeps its shape.
// Then, so that a receiver can tell every frame apart by its keys and its
// length, a frame whose keys and length equal an earlier frame's gets zero
// bytes appended until they do not: trailing bytes past the last header
// change nothing the dissector reads. The i-th frame of the result is
// rewritten from index i; the result is the same on every call.
func Frames(dst net.HardwareAddr, rounds int) ([][]byte, error) {
	if len(dst) != 6 {
		return nil, fmt.Errorf("build e2e frames: destination MAC %q, want 6 bytes", dst)
	}
	bases := corpus.Bases()
	if rounds*len(bases) > maxFrames {
		return nil, fmt.Errorf("build e2e frames: %d rounds of %d shapes is more than the %d frames that have ports and addresses of their own", rounds, len(bases), maxFrames)
	}
	type identity struct {
		keys dissect.FlowKeys
		len  int
	}
	seen := map[identity]bool{}
	var out [][]byte
	for range rounds {
		for _, b := range bases {
			f := append([]byte(nil), b.Data...)
			copy(f, dst)
			i := len(out)
			if !rewritePort(f, uint16(1024+i)) {
				rewriteSource(f, i)
			}
			for seen[identity{keysOf(f), len(f)}] {
				f = append(f, 0)
			}
			seen[identity{keysOf(f), len(f)}] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// maxFrames bounds Frames' result: a port of its own above 1024, and an
// address of its own in a /17.
const maxFrames = 1 << 15

// Regions of dissect.FlowKeys that a rewrite may change.
var (
	portsRegion = [2]int{dissect.OffPorts, dissect.OffPorts + 4}
	addrsRegion = [2]int{dissect.OffAddrs, dissect.OffAddrs + 32}
)

// rewritePort makes port the frame's source port, as the dissector reads it,
// and reports whether it could. The ports lie at the transport offset, or 4
// bytes past it (AH's SPI).
func rewritePort(f []byte, port uint16) bool {
	before := keysOf(f)
	if before.PortsWord() == 0 {
		return false
	}
	thoff := int(before.THoff())
	for _, off := range []int{thoff, thoff + 4} {
		if off+2 > len(f) {
			break
		}
		old := binary.BigEndian.Uint16(f[off:])
		binary.BigEndian.PutUint16(f[off:], port)
		if after := keysOf(f); after.SrcPort() == port && sameOutside(&before, &after, portsRegion) {
			return true
		}
		binary.BigEndian.PutUint16(f[off:], old)
	}
	return false
}

// rewriteSource makes an address numbered i the frame's source address, as
// the dissector reads it, and reports whether it could: the last copy of the
// keys' source address before the transport offset is the one the keys took
// (tunnels put the inner header last).
func rewriteSource(f []byte, i int) bool {
	before := keysOf(f)
	src := before.Src()
	var next netip.Addr
	switch {
	case src.Is4():
		next = netip.AddrFrom4([4]byte{198, 18, 128 + byte(i>>8), byte(i)})
	case src.Is6():
		next = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 14: byte(i >> 8), 15: byte(i)})
	default:
		return false
	}
	head := f[:min(int(before.THoff()), len(f))]
	at := bytes.LastIndex(head, src.AsSlice())
	if at < 0 {
		return false
	}
	old := append([]byte(nil), head[at:at+src.BitLen()/8]...)
	copy(f[at:], next.AsSlice())
	if after := keysOf(f); after.Src() == next && sameOutside(&before, &after, addrsRegion) {
		return true
	}
	copy(f[at:], old)
	return false
}

// keysOf is the slow path's keys of frame f with the flags of skb_get_hash.
func keysOf(f []byte) dissect.FlowKeys {
	var k dissect.FlowKeys
	dissect.DissectFrame(&k, f, dissect.DefaultFlags)
	return k
}

// sameOutside reports whether a and b differ only inside region.
func sameOutside(a, b *dissect.FlowKeys, region [2]int) bool {
	return bytes.Equal(a[:region[0]], b[:region[0]]) && bytes.Equal(a[region[1]:], b[region[1]:])
}
