package fairness

import (
	"cmp"
	"math"
	"slices"
)

// SpaceSaving finds the heaviest keys of a weighted stream in the memory of k
// counters: the Space-Saving algorithm (Metwally, Agrawal and El Abbadi, 2005)
// weighted by bytes. A key that is counted is added to; a new key takes over
// the smallest counter and inherits its count as an error bound. Every key
// whose true weight exceeds total/k is guaranteed to hold a counter, and no
// counter underestimates its key.
//
// An open-addressing table over the caller's 32-bit key hash finds a key's
// counter without a map, and a tournament tree over the counts finds the
// smallest: each count is packed with its counter's index into one uint64,
// so that an update recomputes at most log2(k) minimums of plain words and
// stops at the first that does not change. (A min-heap, tried first, and a
// scan of the counts lost most of their time to mispredicted branches on
// flows of equal weight, where every packet may take over a counter.) Add
// allocates nothing; BenchmarkSpaceSavingAdd measures it.
type SpaceSaving[K comparable] struct {
	counters []ssCounter[K]
	bytes    []uint64 // bytes[c] is counter c's count
	tree     []uint64 // tree[1] is the root; leaf c is tree[leaves+c]: bytes<<idxBits | c
	leaves   int
	idxBits  uint
	table    []int32 // counter index + 1, 0 for an empty slot
	shift    uint    // 32 - log2(len(table))
	min      uint64  // Min's answer, kept by update
}

type ssCounter[K comparable] struct {
	key      K
	hash     uint32
	packets  uint64
	errBytes uint64
	errPkts  uint64
}

// Counter is one key's count in a [SpaceSaving] sketch.
type Counter[K comparable] struct {
	Key     K
	Hash    uint32 // the hash given with Key
	Bytes   uint64 // weight counted, including ErrorBytes
	Packets uint64 // additions counted, including ErrorPackets
	// ErrorBytes and ErrorPackets bound the overestimate: what the counter
	// held when Key took it over.
	ErrorBytes   uint64
	ErrorPackets uint64
}

// NewSpaceSaving returns an empty sketch of k counters (at least 1).
func NewSpaceSaving[K comparable](k int) *SpaceSaving[K] {
	k = max(k, 1)
	// A table at most a sixteenth full: a takeover removes a key, and
	// linear probing's deletion walks the rest of the key's cluster, which
	// at half full took most of the takeover's time
	// (BenchmarkSpaceSavingAdd/takeover). 4 KiB for 64 counters.
	bits := uint(4)
	for 1<<bits < 16*k {
		bits++
	}
	s := &SpaceSaving[K]{
		counters: make([]ssCounter[K], 0, k),
		bytes:    make([]uint64, 0, k),
		table:    make([]int32, 1<<bits),
		shift:    32 - bits,
		leaves:   1,
	}
	for s.leaves < k {
		s.leaves <<= 1
		s.idxBits++
	}
	s.tree = make([]uint64, 2*s.leaves)
	for i := range s.tree {
		s.tree[i] = math.MaxUint64 // free counters: never the minimum while others are
	}
	return s
}

// home is h's first table slot: the high bits of a multiplicative hash, so
// that flow hashes differing only in some bits still spread.
func (s *SpaceSaving[K]) home(h uint32) int { return int((h * 0x9e3779b1) >> s.shift) }

// Add counts packets packets of bytes bytes for key, whose hash is h.
func (s *SpaceSaving[K]) Add(key K, h uint32, bytes, packets uint64) {
	mask := len(s.table) - 1
	i := s.home(h)
	for s.table[i] != 0 {
		c := int(s.table[i] - 1)
		if ct := &s.counters[c]; ct.hash == h && ct.key == key {
			ct.packets += packets
			s.bytes[c] += bytes
			s.update(c)
			return
		}
		i = (i + 1) & mask
	}
	if len(s.counters) < cap(s.counters) {
		s.counters = append(s.counters, ssCounter[K]{key: key, hash: h, packets: packets})
		s.bytes = append(s.bytes, bytes)
		s.table[i] = int32(len(s.counters))
		s.update(len(s.counters) - 1)
		s.setMin() // the last free counter may just have gone
		return
	}
	// Take over the smallest counter.
	c := int(s.tree[1] & (1<<s.idxBits - 1))
	ct := &s.counters[c]
	s.remove(ct.hash, c)
	i = s.home(h)
	for s.table[i] != 0 {
		i = (i + 1) & mask
	}
	s.table[i] = int32(c + 1)
	ct.key, ct.hash = key, h
	ct.errBytes, ct.errPkts = s.bytes[c], ct.packets
	ct.packets += packets
	s.bytes[c] += bytes
	s.update(c)
}

// update replays the tournament from counter c's leaf towards the root, up
// to the first match whose result does not change: the matches above it are
// decided as before. The heavy keys, added to most often, hold the largest
// counts, so their updates stop after a level or two. A count too large to
// pack (2^(64-idxBits) bytes, petabytes) saturates: the smallest counter is
// still found while any count is below that.
func (s *SpaceSaving[K]) update(c int) {
	b := min(s.bytes[c], math.MaxUint64>>s.idxBits)
	i := s.leaves + c
	s.tree[i] = b<<s.idxBits | uint64(c)
	for i > 1 {
		i >>= 1
		m := min(s.tree[2*i], s.tree[2*i+1])
		if s.tree[i] == m {
			return
		}
		s.tree[i] = m
	}
	s.setMin() // the root changed
}

// setMin sets min from the tournament's root: 0 while a counter is free.
func (s *SpaceSaving[K]) setMin() {
	s.min = 0
	if len(s.bytes) == cap(s.bytes) {
		s.min = s.bytes[s.tree[1]&(1<<s.idxBits-1)]
	}
}

// Min is the smallest count, the most any key without a counter can weigh;
// 0 while a counter is free. A caller that knows a bound on a key's total
// weight (say, the bytes of the bucket the key hashes to) may skip Add
// while that bound is at most Min: the key could not hold a counter on its
// own, and when it is added later it inherits a Min no smaller than the
// weight skipped, so no counter ever underestimates and every key above
// total/k still holds one.
func (s *SpaceSaving[K]) Min() uint64 { return s.min }

// remove takes counter c, whose key hashes to h, out of the table, and
// shifts the slots after it back so that no probe sequence has a hole
// (linear probing's deletion without tombstones).
func (s *SpaceSaving[K]) remove(h uint32, c int) {
	mask := len(s.table) - 1
	i := s.home(h)
	for s.table[i] != int32(c+1) {
		i = (i + 1) & mask
	}
	s.table[i] = 0
	for j := (i + 1) & mask; s.table[j] != 0; j = (j + 1) & mask {
		home := s.home(s.counters[s.table[j]-1].hash)
		// The entry at j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			s.table[i], s.table[j] = s.table[j], 0
			i = j
		}
	}
}

// Top returns the counters, heaviest first (ties by fewer error bytes).
func (s *SpaceSaving[K]) Top() []Counter[K] {
	top := make([]Counter[K], 0, len(s.counters))
	for c := range s.counters {
		ct := &s.counters[c]
		top = append(top, Counter[K]{
			Key: ct.key, Hash: ct.hash, Bytes: s.bytes[c], Packets: ct.packets,
			ErrorBytes: ct.errBytes, ErrorPackets: ct.errPkts,
		})
	}
	slices.SortStableFunc(top, func(a, b Counter[K]) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.ErrorBytes, b.ErrorBytes))
	})
	return top
}
