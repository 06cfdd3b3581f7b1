package hash

import (
	"encoding/binary"
	"math/bits"

	"github.com/xdphash/xdphash/dissect"
)

// HashBatch sets hashes[i] and l4[i] to what [Kernel.Hash] returns for
// keys[i], for every i; hashes and l4 must be at least as long as keys. It
// computes the same SipHash-2-4 as Hash, but two keys at a time with their
// rounds interleaved: one SipHash is a single chain of dependent adds, xors
// and rotates, and a second, independent chain beside it fills ALUs the
// first leaves idle. The keys stay as dissected.
func (h Kernel) HashBatch(keys []dissect.FlowKeys, hashes []uint32, l4 []bool) {
	hashes, l4 = hashes[:len(keys)], l4[:len(keys)]
	var a, b sipMessage
	i := 0
	for ; i+1 < len(keys); i += 2 {
		l4[i] = a.load(&keys[i])
		l4[i+1] = b.load(&keys[i+1])
		va, vb := h.sum2(&a, &b)
		hashes[i], hashes[i+1] = fold(va), fold(vb)
	}
	if i < len(keys) {
		l4[i] = a.load(&keys[i])
		hashes[i] = fold(h.sum1(&a))
	}
}

// sipMessage is a consistentified region as SipHash reads it: its 8-byte
// little-endian words, the last of which carries the region's tail bytes and
// its length in the top byte, n words in all (6 full and the last for IPv4's
// 48 bytes, 9 and the last for IPv6's 72).
type sipMessage struct {
	w [regionIPv6/8 + 1]uint64
	n int
}

// Words of the keys from HashOffset: the word wordX of kernel.go is
// w[(wordX-HashOffset)/8].
const (
	mPorts = (wordPorts - dissect.HashOffset) / 8
	mICMP  = (wordICMP - dissect.HashOffset) / 8
	mAddr1 = (wordAddr1 - dissect.HashOffset) / 8
	mAddr2 = (wordAddr2 - dissect.HashOffset) / 8
	mAddr3 = (wordAddr3 - dissect.HashOffset) / 8
	mAddr4 = (wordAddr4 - dissect.HashOffset) / 8
)

// load fills m with the region of keys as Consistentify would leave it, and
// returns Hash's l4. It makes Hash's decisions (the same comparisons, in the
// same byte orders) and applies swap's exchanges to the words as it loads
// them, so that nothing is copied twice.
func (m *sipMessage) load(keys *dissect.FlowKeys) (l4 bool) {
	le := binary.LittleEndian
	w := &m.w
	for j := range mAddr2 {
		w[j] = le.Uint64(keys[dissect.HashOffset+8*j:])
	}
	ports := le.Uint32(keys[dissect.OffPorts:])
	l4 = ports|le.Uint32(keys[dissect.OffFlowLabel:]) != 0
	sortPorts := false
	t := dissect.AddrType(uint16(keys[dissect.OffAddrType]) | uint16(keys[dissect.OffAddrType+1])<<8)
	switch t {
	case dissect.AddrIPv6:
		w[mAddr2] = le.Uint64(keys[wordAddr2:])
		w[mAddr3] = le.Uint64(keys[wordAddr3:])
		w[mAddr4] = le.Uint64(keys[wordAddr4:])
		w[mAddr4+1] = uint64(regionIPv6) << 56
		m.n = mAddr4 + 2
		src, dst := keys[dissect.OffIPv6Src:dissect.OffIPv6Src+16], keys[dissect.OffIPv6Dst:dissect.OffIPv6Dst+16]
		sh, dh := be64(src[:8]), be64(dst[:8])
		if dh < sh || dh == sh && be64(dst[8:]) < be64(src[8:]) {
			w0, w1, w2, w3, w4 := w[mICMP], w[mAddr1], w[mAddr2], w[mAddr3], w[mAddr4]
			w[mICMP] = w0&lo32 | w2&^lo32
			w[mAddr1] = w3
			w[mAddr2] = w4&lo32 | w0&^lo32
			w[mAddr3] = w1
			w[mAddr4] = w4&^lo32 | w2&lo32
		}
		sortPorts = true
	case dissect.AddrIPv4:
		w[mAddr2] = uint64(regionIPv4) << 56
		m.n = mAddr2 + 1
		if w0, w1 := w[mICMP], w[mAddr1]; uint32(w1) < uint32(w0>>32) {
			w[mICMP] = w0&lo32 | w1<<32
			w[mAddr1] = w1&^lo32 | w0>>32
		}
		sortPorts = true
	case dissect.AddrTIPC:
		// 44 bytes: five words, then the TIPC key's 4 bytes.
		w[mAddr1] = uint64(le.Uint32(keys[wordAddr1:])) | uint64(regionTIPC)<<56
		m.n = mAddr1 + 1
	default:
		w[mAddr1] = uint64(regionNone) << 56
		m.n = mAddr1 + 1
	}
	if sortPorts && ports>>16 < ports&0xffff {
		p := w[mPorts]
		w[mPorts] = p&lo32 | p>>48<<32 | (p>>32&0xffff)<<48
	}
	return l4
}

