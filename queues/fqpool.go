package queues

import "github.com/xdphash/xdphash/runstats"

// The storage the fair consumers (fq, fq_codel) share: a pool of queued
// packets with per-flow FIFOs threaded through it, and lists of flows. Both
// are index-linked slices rather than pointers or container/list, so that
// queueing a packet moves a 64-byte Record once and allocates nothing.

// nilIndex ends a packet FIFO or a flow list.
const nilIndex = -1

// pktPool holds the packets a consumer has queued: each slot's record, its
// enqueue time and the next slot of its FIFO. It grows by doubling only when
// more packets are queued than ever before, so a consumer in steady state
// allocates nothing.
type pktPool struct {
	recs []Record
	enq  []int64 // enqueue time, ns on the run's clock
	next []int32 // next slot of the same FIFO, or of the free list
	free int32
}

// newPktPool returns a pool with room for n packets before it first grows.
func newPktPool(n int) pktPool {
	p := pktPool{free: nilIndex}
	p.grow(n)
	return p
}

func (p *pktPool) grow(n int) {
	old := len(p.recs)
	p.recs = append(p.recs, make([]Record, n)...)
	p.enq = append(p.enq, make([]int64, n)...)
	p.next = append(p.next, make([]int32, n)...)
	for i := len(p.recs) - 1; i >= old; i-- {
		p.next[i] = p.free
		p.free = int32(i)
	}
}

// put stores rec, enqueued at now, in a free slot and returns the slot.
func (p *pktPool) put(rec *Record, now int64) int32 {
	if p.free == nilIndex {
		p.grow(max(len(p.recs), 64))
	}
	i := p.free
	p.free = p.next[i]
	p.recs[i] = *rec
	p.enq[i] = now
	return i
}

// release returns slot i to the free list.
func (p *pktPool) release(i int32) {
	p.next[i] = p.free
	p.free = i
}

// serve hands the packet in slot i, of bucket, to out at now: the
// fairness accounting counts it, out gets a copy, the slot is freed. It
// returns out and the packet's length.
func (p *pktPool) serve(i int32, bucket uint32, now int64, fs *FlowStats, out []Record) ([]Record, int64) {
	r := &p.recs[i]
	fs.Served(r, bucket, now-p.enq[i])
	out = append(out, *r)
	p.release(i)
	return out, int64(r.Len)
}

// pktFIFO is one flow's packets, oldest first, linked through a pktPool.
type pktFIFO struct{ head, tail int32 }

var emptyFIFO = pktFIFO{head: nilIndex, tail: nilIndex}

func (q *pktFIFO) push(p *pktPool, i int32) {
	p.next[i] = nilIndex
	if q.head == nilIndex {
		q.head = i
	} else {
		p.next[q.tail] = i
	}
	q.tail = i
}

// pop unlinks and returns the oldest packet's slot, or nilIndex; the caller
// releases the slot once done with the record.
func (q *pktFIFO) pop(p *pktPool) int32 {
	i := q.head
	if i != nilIndex {
		q.head = p.next[i]
	}
	return i
}

// flowList is a list of flows (the kernel's new_flows, old_flows), linked
// through the consumer's per-flow next indices. The fair consumers only ever
// take the first flow and append at the tail.
type flowList struct{ head, tail int32 }

var emptyFlowList = flowList{head: nilIndex, tail: nilIndex}

func (l *flowList) empty() bool { return l.head == nilIndex }

func (l *flowList) push(next []int32, f int32) {
	next[f] = nilIndex
	if l.head == nilIndex {
		l.head = f
	} else {
		next[l.tail] = f
	}
	l.tail = f
}

// pop unlinks the first flow; the list must not be empty.
func (l *flowList) pop(next []int32) int32 {
	f := l.head
	l.head = next[f]
	return f
}

// fairReport is the ConsumerReport of a fair consumer: its counters, its
// flows' fairness and its sojourn times.
func fairReport(st runstats.ConsumerStats, fs *FlowStats, maxBacklog int) runstats.ConsumerReport {
	return runstats.ConsumerReport{ConsumerStats: st, Flows: fs.Report(), SojournNs: fs.SojournNs(), MaxBacklog: maxBacklog}
}

// underBudget reports whether a Dequeue that has served pkts packets and
// bytes bytes may serve another. A byte budget is spent down to zero: the
// last packet may overdraw it, as in the fifo.
func underBudget(b Budget, pkts int, bytes int64) bool {
	return (b.Packets <= 0 || pkts < b.Packets) && (b.Bytes <= 0 || bytes < b.Bytes)
}
