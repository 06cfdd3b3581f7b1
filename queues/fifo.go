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

// Enqueue appends the records that fit and drops the rest.
func (q *FIFO) Enqueue(recs []Record, _ int64) {
	for i := range recs {
		if q.n == len(q.buf) {
			q.dropped += uint64(len(recs) - i)
			q.drops.addAll(recs[i:])
			return
		}
		t := q.head + q.n
		if t >= len(q.buf) {
			t -= len(q.buf)
		}
		q.buf[t] = recs[i]
		q.n++
		q.enqueued++
	}
}

// Dequeue serves records in arrival order while the budget lasts. A byte
// budget is spent down to zero: the last packet served may overdraw it.
func (q *FIFO) Dequeue(_ int64, budget Budget, out []Record) []Record {
	bytes := budget.Bytes
	for served := 0; q.n > 0; served++ {
		if budget.Packets > 0 && served >= budget.Packets {
			break
		}
		if budget.Bytes > 0 && bytes <= 0 {
			break
		}
		r := &q.buf[q.head]
		bytes -= int64(r.Len)
		out = append(out, *r)
		q.head++
		if q.head == len(q.buf) {
			q.head = 0
		}
		q.n--
		q.dequeued++
	}
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