// SipHash's initialisation constants ("somepseudorandomlygeneratedbytes").
const (
	sipInit0 = 0x736f6d6570736575
	sipInit1 = 0x646f72616e646f6d
	sipInit2 = 0x6c7967656e657261
	sipInit3 = 0x7465646279746573
)

// sipRound is one SipRound.
func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13) ^ v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16) ^ v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21) ^ v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17) ^ v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}

// sum1 is SipHash-2-4 of one message.
func (h Kernel) sum1(a *sipMessage) uint64 {
	v0, v1, v2, v3 := h.k0^sipInit0, h.k1^sipInit1, h.k0^sipInit2, h.k1^sipInit3
	for _, m := range a.w[:a.n] {
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
	}
	v2 ^= 0xff
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	return v0 ^ v1 ^ v2 ^ v3
}

// sum2 is SipHash-2-4 of two messages, their rounds interleaved over the
// words both have; the longer message's remaining words run alone, and the
// finalisations interleave again. The rounds are written out, not calls of
// sipRound: each inlined call that is a statement leaves a NOP behind.
func (h Kernel) sum2(a, b *sipMessage) (uint64, uint64) {
	a0, a1, a2, a3 := h.k0^sipInit0, h.k1^sipInit1, h.k0^sipInit2, h.k1^sipInit3
	b0, b1, b2, b3 := a0, a1, a2, a3
	n := min(a.n, b.n)
	aw, bw := a.w[:n], b.w[:n:n]
	for j, ma := range aw {
		mb := bw[j]
		a3 ^= ma
		b3 ^= mb
		a0 += a1
		b0 += b1
		a1 = bits.RotateLeft64(a1, 13) ^ a0
		b1 = bits.RotateLeft64(b1, 13) ^ b0
		a0 = bits.RotateLeft64(a0, 32)
		b0 = bits.RotateLeft64(b0, 32)
		a2 += a3
		b2 += b3
		a3 = bits.RotateLeft64(a3, 16) ^ a2
		b3 = bits.RotateLeft64(b3, 16) ^ b2
		a0 += a3
		b0 += b3
		a3 = bits.RotateLeft64(a3, 21) ^ a0
		b3 = bits.RotateLeft64(b3, 21) ^ b0
		a2 += a1
		b2 += b1
		a1 = bits.RotateLeft64(a1, 17) ^ a2
		b1 = bits.RotateLeft64(b1, 17) ^ b2
		a2 = bits.RotateLeft64(a2, 32)
		b2 = bits.RotateLeft64(b2, 32)
		a0 += a1
		b0 += b1
		a1 = bits.RotateLeft64(a1, 13) ^ a0
		b1 = bits.RotateLeft64(b1, 13) ^ b0
		a0 = bits.RotateLeft64(a0, 32)
		b0 = bits.RotateLeft64(b0, 32)
		a2 += a3
		b2 += b3
		a3 = bits.RotateLeft64(a3, 16) ^ a2
		b3 = bits.RotateLeft64(b3, 16) ^ b2
		a0 += a3
		b0 += b3
		a3 = bits.RotateLeft64(a3, 21) ^ a0
		b3 = bits.RotateLeft64(b3, 21) ^ b0
		a2 += a1
		b2 += b1
		a1 = bits.RotateLeft64(a1, 17) ^ a2
		b1 = bits.RotateLeft64(b1, 17) ^ b2
		a2 = bits.RotateLeft64(a2, 32)
		b2 = bits.RotateLeft64(b2, 32)
		a0 ^= ma
		b0 ^= mb
	}
	for _, m := range a.w[n:a.n] {
		a3 ^= m
		a0 += a1
		a1 = bits.RotateLeft64(a1, 13) ^ a0
		a0 = bits.RotateLeft64(a0, 32)
		a2 += a3
		a3 = bits.RotateLeft64(a3, 16) ^ a2
		a0 += a3
		a3 = bits.RotateLeft64(a3, 21) ^ a0
		a2 += a1
		a1 = bits.RotateLeft64(a1, 17) ^ a2
		a2 = bits.RotateLeft64(a2, 32)
		a0 += a1
		a1 = bits.RotateLeft64(a1, 13) ^ a0
		a0 = bits.RotateLeft64(a0, 32)
		a2 += a3
		a3 = bits.RotateLeft64(a3, 16) ^ a2
		a0 += a3
		a3 = bits.RotateLeft64(a3, 21) ^ a0
		a2 += a1
		a1 = bits.RotateLeft64(a1, 17) ^ a2
		a2 = bits.RotateLeft64(a2, 32)
		a0 ^= m
	}
	for _, m := range b.w[n:b.n] {
		b3 ^= m
		b0 += b1
		b1 = bits.RotateLeft64(b1, 13) ^ b0
		b0 = bits.RotateLeft64(b0, 32)
		b2 += b3
		b3 = bits.RotateLeft64(b3, 16) ^ b2
		b0 += b3
		b3 = bits.RotateLeft64(b3, 21) ^ b0
		b2 += b1
		b1 = bits.RotateLeft64(b1, 17) ^ b2
		b2 = bits.RotateLeft64(b2, 32)
		b0 += b1
		b1 = bits.RotateLeft64(b1, 13) ^ b0
		b0 = bits.RotateLeft64(b0, 32)
		b2 += b3
		b3 = bits.RotateLeft64(b3, 16) ^ b2
		b0 += b3
		b3 = bits.RotateLeft64(b3, 21) ^ b0
		b2 += b1
		b1 = bits.RotateLeft64(b1, 17) ^ b2
		b2 = bits.RotateLeft64(b2, 32)
		b0 ^= m
	}
	a2 ^= 0xff
	b2 ^= 0xff
	for range 2 {
		a0 += a1
		b0 += b1
		a1 = bits.RotateLeft64(a1, 13) ^ a0
		b1 = bits.RotateLeft64(b1, 13) ^ b0
		a0 = bits.RotateLeft64(a0, 32)
		b0 = bits.RotateLeft64(b0, 32)
		a2 += a3
		b2 += b3
		a3 = bits.RotateLeft64(a3, 16) ^ a2
		b3 = bits.RotateLeft64(b3, 16) ^ b2
		a0 += a3
		b0 += b3
		a3 = bits.RotateLeft64(a3, 21) ^ a0
		b3 = bits.RotateLeft64(b3, 21) ^ b0
		a2 += a1
		b2 += b1
		a1 = bits.RotateLeft64(a1, 17) ^ a2
		b1 = bits.RotateLeft64(b1, 17) ^ b2
		a2 = bits.RotateLeft64(a2, 32)
		b2 = bits.RotateLeft64(b2, 32)
		a0 += a1
		b0 += b1
		a1 = bits.RotateLeft64(a1, 13) ^ a0
		b1 = bits.RotateLeft64(b1, 13) ^ b0
		a0 = bits.RotateLeft64(a0, 32)
		b0 = bits.RotateLeft64(b0, 32)
		a2 += a3
		b2 += b3
		a3 = bits.RotateLeft64(a3, 16) ^ a2
		b3 = bits.RotateLeft64(b3, 16) ^ b2
		a0 += a3
		b0 += b3
		a3 = bits.RotateLeft64(a3, 21) ^ a0
		b3 = bits.RotateLeft64(b3, 21) ^ b0
		a2 += a1
		b2 += b1
		a1 = bits.RotateLeft64(a1, 17) ^ a2
		b1 = bits.RotateLeft64(b1, 17) ^ b2
		a2 = bits.RotateLeft64(a2, 32)
		b2 = bits.RotateLeft64(b2, 32)
	}
	return a0 ^ a1 ^ a2 ^ a3, b0 ^ b1 ^ b2 ^ b3
}
