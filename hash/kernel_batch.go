package hash

import (
	"math/bits"

	"github.com/xdphash/xdphash/dissect"
)

// HashBatch sets hashes[i] and l4[i] to what [Kernel.Hash] returns for
// keys[i], for every i; hashes and l4 must be at least as long as keys. The
// keys stay as dissected.
//
// It computes the same SipHash-2-4 as Hash, several keys at a time: one
// SipHash is a single chain of dependent adds, xors and rotates that leaves
// most of a core idle. Where the CPU has AVX2, keys whose regions have the same
// length go four at a time through one vector SipHash (sip4AVX2); otherwise,
// and for the keys left over, two at a time with their scalar rounds
// interleaved.
func (h Kernel) HashBatch(keys []dissect.FlowKeys, hashes []uint32, l4 []bool) {
	hashes, l4 = hashes[:len(keys)], l4[:len(keys)]
	if useAVX2 && len(keys) >= 4 {
		h.hashBatch4(keys, hashes, l4)
		return
	}
	var l sipLanes
	i := 0
	for ; i+1 < len(keys); i += 2 {
		l4[i] = l.load(0, &keys[i])
		l4[i+1] = l.load(1, &keys[i+1])
		va, vb := h.sum2(&l, 0, 1)
		hashes[i], hashes[i+1] = fold(va), fold(vb)
	}
	if i < len(keys) {
		l4[i] = l.load(0, &keys[i])
		hashes[i] = fold(h.sum1(&l, 0))
	}
}

// Region lengths in SipHash words (sipLanes.n), and the classes HashBatch
// sorts keys into so that four keys of a vector hash share a length.
const (
	wordsNone  = regionNone/8 + 1 // TIPC's 44 bytes too
	wordsIPv4  = regionIPv4/8 + 1
	wordsIPv6  = regionIPv6/8 + 1
	numLengths = 3
)

// lengthClass is the class of keys' region length: 0 for 6 words (no
// addresses or TIPC), 1 for 7 (IPv4), 2 for 10 (IPv6).
func lengthClass(keys *dissect.FlowKeys) int {
	switch dissect.AddrType(uint16(keys[dissect.OffAddrType]) | uint16(keys[dissect.OffAddrType+1])<<8) {
	case dissect.AddrIPv4:
		return 1
	case dissect.AddrIPv6:
		return 2
	}
	return 0
}

// hashBatch4 is HashBatch with AVX2: each key joins the four lanes of its
// length class, which run through sip4AVX2 once full; the at most three keys
// each class has left at the end run through the scalar hash in their lanes.
func (h Kernel) hashBatch4(keys []dissect.FlowKeys, hashes []uint32, l4 []bool) {
	var (
		lanes [numLengths]sipLanes
		idx   [numLengths][4]int // the key in each lane
		used  [numLengths]int
		out   [4]uint64
	)
	for i := range keys {
		c := lengthClass(&keys[i])
		l, lane := &lanes[c], used[c]&3
		idx[c][lane] = i
		l4[i] = l.load(lane, &keys[i])
		if lane < 3 {
			used[c] = lane + 1
			continue
		}
		used[c] = 0
		sip4AVX2(h.k0, h.k1, &l.w, l.n[0], &out)
		for lane, k := range idx[c] {
			hashes[k] = fold(out[lane])
		}
	}
	for c := range lanes {
		l, ix := &lanes[c], &idx[c]
		switch used[c] {
		case 3:
			hashes[ix[2]] = fold(h.sum1(l, 2))
			fallthrough
		case 2:
			va, vb := h.sum2(l, 0, 1)
			hashes[ix[0]], hashes[ix[1]] = fold(va), fold(vb)
		case 1:
			hashes[ix[0]] = fold(h.sum1(l, 0))
		}
	}
}

