package hash

import (
	"golang.org/x/sys/cpu"

	"github.com/xdphash/xdphash/dissect"
)

// useAVX2 selects HashBatch's vector SipHash (GODEBUG=cpu.avx2=off turns it
// off). Tests turn it off to test the one-at-a-time path on machines that
// have AVX2.
var useAVX2 = cpu.X86.HasAVX2

// Offsets sip4AVX2 reads the keys at (go_asm.h names them const_…): a key's
// size in a slice of keys, and where its hashed region starts. Only the
// assembly uses them.
const (
	//lint:ignore U1000 used by kernel_batch_amd64.s
	keysSize = len(dissect.FlowKeys{})
	//lint:ignore U1000 used by kernel_batch_amd64.s
	regionStart = dissect.HashOffset
)

// sip4AVX2 sets hashes[idx[k]], for k 0..3, to what Kernel{k0, k1}.Hash
// returns for keys[idx[k]], four keys of one class (classNone, classIPv4 or
// classIPv6; idx[k] < len(keys)) in the four lanes of one vector
// SipHash-2-4. It orders each key's words as Consistentify would (for IPv4
// and IPv6: the addresses, then the ports on their own) as it loads them,
// leaving the keys as they are. An index may repeat. It needs AVX2.
//
//go:noescape
func sip4AVX2(k0, k1 uint64, keys *dissect.FlowKeys, idx *[4]int, class int, hashes *uint32)
