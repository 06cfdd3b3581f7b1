package queues

import "sync/atomic"

// cacheLine is the cache line size of x86-64 and of most arm64 cores: the
// unit of false sharing the ring's layout avoids.
const cacheLine = 64

// Ring is a bounded single-producer/single-consumer queue of Records: the
// backlog between one receive loop and one worker, the per-CPU
// input_pkt_queue of RPS (enqueue_to_backlog) cut into one queue per producer
// so that no two goroutines ever write the same memory.
//
// Records move in batches with one atomic store per batch on each side. The
// producer writes records straight into their slots (Slot) and publishes them
// with Commit; the consumer reads them in place (Peek) and gives the slots back
// with Release. Head and tail are free-running 64-bit counters that never
// wrap in practice (at 10^9 records a second, after 584 years).
//
// Each side keeps the index it publishes on a cache line of its own, next to
// its cached copy of the other side's index, so that a producer and consumer
// on two cores touch the other's line only when their cached copy runs out
// (the layout of rigtorp's SPSCQueue, and of the kernel's ptr_ring).
type Ring struct {
	_ [cacheLine]byte // keeps head off the line of whatever precedes the ring
	// The producer's line.
	head      atomic.Uint64 // next slot to write; stored by the producer only
	headOwn   uint64        // the producer's copy of head, read without an atomic load
	tailCache uint64        // the producer's last view of tail
	_         [cacheLine - 24]byte
	// The consumer's line.
	tail      atomic.Uint64 // next slot to read; stored by the consumer only
	headCache uint64        // the consumer's last view of head
	_         [cacheLine - 16]byte
	// Read-only after NewRing.
	buf  []Record
	mask uint64
	size uint64 // capacity: at most size records are in the ring
	_    [cacheLine - 40]byte
}

// NewRing returns a ring holding at most capacity records (at least 1). The
// capacity need not be a power of two: the slots are, and the capacity only
// bounds how far the producer may run ahead, so a ring can model a
// netdev_max_backlog of 1000 exactly.
func NewRing(capacity int) *Ring {
	capacity = max(capacity, 1)
	n := 1
	for n < capacity {
		n <<= 1
	}
	return &Ring{buf: make([]Record, n), mask: uint64(n - 1), size: uint64(capacity)}
}

// Cap is the most records the ring holds.
func (r *Ring) Cap() int { return int(r.size) }

// Len is the number of records in the ring. From a goroutine other than the
// producer and the consumer it is a snapshot that may be stale at once.
func (r *Ring) Len() int {
	// tail first: head only grows, so the difference is never negative.
	t := r.tail.Load()
	return int(r.head.Load() - t)
}

// Free is, for the producer, how many records it may write now: the slots
// Slot(0) to Slot(Free()-1). It reloads the consumer's index, so call it once
// per batch, not per record.
func (r *Ring) Free() int {
	r.tailCache = r.tail.Load()
	return int(r.size - (r.headOwn - r.tailCache))
}

// Slot is, for the producer, the i-th slot after the last committed record,
// to be filled in place. i must be below the last Free.
func (r *Ring) Slot(i int) *Record {
	return &r.buf[(r.headOwn+uint64(i))&r.mask]
}

// Commit publishes the next n slots, filled through Slot, to the consumer.
func (r *Ring) Commit(n int) {
	if n > 0 {
		r.headOwn += uint64(n)
		r.head.Store(r.headOwn)
	}
}

// push copies as many of recs as fit into the ring, commits them, and returns
// how many it took. It is the producer's convenience form of Free, Slot and
// Commit.
func (r *Ring) push(recs []Record) int {
	n := min(len(recs), r.Free())
	for i := range n {
		*r.Slot(i) = recs[i]
	}
	r.Commit(n)
	return n
}

// Peek is, for the consumer, the records in the ring, oldest first, as at most
// two runs of slots (the second when the records wrap around the end of the
// slots). They stay valid, and in the ring, until Release.
func (r *Ring) Peek() (first, second []Record) {
	r.headCache = r.head.Load()
	t := r.tail.Load()
	n := r.headCache - t
	if n == 0 {
		return nil, nil
	}
	start := t & r.mask
	end := start + n
	if end <= uint64(len(r.buf)) {
		return r.buf[start:end], nil
	}
	return r.buf[start:], r.buf[:end-uint64(len(r.buf))]
}

// Release gives the n oldest records' slots back to the producer.
func (r *Ring) Release(n int) {
	if n > 0 {
		r.tail.Store(r.tail.Load() + uint64(n))
	}
}

// pop appends the records in the ring to out, oldest first, and releases
// them: the consumer's convenience form of Peek and Release.
func (r *Ring) pop(out []Record) []Record {
	a, b := r.Peek()
	out = append(append(out, a...), b...)
	r.Release(len(a) + len(b))
	return out
}
