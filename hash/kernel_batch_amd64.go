package hash

import "golang.org/x/sys/cpu"

// useAVX2 selects HashBatch's vector SipHash (GODEBUG=cpu.avx2=off turns it
// off). Tests turn it off to test the one-at-a-time path on machines that
// have AVX2.
var useAVX2 = cpu.X86.HasAVX2

// sip4AVX2 is SipHash-2-4 keyed k0, k1 of four regions of n words each
// (n >= 1, at most len(w)), word j of region k in w[j][k]: out[k] is the
// hash of region k. It needs AVX2.
//
//go:noescape
func sip4AVX2(k0, k1 uint64, w *[wordsIPv6][4]uint64, n int, out *[4]uint64)
