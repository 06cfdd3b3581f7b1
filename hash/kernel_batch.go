package hash

import "github.com/xdphash/xdphash/dissect"

// HashBatch sets hashes[i] and l4[i] to what [Kernel.Hash] returns for
// keys[i], for every i; hashes and l4 must be at least as long as keys. The
// keys stay as dissected.
//
// Where the CPU has AVX2, keys whose regions have the same length go four at
// a time through one vector SipHash-2-4 (sip4AVX2): one SipHash is a single
// chain of dependent adds, xors and rotates, and four lanes of a vector
// register carry four chains for the instructions of one. The vector code
// also loads the four keys' words, orders them as Consistentify would and
// folds the results, so that this loop only sorts the keys by region length.
// The two or three keys of a length left at the end of a batch fill the
// lanes with repeats of one of them; a single one, and TIPC keys (rare, and a
// region whose last word differs), take Hash. Without AVX2 it is Hash one key
// at a time: scalar rounds of two keys interleaved in Go cost more
// instructions than dchest/siphash's assembly and saved no time
// (docs/batch-hash.md).
func (h Kernel) HashBatch(keys []dissect.FlowKeys, hashes []uint32, l4 []bool) {
	hashes, l4 = hashes[:len(keys)], l4[:len(keys)]
	if !useAVX2 || len(keys) == 0 {
		for i := range keys {
			hashes[i], l4[i] = h.Hash(&keys[i])
		}
		return
	}
	var (
		idx  [numClasses][4]int // the keys of the lanes to come
		used [numClasses]int
	)
	for i := range keys {
		k := &keys[i]
		l4[i] = le32(k[dissect.OffPorts:])|le32(k[dissect.OffFlowLabel:]) != 0
		c := lengthClass(k)
		if c == classTIPC {
			hashes[i], _ = h.Hash(k)
			continue
		}
		n := used[c] & 3
		idx[c][n] = i
		if n < 3 {
			used[c] = n + 1
			continue
		}
		used[c] = 0
		sip4AVX2(h.k0, h.k1, &keys[0], &idx[c], c, &hashes[0])
	}
	for c := range idx {
		switch n := used[c]; n {
		case 0:
		case 1:
			k := idx[c][0]
			hashes[k], _ = h.Hash(&keys[k])
		default:
			for lane := n; lane < 4; lane++ {
				idx[c][lane] = idx[c][0]
			}
			sip4AVX2(h.k0, h.k1, &keys[0], &idx[c], c, &hashes[0])
		}
	}
}

// Classes of keys by region length, the class argument of sip4AVX2: keys
// of one class hash regions of one length, whose last SipHash word (no tail
// bytes, the length in the top byte) is the same. TIPC keys (44 bytes) are
// a class of their own that HashBatch hashes one at a time.
const (
	classNone = iota // no addresses: 40 bytes
	classIPv4        // 48 bytes
	classIPv6        // 72 bytes
	classTIPC
	numClasses = classTIPC // the classes sip4AVX2 hashes
)

// lengthClass is the class of keys' region length.
func lengthClass(keys *dissect.FlowKeys) int {
	switch dissect.AddrType(uint16(keys[dissect.OffAddrType]) | uint16(keys[dissect.OffAddrType+1])<<8) {
	case dissect.AddrIPv4:
		return classIPv4
	case dissect.AddrIPv6:
		return classIPv6
	case dissect.AddrTIPC:
		return classTIPC
	}
	return classNone
}

// le32 is binary.LittleEndian.Uint32 as the byte expression it inlines to,
// without the inlined call's NOP (see be64).
func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
