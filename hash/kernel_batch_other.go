//go:build !amd64

package hash

import "github.com/xdphash/xdphash/dissect"

// useAVX2 is false off amd64: HashBatch hashes one key at a time.
var useAVX2 = false

// sip4AVX2 exists on amd64 only; off amd64 useAVX2 is false, so it is
// never called.
func sip4AVX2(k0, k1 uint64, keys *dissect.FlowKeys, idx *[4]int, class int, hashes *uint32) {
	panic("hash: sip4AVX2 called without AVX2")
}
