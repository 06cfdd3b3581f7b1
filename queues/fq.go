package queues

import "github.com/xdphash/xdphash/runstats"

// fqInternalMax is how many packets fq's fast-path FIFO may hold before
// fq_fastpath_check refuses it ("we want Fair Queue mode under pressure").
const fqInternalMax = 8

// FQ is sch_fq (net/sched/sch_fq.c, 6.7 and later) for forwarded traffic on
// one CPU: packets have no socket, so fq treats them as orphans and keys their
// flow by the low bits of the hash (hash & orphan_mask). Each flow has a FIFO
// of at most FlowLimit packets and a byte credit; flows take turns by deficit
// round robin, flows that were detached (new) ahead of the others, a new flow
// starting with the initial quantum and a flow back after the refill delay
// with at least one quantum. When the qdisc holds nothing a flow could send
// (no flow has packets) and its fast-path FIFO fewer than 8, a packet skips
// the flows through that FIFO, which is served first.
//
// Differences from the kernel: no pacing (no socket rates, no maxrate, no
// horizon, no throttled flows), one band (forwarded packets have priority 0,
// and with a single busy band the band round robin changes nothing), no flow
// garbage collection (the kernel frees a flow idle for 3 s only when a lookup
// of another key walks past it, and a freed flow comes back with the initial
// quantum), and the refill delay is measured in ns rather than jiffies.
type FQ struct {
	p        fqParams
	pool     pktPool
	flows    []fqFlow
	flowNext []int32
	newFlows flowList
	oldFlows flowList
	internal pktFIFO // q->internal, the fast-path FIFO

	qlen        int // sch->q.qlen, the fast-path FIFO included
	internalLen int
	bandPkts    int // band_pkt_count of the one band: packets in flows
	known       int // q->flows: flows allocated (never freed here)
	inactive    int // q->inactive_flows: allocated flows with no packet queued
	maxBacklog  int
	enqueued    uint64
	dequeued    uint64
	dropLimit   uint64
	drops       *DropLog // nil: dropped records are only counted
	dropFlowLim uint64
	fastPath    uint64
	flowStats   *FlowStats
}

type fqFlow struct {
	q         pktFIFO
	qlen      int32
	credit    int32
	allocated bool  // the kernel has a struct fq_flow for this key
	state     uint8 // fqDetached, fqNew, fqOld
	age       int64 // when it was detached, ns
}

// Where an fq flow is: on no list (detached), new_flows or old_flows.
const (
	fqDetached = iota
	fqNew
	fqOld
)

// newFQFrom returns an empty fq configured by cfg.
func newFQFrom(cfg ConsumerConfig) (*FQ, error) {
	p, err := cfg.fq()
	if err != nil {
		return nil, err
	}
	return newFQ(p), nil
}

func newFQ(p fqParams) *FQ {
	n := int(p.orphanMask) + 1
	q := &FQ{
		p:         p,
		pool:      newPktPool(min(p.limit+fqInternalMax, 4096)),
		flows:     make([]fqFlow, n),
		flowNext:  make([]int32, n),
		newFlows:  emptyFlowList,
		oldFlows:  emptyFlowList,
		internal:  emptyFIFO,
		flowStats: NewFlowStats(n, p.topFlows),
	}
	for i := range q.flows {
		q.flows[i].q = emptyFIFO
	}
	return q
}

