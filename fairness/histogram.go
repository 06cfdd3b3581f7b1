package fairness

import (
	"math"
	"math/bits"
)

// histSubBits is log2 of the sub-buckets per power of two: 8 sub-buckets keep
// a bucket within 12.5% of its lower bound, fine enough for latency
// percentiles, in 496 counters for the whole int64 range.
const histSubBits = 3

// histBuckets is the number of buckets: values below 2^histSubBits have one
// each, every power of two above has 2^histSubBits.
const histBuckets = (64 - histSubBits + 1) << histSubBits

// LogHistogram counts non-negative values (latencies in nanoseconds, queue
// depths) in log-scale buckets of fixed memory: values below 8 exactly, larger
// ones within 12.5%. The zero value is empty and ready to use.
type LogHistogram struct {
	counts [histBuckets]uint64
	n      uint64
	max    int64
}

// histBucket is the bucket of v >= 0: its power of two, then its next
// histSubBits bits.
func histBucket(v uint64) int {
	if v < 1<<histSubBits {
		return int(v)
	}
	e := bits.Len64(v) - 1 // v's highest bit, >= histSubBits
	sub := (v >> (e - histSubBits)) & (1<<histSubBits - 1)
	return (e-histSubBits+1)<<histSubBits | int(sub)
}

// histUpper is the largest value of bucket i.
func histUpper(i int) uint64 {
	if i < 1<<histSubBits {
		return uint64(i)
	}
	e := i>>histSubBits + histSubBits - 1
	sub := uint64(i & (1<<histSubBits - 1))
	lower := (1<<histSubBits | sub) << (e - histSubBits)
	return lower + 1<<(e-histSubBits) - 1
}

// Add counts v; negative values count as 0.
func (h *LogHistogram) Add(v int64) {
	v = max(v, 0)
	h.counts[histBucket(uint64(v))]++
	h.n++
	h.max = max(h.max, v)
}

// Count is the number of values added.
func (h *LogHistogram) Count() uint64 { return h.n }

// Max is the largest value added, exactly; 0 when empty.
func (h *LogHistogram) Max() int64 { return h.max }

// Quantile returns a value v such that a fraction of at least q of the values
// added are <= v: the upper bound of the bucket where the q-quantile falls,
// never more than Max. It is 0 when the histogram is empty.
func (h *LogHistogram) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := min(max(uint64(math.Ceil(q*float64(h.n))), 1), h.n) // values at or below the answer
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(int64(histUpper(i)), h.max)
		}
	}
	return h.max
}
