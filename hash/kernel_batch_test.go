package hash

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dchest/siphash"

	"github.com/xdphash/xdphash/dissect"
)

// batchAddrTypes are the address types the batch tests mix: mostly the sorted
// ones, and the others whose regions are 40 and 44 bytes.
var batchAddrTypes = []dissect.AddrType{dissect.AddrIPv4, dissect.AddrIPv6, dissect.AddrIPv4, dissect.AddrIPv6,
	dissect.AddrNone, dissect.AddrTIPC, 7, 0xffff}

// hasAVX2 is whether this machine runs HashBatch's AVX2 path.
var hasAVX2 = useAVX2

// batchPaths are the HashBatch paths this machine can run: one key at a
// time, and the AVX2 one where the CPU has AVX2 (useAVX2's values).
func batchPaths() []bool {
	if hasAVX2 {
		return []bool{false, true}
	}
	return []bool{false}
}

// checkBatch fails unless HashBatch, on each of its paths, gives for every
// key what Hash gives and what dchest/siphash gives over the consistentified
// region, and leaves the keys as they were.
func checkBatch(t *testing.T, h Kernel, keys []dissect.FlowKeys) {
	t.Helper()
	defer func() { useAVX2 = hasAVX2 }()
	for _, avx := range batchPaths() {
		useAVX2 = avx
		checkBatchPath(t, h, keys)
	}
}

func checkBatchPath(t *testing.T, h Kernel, keys []dissect.FlowKeys) {
	t.Helper()
	before := append([]dissect.FlowKeys(nil), keys...)
	hashes, l4 := make([]uint32, len(keys)+1), make([]bool, len(keys)+1)
	hashes[len(keys)], l4[len(keys)] = 0xdeadbeef, true
	h.HashBatch(keys, hashes, l4)
	for i := range keys {
		k := &before[i]
		want, wantL4 := h.Hash(k)
		sorted := *k
		Consistentify(&sorted)
		if ref := fold(siphash.Hash(h.k0, h.k1, Region(&sorted))); ref != want {
			t.Fatalf("Hash(% x) = %#08x, dchest/siphash gives %#08x", k[:], want, ref)
		}
		if hashes[i] != want || l4[i] != wantL4 {
			t.Fatalf("HashBatch (AVX2 %v) of %d keys, key %d (%v, % x) = %#08x, %v; Hash gives %#08x, %v",
				useAVX2, len(keys), i, k.AddrType(), k[:], hashes[i], l4[i], want, wantL4)
		}
		if keys[i] != *k {
			t.Fatalf("HashBatch modified key %d", i)
		}
	}
	if hashes[len(keys)] != 0xdeadbeef || !l4[len(keys)] {
		t.Fatalf("HashBatch of %d keys wrote past them", len(keys))
	}
}

// TestHashBatchMatchesHash: every batch length up to 13 (so that one, two
// and three keys of a length are left over from the vector hash's fours),
// over random keys of mixed address types in both directions, with equal
// addresses, equal ports and equal IPv6 high halves among them.
func TestHashBatchMatchesHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := NewKernel(RandomKey())
	for n := range 14 {
		for range 300 {
			keys := make([]dissect.FlowKeys, n)
			for i := range keys {
				k := randomKeys(rng, batchAddrTypes[rng.IntN(len(batchAddrTypes))])
				switch rng.IntN(6) {
				case 0: // IPv6 addresses equal: only the ports decide
					copy(k[dissect.OffAddrs+16:dissect.OffAddrs+32], k[dissect.OffAddrs:dissect.OffAddrs+16])
				case 1: // IPv6 addresses equal in their first 8 bytes
					copy(k[dissect.OffIPv6Dst:dissect.OffIPv6Dst+8], k[dissect.OffIPv6Src:dissect.OffIPv6Src+8])
				case 2:
					k = reverse(k)
				case 3: // IPv4 addresses equal, and the ports
					copy(k[dissect.OffIPv4Dst:dissect.OffIPv4Dst+4], k[dissect.OffIPv4Src:dissect.OffIPv4Src+4])
					copy(k[dissect.OffPorts+2:dissect.OffPorts+4], k[dissect.OffPorts:dissect.OffPorts+2])
				}
				if rng.IntN(4) == 0 { // no ports and no label: l4 false
					binary.LittleEndian.PutUint32(k[dissect.OffPorts:], 0)
					binary.LittleEndian.PutUint32(k[dissect.OffFlowLabel:], 0)
				}
				keys[i] = *k
			}
			checkBatch(t, h, keys)
		}
	}
}

// TestHashBatchGolden: the batch gives the kernel-derived hashes of
// TestKernelHashGolden's worked examples, in one batch, both directions.
func TestHashBatchGolden(t *testing.T) {
	h := NewKernel(kunitKey)
	fwd := flow{addrType: dissect.AddrIPv4, nProto: 0x0800, ipProto: 6, src: "192.168.1.10", dst: "10.0.0.1", ports: "30 39 00 50"}.keys(t)
	six := flow{addrType: dissect.AddrIPv6, nProto: 0x86dd, ipProto: 6, src: "ff02::fb", dst: "fe80::1", ports: "01 bb c3 50", label: 5}.keys(t)
	tipc := flow{addrType: dissect.AddrTIPC, ports: "00 50 30 39", addrs: "01 02 03 04"}.keys(t)
	keys := []dissect.FlowKeys{*fwd, *six, *reverse(fwd), *tipc, *reverse(six)}
	checkBatch(t, h, keys)
	hashes, l4 := make([]uint32, len(keys)), make([]bool, len(keys))
	h.HashBatch(keys, hashes, l4)
	if hashes[0] != hashes[2] || hashes[1] != hashes[4] {
		t.Errorf("HashBatch: the two directions differ: %#08x", hashes)
	}
}

