package hash

import "github.com/xdphash/xdphash/dissect"

// HashBatch sets hashes[i] and l4[i] to what [Kernel.Hash] returns for
// keys[i], for every i; hashes and l4 must be at least as long as keys. The
// keys stay as dissected.
//
// Where the CPU has AVX2, keys whose regions have the same length go four at
// a time through one vector SipHash-2-4 (sip4AVX2): one SipHash is a single
// chain of dependent adds, xors and rotates, and four lanes of a vector
// register carry four chains for the instructions of one. Without AVX2, and
// for the at most three keys of each length left over, it is Hash one key at
// a time: scalar rounds of two keys interleaved in Go cost more instructions
// than dchest/siphash's assembly and saved no time (docs/batch-hash.md).
func (h Kernel) HashBatch(keys []dissect.FlowKeys, hashes []uint32, l4 []bool) {
	hashes, l4 = hashes[:len(keys)], l4[:len(keys)]
	if !useAVX2 {
		for i := range keys {
			hashes[i], l4[i] = h.Hash(&keys[i])
		}
		return
	}
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
		sip4AVX2(h.k0, h.k1, &l.w, classWords[c], &out)
		for lane, k := range idx[c] {
			hashes[k] = fold(out[lane])
		}
	}
	for c := range lanes {
		for _, k := range idx[c][:used[c]] {
			hashes[k], l4[k] = h.Hash(&keys[k])
		}
	}
}

// Region lengths in SipHash words: the full 8-byte words and the last one
// with the tail bytes and the length. Keys without addresses (40 bytes) and
// TIPC keys (44) have the same number.
const (
	wordsNone  = regionNone/8 + 1
	wordsIPv4  = regionIPv4/8 + 1
	wordsIPv6  = regionIPv6/8 + 1
	numLengths = 3
)

// classWords is the region length of each lengthClass, in SipHash words.
var classWords = [numLengths]int{wordsNone, wordsIPv4, wordsIPv6}

// lengthClass is the class of keys' region length, so that the four keys of
// a vector hash share a length: 0 for no addresses or TIPC, 1 for IPv4, 2
// for IPv6.
func lengthClass(keys *dissect.FlowKeys) int {
	switch dissect.AddrType(uint16(keys[dissect.OffAddrType]) | uint16(keys[dissect.OffAddrType+1])<<8) {
	case dissect.AddrIPv4:
		return 1
	case dissect.AddrIPv6:
		return 2
	}
	return 0
}

// sipLanes holds up to four consistentified regions as SipHash reads them,
// one per lane: word j of lane k is w[j][k], so that a vector load takes word
// j of all four. A region is its 8-byte little-endian words, the last of which
// carries the region's tail bytes and its length in the top byte,
// classWords[c] words in all for the keys' lengthClass.
type sipLanes struct{ w [wordsIPv6][4]uint64 }

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
		if w0, w1 := w[mICMP][k], w[mAddr1][k]; uint32(w1) < uint32(w0>>32) {
			w[mICMP][k] = w0&lo32 | w1<<32
			w[mAddr1][k] = w1&^lo32 | w0>>32
		}
		sortPorts = true
	case dissect.AddrTIPC:
		// 44 bytes: five words, then the TIPC key's 4 bytes.
		w[mAddr1][k] = uint64(uint32(w[mAddr1][k])) | uint64(regionTIPC)<<56
	default:
		w[mAddr1][k] = uint64(regionNone) << 56
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
