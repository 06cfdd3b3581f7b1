package queues

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// TestRingConcurrent runs a producer and a consumer on two goroutines, both
// moving records in batches of random sizes, through every API form: no
// record is lost, none is duplicated, and the order holds. Run it with -race.
func TestRingConcurrent(t *testing.T) {
	const n = 50000
	for _, capacity := range []int{1, 7, 64, 1000} {
		r := NewRing(capacity)
		var wg sync.WaitGroup
		var full uint64 // producer attempts that found the ring full
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(1, uint64(capacity)))
			batch := make([]Record, 0, 100)
			for seq := uint64(0); seq < n; {
				if rng.IntN(2) == 0 {
					// In place: Free, Slot, Commit.
					k := min(r.Free(), rng.IntN(100)+1, int(n-seq))
					if k == 0 {
						full++
						runtime.Gosched() // the consumer may share this processor
					}
					for i := range k {
						r.Slot(i).Arrival = int64(seq + uint64(i))
					}
					r.Commit(k)
					seq += uint64(k)
					continue
				}
				batch = batch[:0]
				for i := range min(rng.IntN(100)+1, int(n-seq)) {
					batch = append(batch, Record{Arrival: int64(seq + uint64(i))})
				}
				k := r.push(batch)
				if k < len(batch) {
					full++
					runtime.Gosched()
				}
				seq += uint64(k)
			}
		})
		var got []Record
		for next := int64(0); next < n; {
			if next%3 == 0 {
				got = r.pop(got[:0])
			} else {
				a, b := r.Peek()
				got = append(append(got[:0], a...), b...)
				r.Release(len(a) + len(b))
			}
			if len(got) == 0 {
				runtime.Gosched() // the producer may share this processor
			}
			for _, rec := range got {
				if rec.Arrival != next {
					t.Fatalf("capacity %d: record %d, want %d", capacity, rec.Arrival, next)
				}
				next++
			}
		}
		wg.Wait()
		if l := r.Len(); l != 0 {
			t.Errorf("capacity %d: %d records left", capacity, l)
		}
		t.Logf("capacity %d: the producer found the ring full %d times", capacity, full)
	}
}

// TestRingFull fills a ring whose capacity is not a power of two and checks
// what it takes and how it wraps.
func TestRingFull(t *testing.T) {
	r := NewRing(5) // 8 slots
	recs := make([]Record, 7)
	for i := range recs {
		recs[i].Arrival = int64(i)
	}
	if n := r.push(recs); n != 5 {
		t.Fatalf("push 7 into a ring of 5 took %d", n)
	}
	if r.Free() != 0 || r.Len() != 5 || r.Cap() != 5 {
		t.Fatalf("free %d len %d cap %d, want 0 5 5", r.Free(), r.Len(), r.Cap())
	}
	got := r.pop(nil)
	if len(got) != 5 || got[4].Arrival != 4 {
		t.Fatalf("popped %v", got)
	}
	// Slots 5..7 then 0..1: the records wrap.
	if n := r.push(recs); n != 5 {
		t.Fatalf("second push took %d", n)
	}
	a, b := r.Peek()
	if len(a) != 3 || len(b) != 2 || a[0].Arrival != 0 || b[1].Arrival != 4 {
		t.Errorf("peek of wrapped records: %d + %d", len(a), len(b))
	}
	r.Release(1)
	if a, b = r.Peek(); len(a) != 2 || a[0].Arrival != 1 || len(b) != 2 {
		t.Errorf("after releasing one: %d + %d", len(a), len(b))
	}
}

// TestRingLayout checks that the indices the two sides write lie on cache
// lines of their own.
func TestRingLayout(t *testing.T) {
	var r Ring
	head, tail, buf := unsafe.Offsetof(r.head), unsafe.Offsetof(r.tail), unsafe.Offsetof(r.buf)
	if head/cacheLine == tail/cacheLine || tail/cacheLine == buf/cacheLine || head%cacheLine != 0 || tail%cacheLine != 0 {
		t.Errorf("head at %d, tail at %d, buf at %d: want each on a line of its own", head, tail, buf)
	}
	if unsafe.Sizeof(r)%cacheLine != 0 {
		t.Errorf("Ring is %d bytes, not a multiple of %d", unsafe.Sizeof(r), cacheLine)
	}
}