// FuzzHashBatch compares HashBatch with Hash on batches of arbitrary keys:
// the input is cut into 80-byte keys (a short last one zero-filled), each
// given an address type from its control byte, so one batch mixes IPv4,
// IPv6 and other regions and has any length, odd ones included.
func FuzzHashBatch(f *testing.F) {
	v4 := flow{addrType: dissect.AddrIPv4, src: "192.168.1.10", dst: "10.0.0.1", ports: "30 39 00 50"}.keys(f)
	v6 := flow{addrType: dissect.AddrIPv6, src: "ff02::fb", dst: "fe80::1", ports: "01 bb c3 50", label: 5}.keys(f)
	v4[dissect.OffAddrType], v6[dissect.OffAddrType] = 0, 1
	f.Add(append(v4[:], v6[:]...))
	f.Add(append(append(v6[:], v4[:]...), v6[:]...))
	f.Add(v4[:])
	f.Add([]byte{})
	h := NewKernel(kunitKey)
	f.Fuzz(func(t *testing.T, data []byte) {
		const maxKeys = 64
		var keys []dissect.FlowKeys
		for len(data) > 0 && len(keys) < maxKeys {
			var k dissect.FlowKeys
			data = data[copy(k[:], data):]
			at := batchAddrTypes[k[dissect.OffAddrType]%uint8(len(batchAddrTypes))]
			binary.LittleEndian.PutUint16(k[dissect.OffAddrType:], uint16(at))
			keys = append(keys, k)
		}
		checkBatch(t, h, keys)
	})
}

func TestHashBatchAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	h := NewKernel(RandomKey())
	keys := make([]dissect.FlowKeys, 63)
	for i := range keys {
		keys[i] = *randomKeys(rng, batchAddrTypes[i%len(batchAddrTypes)])
	}
	hashes, l4 := make([]uint32, len(keys)), make([]bool, len(keys))
	defer func() { useAVX2 = hasAVX2 }()
	for _, avx := range batchPaths() {
		useAVX2 = avx
		if n := testing.AllocsPerRun(100, func() { h.HashBatch(keys, hashes, l4) }); n != 0 {
			t.Errorf("HashBatch (AVX2 %v) allocates %v times per batch", avx, n)
		}
	}
}

// TestHashBatchPaths says which paths the batch tests covered: a CI machine
// without AVX2 tests the scalar path only.
func TestHashBatchPaths(t *testing.T) {
	if !hasAVX2 {
		t.Log("this CPU has no AVX2 (or this is not amd64): HashBatch's one-at-a-time path only")
	}
}

// BenchmarkHashBatch times a batch of 64 keys of one address type in the
// reverse direction (every key swapped), per key, batch and one at a time.
func BenchmarkHashBatch(b *testing.B) {
	for _, fl := range []flow{
		{addrType: dissect.AddrIPv4, nProto: 0x0800, ipProto: 6, src: "192.168.1.10", dst: "10.0.0.1", ports: "00 50 30 39"},
		{addrType: dissect.AddrIPv6, nProto: 0x86dd, ipProto: 6, src: "ff02::fb", dst: "fe80::1", ports: "00 50 30 39"},
	} {
		h := NewKernel(RandomKey())
		keys := make([]dissect.FlowKeys, 64)
		for i := range keys {
			keys[i] = *fl.keys(b)
			keys[i][dissect.OffPorts] = byte(i) // distinct flows
		}
		hashes, l4 := make([]uint32, len(keys)), make([]bool, len(keys))
		for _, avx := range batchPaths() {
			b.Run(fmt.Sprintf("%v/batch-avx2=%v", fl.addrType, avx), func(b *testing.B) {
				defer func() { useAVX2 = hasAVX2 }()
				useAVX2 = avx
				b.ReportAllocs()
				for b.Loop() {
					h.HashBatch(keys, hashes, l4)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
			})
		}
		b.Run(fmt.Sprintf("%v/single", fl.addrType), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range keys {
					hashes[i], l4[i] = h.Hash(&keys[i])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
		})
	}
}

// TestSteeringHashBatch: a Steering's batch gives its one-at-a-time hashes
// for every hash kind, the kernel's and the NIC's Toeplitz alike.
func TestSteeringHashBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys := make([]dissect.FlowKeys, 33)
	for i := range keys {
		keys[i] = *randomKeys(rng, batchAddrTypes[i%len(batchAddrTypes)])
		keys[i][dissect.OffIPProto] = []byte{6, 17, 1}[i%3]
	}
	for _, kind := range []Kind{KindKernel, KindToeplitz, KindAuto, KindDevice} {
		s, err := NewSteering(SteerConfig{Workers: 4, Hash: kind, Key: RandomKey()})
		if err != nil {
			t.Fatal(err)
		}
		hashes, l4 := make([]uint32, len(keys)), make([]bool, len(keys))
		s.HashBatch(keys, hashes, l4)
		for i := range keys {
			if h, l := s.Hash(&keys[i]); hashes[i] != h || l4[i] != l {
				t.Errorf("%v: HashBatch key %d = %#08x, %v; Hash gives %#08x, %v", kind, i, hashes[i], l4[i], h, l)
			}
		}
		if n := testing.AllocsPerRun(100, func() { s.HashBatch(keys, hashes, l4) }); n != 0 {
			t.Errorf("%v: HashBatch allocates %v times per batch", kind, n)
		}
	}
}
