//go:build !amd64

package hash

// useAVX2 is false off amd64: HashBatch hashes one key at a time.
var useAVX2 = false

// sip4AVX2 exists on amd64 only; off amd64 useAVX2 is false, so it is
// never called.
func sip4AVX2(k0, k1 uint64, w *[wordsIPv6][4]uint64, n int, out *[4]uint64) {
	panic("hash: sip4AVX2 called without AVX2")
}