// Enqueue is fq_enqueue for each record: the band limit, the orphan flow
// key, the fast path, the flow limit, and a detached flow's return to
// new_flows.
func (q *FQ) Enqueue(recs []Record, now int64) {
	for i := range recs {
		r := &recs[i]
		if q.p.stampArrival {
			now = r.Arrival
		}
		key := r.Hash & q.p.orphanMask
		if q.bandPkts >= q.p.limit {
			q.dropLimit++
			q.drops.add(r)
			continue
		}
		// fq_fastpath_check, without pacing: nothing is in the future.
		if q.qlen == 0 || (q.known == q.inactive && q.internalLen < fqInternalMax) {
			q.internal.push(&q.pool, q.pool.put(r, now))
			q.internalLen++
			q.fastPath++
			q.admitted()
			continue
		}
		f := &q.flows[key]
		if !f.allocated {
			// fq_classify: a new flow, detached, with the initial quantum.
			f.allocated, f.credit, f.state, f.age = true, q.p.initialQuantum, fqDetached, now
			q.known++
			q.inactive++
		}
		if int(f.qlen) >= q.p.flowLimit {
			q.dropFlowLim++
			q.drops.add(r)
			continue
		}
		if f.state == fqDetached {
			q.newFlows.push(q.flowNext, int32(key))
			f.state = fqNew
			if now > f.age+q.p.refillDelay {
				f.credit = max(f.credit, q.p.quantum)
			}
		}
		q.bandPkts++
		if f.qlen == 0 {
			q.inactive--
		}
		f.qlen++
		f.q.push(&q.pool, q.pool.put(r, now))
		q.admitted()
	}
}

// admitted counts a packet queued.
func (q *FQ) admitted() {
	q.qlen++
	q.enqueued++
	q.maxBacklog = max(q.maxBacklog, q.qlen)
}

// Dequeue serves packets as fq_dequeue does while the budget lasts.
func (q *FQ) Dequeue(now int64, budget Budget, out []Record) []Record {
	var pkts int
	var bytes int64
	for underBudget(budget, pkts, bytes) {
		p, key := q.dequeue(now)
		if p == nilIndex {
			break
		}
		var n int64
		out, n = q.pool.serve(p, key, now, q.flowStats, out)
		pkts++
		bytes += n
	}
	return out
}

// dequeue is fq_dequeue without pacing: the fast-path FIFO first, then the
// first flow of new_flows, else of old_flows. A flow out of credit gets a
// quantum more and goes to old_flows' tail; an empty flow taken from
// new_flows goes to old_flows' tail (so that it cannot starve them), one
// taken from old_flows is detached.
func (q *FQ) dequeue(now int64) (int32, uint32) {
	if q.qlen == 0 {
		return nilIndex, 0
	}
	if p := q.internal.pop(&q.pool); p != nilIndex {
		q.internalLen--
		q.qlen--
		q.dequeued++
		return p, q.pool.recs[p].Hash & q.p.orphanMask
	}
	for {
		list, fromNew := &q.newFlows, true
		if list.empty() {
			list, fromNew = &q.oldFlows, false
			if list.empty() {
				return nilIndex, 0
			}
		}
		key := list.head
		f := &q.flows[key]
		if f.credit <= 0 {
			f.credit += q.p.quantum
			list.pop(q.flowNext)
			q.oldFlows.push(q.flowNext, key)
			f.state = fqOld
			continue
		}
		p := f.q.pop(&q.pool)
		if p == nilIndex {
			list.pop(q.flowNext)
			if fromNew {
				q.oldFlows.push(q.flowNext, key)
				f.state = fqOld
			} else {
				f.state, f.age = fqDetached, now
			}
			continue
		}
		f.qlen--
		if f.qlen == 0 {
			q.inactive++
		}
		q.bandPkts--
		q.qlen--
		q.dequeued++
		f.credit -= int32(q.pool.recs[p].Len)
		return p, uint32(key)
	}
}

// Backlog is the number of packets queued.
func (q *FQ) Backlog() int { return q.qlen }

// Stats returns the counters. Drop reasons: DropOverlimit (the band's packet
// limit) and DropFQFlowLimit (the flow's).
func (q *FQ) Stats() runstats.ConsumerStats {
	return runstats.ConsumerStats{
		Enqueued: q.enqueued,
		Dequeued: q.dequeued,
		Drops:    map[runstats.DropReason]uint64{runstats.DropOverlimit: q.dropLimit, runstats.DropFQFlowLimit: q.dropFlowLim},
		Backlog:  q.qlen,
	}
}

// Report is Stats with the flows' fairness and the sojourn times.
func (q *FQ) Report() runstats.ConsumerReport {
	return fairReport(q.Stats(), q.flowStats, q.maxBacklog)
}
