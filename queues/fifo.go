package queues

import "github.com/xdphash/xdphash/runstats"

// DefaultFIFOLimit is pfifo's default limit: the device's txqueuelen, 1000
// packets on Ethernet.
const DefaultFIFOLimit = 1000

// FIFO is pfifo: one first-in first-out queue of at most Limit packets that
// drops arrivals when full ("overlimit", tail drop). It serves every flow in
// arrival order, the baseline the fair consumers are measured against.
type FIFO struct {
	buf      []Record // a ring of limit records
	head, n  int
	enqueued uint64
	dequeued uint64
	dropped  uint64
	drops    *DropLog // nil: dropped records are only counted
}

// NewFIFO returns an empty queue of limit packets (at least 1).
func NewFIFO(limit int) *FIFO {
	return &FIFO{buf: make([]Record, max(limit, 1))}
}

// Enqueue appends the records that fit and drops the rest. The records go
// in with at most two copies (the ring may wrap), not one at a time: a
// worker moves every packet through here.
func (q *FIFO) Enqueue(recs []Record, _ int64) {
	k := min(len(recs), len(q.buf)-q.n)
	t := q.head + q.n
	if t >= len(q.buf) {
		t -= len(q.buf)
	}
	c := copy(q.buf[t:], recs[:k])
	copy(q.buf, recs[c:k])
	q.n += k
	q.enqueued += uint64(k)
	if k < len(recs) {
		q.dropped += uint64(len(recs) - k)
		q.drops.addAll(recs[k:])
	}
}

// Dequeue serves records in arrival order while the budget lasts. A byte
// budget is spent down to zero: the last packet served may overdraw it. It
// counts the records the budget allows first, then appends them with at
// most two copies.
func (q *FIFO) Dequeue(_ int64, budget Budget, out []Record) []Record {
	k := q.n
	if budget.Packets > 0 {
		k = min(k, budget.Packets)
	}
	if budget.Bytes > 0 {
		bytes, i, j := budget.Bytes, 0, q.head
		for ; i < k && bytes > 0; i++ {
			bytes -= int64(q.buf[j].Len)
			if j++; j == len(q.buf) {
				j = 0
			}
		}
		k = i
	}
	first := q.buf[q.head:min(q.head+k, len(q.buf))]
	out = append(out, first...)
	out = append(out, q.buf[:k-len(first)]...)
	if q.head += k; q.head >= len(q.buf) {
		q.head -= len(q.buf)
	}
	q.n -= k
	q.dequeued += uint64(k)
	return out
}

// Backlog is the number of records queued.
func (q *FIFO) Backlog() int { return q.n }

// Stats returns the counters; the only drop reason is DropOverlimit.
func (q *FIFO) Stats() runstats.ConsumerStats {
	return runstats.ConsumerStats{
		Enqueued: q.enqueued,
		Dequeued: q.dequeued,
		Drops:    map[runstats.DropReason]uint64{runstats.DropOverlimit: q.dropped},
		Backlog:  q.n,
	}
}

// Report is the counters alone: a fifo tells no flows apart.
func (q *FIFO) Report() runstats.ConsumerReport {
	return runstats.ConsumerReport{ConsumerStats: q.Stats()}
}