// sipLanes holds up to four consistentified regions as SipHash reads them,
// one per lane: word j of lane k is w[j][k], so that a vector load takes word
// j of all four. A region is its 8-byte little-endian words, the last of which
// carries the region's tail bytes and its length in the top byte: n[k] words
// in all (6 full and the last for IPv4's 48 bytes, 9 and the last for IPv6's
// 72).
type sipLanes struct {
	w [wordsIPv6][4]uint64
	n [4]int
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

// load fills lane k (0..3) with the region of keys as Consistentify would
// leave it, and returns Hash's l4. It makes Hash's decisions (the same
// comparisons, in the same byte orders) and applies swap's exchanges to the
// words as it loads them, so that nothing is copied twice.
func (l *sipLanes) load(k int, keys *dissect.FlowKeys) (l4 bool) {
	k &= 3
	w := &l.w
	// Written out: a loop costs more than the copies it makes.
	w[0][k] = le64(keys[dissect.HashOffset:])
	w[1][k] = le64(keys[dissect.HashOffset+8:])
	w[2][k] = le64(keys[dissect.HashOffset+16:])
	w[mPorts][k] = le64(keys[wordPorts:])
	w[mICMP][k] = le64(keys[wordICMP:])
	w[mAddr1][k] = le64(keys[wordAddr1:])
	ports := uint32(w[mPorts][k] >> 32)
	l4 = ports|uint32(w[0][k]>>32) != 0
	sortPorts := false
	t := dissect.AddrType(uint16(keys[dissect.OffAddrType]) | uint16(keys[dissect.OffAddrType+1])<<8)
	switch t {
	case dissect.AddrIPv6:
		w[mAddr2][k] = le64(keys[wordAddr2:])
		w[mAddr3][k] = le64(keys[wordAddr3:])
		w[mAddr4][k] = le64(keys[wordAddr4:])
		w[mAddr4+1][k] = uint64(regionIPv6) << 56
		l.n[k] = wordsIPv6
		src, dst := keys[dissect.OffIPv6Src:dissect.OffIPv6Src+16], keys[dissect.OffIPv6Dst:dissect.OffIPv6Dst+16]
		sh, dh := be64(src[:8]), be64(dst[:8])
		if dh < sh || dh == sh && be64(dst[8:]) < be64(src[8:]) {
			w0, w1, w2, w3, w4 := w[mICMP][k], w[mAddr1][k], w[mAddr2][k], w[mAddr3][k], w[mAddr4][k]
			w[mICMP][k] = w0&lo32 | w2&^lo32
			w[mAddr1][k] = w3
			w[mAddr2][k] = w4&lo32 | w0&^lo32
			w[mAddr3][k] = w1
			w[mAddr4][k] = w4&^lo32 | w2&lo32
		}
		sortPorts = true
	case dissect.AddrIPv4:
		w[mAddr2][k] = uint64(regionIPv4) << 56
		l.n[k] = wordsIPv4
		if w0, w1 := w[mICMP][k], w[mAddr1][k]; uint32(w1) < uint32(w0>>32) {
			w[mICMP][k] = w0&lo32 | w1<<32
			w[mAddr1][k] = w1&^lo32 | w0>>32
		}
		sortPorts = true
	case dissect.AddrTIPC:
		// 44 bytes: five words, then the TIPC key's 4 bytes.
		w[mAddr1][k] = uint64(uint32(w[mAddr1][k])) | uint64(regionTIPC)<<56
		l.n[k] = wordsNone
	default:
		w[mAddr1][k] = uint64(regionNone) << 56
		l.n[k] = wordsNone
	}
	if sortPorts && ports>>16 < ports&0xffff {
		p := w[mPorts][k]
		w[mPorts][k] = p&lo32 | p>>48<<32 | (p>>32&0xffff)<<48
	}
	return l4
}

// le64 is binary.LittleEndian.Uint64 as the byte expression it inlines to,
// without the inlined call's NOP (see be64).
func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// SipHash's initialisation constants ("somepseudorandomlygeneratedbytes").
const (
	sipInit0 = 0x736f6d6570736575
	sipInit1 = 0x646f72616e646f6d
	sipInit2 = 0x6c7967656e657261
	sipInit3 = 0x7465646279746573
)

// sum1 is SipHash-2-4 of lane k of l. The rounds are written out here and
// in sum2, not calls of a round function: each inlined call that is a
// statement leaves a NOP behind.
func (h Kernel) sum1(l *sipLanes, k int) uint64 {
	k &= 3
	a0, a1, a2, a3 := h.k0^sipInit0, h.k1^sipInit1, h.k0^sipInit2, h.k1^sipInit3
	for _, w := range l.w[:l.n[k]] {
		m := w[k]
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
	a2 ^= 0xff
	for range 2 {
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
	}
	return a0 ^ a1 ^ a2 ^ a3
}

// sum2 is SipHash-2-4 of lanes ka and kb of l, their rounds interleaved over
// the words both have; the longer region's remaining words run alone, and
// the finalisations interleave again.
func (h Kernel) sum2(l *sipLanes, ka, kb int) (uint64, uint64) {
	ka, kb = ka&3, kb&3
	a0, a1, a2, a3 := h.k0^sipInit0, h.k1^sipInit1, h.k0^sipInit2, h.k1^sipInit3
	b0, b1, b2, b3 := a0, a1, a2, a3
	na, nb := l.n[ka], l.n[kb]
	n := min(na, nb)
	for _, w := range l.w[:n] {
		ma, mb := w[ka], w[kb]
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
	for _, w := range l.w[n:na] {
		m := w[ka]
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
	for _, w := range l.w[n:nb] {
		m := w[kb]
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
