package queues

import (
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/runstats"
)

// skbOverhead is what fq_codel's memory limit charges a packet beyond its
// length: SKB_TRUESIZE's struct sk_buff and skb_shared_info, 256 + 320 bytes
// on x86-64 with 64-byte cache lines. A driver's real truesize also counts
// its buffer's unused room (often half or all of a 4 KiB page), so the model
// reaches the memory limit later than such a driver would.
const skbOverhead = 576

// FQCodel is fq_codel (net/sched/sch_fq_codel.c) on one CPU: packets are
// classified into flows by reciprocal_scale(hash, flows), each flow is a FIFO
// under its own CoDel, and flows take turns by deficit round robin, flows
// that were empty (new, sparse flows) ahead of the others for one quantum.
// Over the packet or memory limit it drops from the head of the flow with the
// most bytes queued, up to half of them at once.
//
// Differences from the kernel: no tc filters or skb->priority overrides
// (every packet is classified by its hash), ECN is off unless asked (with
// it every packet is taken as ECN-capable), no ce_threshold, and truesize is
// modelled as the length plus skbOverhead.
type FQCodel struct {
	p        fqCodelParams
	pool     pktPool
	flows    []fqCodelFlow
	flowNext []int32 // each flow's link in new_flows or old_flows
	newFlows flowList
	oldFlows flowList

	qlen    int    // sch->q.qlen
	backlog uint64 // sch->qstats.backlog, bytes
	memory  int64  // memory_usage, bytes of truesize

	maxBacklog               int
	enqueued, dequeued       uint64
	dropCodel, dropOverlimit uint64
	drops                    *DropLog // nil: dropped records are only counted
	dropOvermemory, ceMarks  uint64
	flowStats                *FlowStats
}

// fqCodelFlow is one flow's state. What a packet's enqueue or dequeue touches
// of its flow is here, in 40 bytes, rather than in parallel slices as the
// kernel keeps the backlogs: one cache line or two per flow visited, where
// each line missed costs the pipeline more than the rare scan of dropFattest.
type fqCodelFlow struct {
	q       pktFIFO
	backlog uint32 // bytes queued
	deficit int32
	listed  bool // on new_flows or old_flows (!list_empty(&flow->flowchain))
	cvars   codelVars
}

// newFQCodelFrom returns an empty fq_codel configured by cfg.
func newFQCodelFrom(cfg ConsumerConfig) (*FQCodel, error) {
	p, err := cfg.fqCodel()
	if err != nil {
		return nil, err
	}
	return newFQCodel(p), nil
}

func newFQCodel(p fqCodelParams) *FQCodel {
	q := &FQCodel{
		p:         p,
		pool:      newPktPool(min(p.limit+1, 4096)),
		flows:     make([]fqCodelFlow, p.flows),
		flowNext:  make([]int32, p.flows),
		newFlows:  emptyFlowList,
		oldFlows:  emptyFlowList,
		flowStats: NewFlowStats(p.flows, p.topFlows),
	}
	for i := range q.flows {
		q.flows[i].q = emptyFIFO
	}
	return q
}

// Enqueue is fq_codel_enqueue for each record: queue it at its flow's tail,
// put the flow on new_flows if it was on no list, and drop from the fattest
// flow when over a limit.
func (q *FQCodel) Enqueue(recs []Record, now int64) {
	for i := range recs {
		r := &recs[i]
		if q.p.stampArrival {
			now = r.Arrival
		}
		idx := hash.ReciprocalScale(r.Hash, uint32(len(q.flows)))
		f := &q.flows[idx]
		f.q.push(&q.pool, q.pool.put(r, now))
		f.backlog += r.Len
		q.backlog += uint64(r.Len)
		if !f.listed {
			q.newFlows.push(q.flowNext, int32(idx))
			f.listed = true
			f.deficit = q.p.quantum
		}
		q.memory += int64(r.Len) + skbOverhead
		q.enqueued++
		q.qlen++
		if memoryLimited := q.memory > q.p.memoryLimit; q.qlen > q.p.limit || memoryLimited {
			n := q.dropFattest()
			if memoryLimited {
				q.dropOvermemory += n
			} else {
				q.dropOverlimit += n
			}
		}
		q.maxBacklog = max(q.maxBacklog, q.qlen)
	}
}

// dropFattest is fq_codel_drop: find the flow with the most bytes queued
// (the first of equals) and drop packets from its head until half of its
// bytes are gone or dropBatch packets are, at least one; CoDel's count of
// that flow grows by the drops, to signal it harder. It returns the drops.
func (q *FQCodel) dropFattest() uint64 {
	var fattest uint32
	idx := 0
	for i := range q.flows {
		if b := q.flows[i].backlog; b > fattest {
			fattest, idx = b, i
		}
	}
	threshold := fattest >> 1
	f := &q.flows[idx]
	var bytes uint32
	var mem int64
	n := 0
	for {
		p := f.q.pop(&q.pool)
		if p == nilIndex {
			break // only zero-length records were queued: nothing is fat
		}
		l := q.pool.recs[p].Len
		q.drops.add(&q.pool.recs[p])
		bytes += l
		mem += int64(l) + skbOverhead
		q.pool.release(p)
		n++
		if n >= q.p.dropBatch || bytes >= threshold {
			break
		}
	}
	f.cvars.count += uint32(n)
	f.backlog -= bytes
	q.backlog -= uint64(bytes)
	q.memory -= mem
	q.qlen -= n
	return uint64(n)
}

// Dequeue serves packets as fq_codel_dequeue does, one after another while
// the budget lasts.
func (q *FQCodel) Dequeue(now int64, budget Budget, out []Record) []Record {
	t := toCodelTime(now)
	var pkts int
	var bytes int64
	for underBudget(budget, pkts, bytes) {
		p, idx := q.dequeue(t)
		if p == nilIndex {
			break
		}
		var n int64
		out, n = q.pool.serve(p, idx, now, q.flowStats, out)
		pkts++
		bytes += n
	}
	return out
}

// dequeue is fq_codel_dequeue: the first flow of new_flows, else of
// old_flows; a flow out of deficit gets a quantum more and goes to the tail
// of old_flows; a flow CoDel leaves empty leaves the lists (or, taken from
// new_flows while old flows wait, goes to old_flows' tail so that it cannot
// starve them). It returns the packet's pool slot and its flow.
func (q *FQCodel) dequeue(now codelTime) (int32, uint32) {
	for {
		list, fromNew := &q.newFlows, true
		if list.empty() {
			list, fromNew = &q.oldFlows, false
			if list.empty() {
				return nilIndex, 0
			}
		}
		idx := list.head
		f := &q.flows[idx]
		if f.deficit <= 0 {
			f.deficit += q.p.quantum
			list.pop(q.flowNext)
			q.oldFlows.push(q.flowNext, idx)
			continue
		}
		// codel_dequeue, its common case inline.
		p := q.headOut(f)
		if p == nilIndex {
			f.cvars.dropping = false
		} else if drop := f.cvars.shouldDrop(&q.p.codel, toCodelTime(q.pool.enq[p]), now, q.backlog); drop || f.cvars.dropping {
			p = q.codelControl(f, p, drop, now)
		}
		if p == nilIndex {
			list.pop(q.flowNext)
			if fromNew && !q.oldFlows.empty() {
				q.oldFlows.push(q.flowNext, idx)
			} else {
				f.listed = false
			}
			continue
		}
		f.deficit -= int32(q.pool.recs[p].Len)
		q.dequeued++
		return p, uint32(idx)
	}
}

// headOut is fq_codel's dequeue_func: take the head packet off flow f and
// out of the qdisc's counts; nilIndex when the flow is empty.
func (q *FQCodel) headOut(f *fqCodelFlow) int32 {
	p := f.q.pop(&q.pool)
	if p != nilIndex {
		l := q.pool.recs[p].Len
		f.backlog -= l
		q.backlog -= uint64(l)
		q.memory -= int64(l) + skbOverhead
		q.qlen--
	}
	return p
}

// shouldDrop runs CoDel's test on packet p (nilIndex: the flow went empty).
func (q *FQCodel) shouldDrop(v *codelVars, p int32, now codelTime) bool {
	if p == nilIndex {
		v.firstAboveTime = 0
		return false
	}
	return v.shouldDrop(&q.p.codel, toCodelTime(q.pool.enq[p]), now, q.backlog)
}

// codelDrop drops packet p, already out of the counts.
func (q *FQCodel) codelDrop(p int32) {
	q.dropCodel++
	q.drops.add(&q.pool.recs[p])
	q.pool.release(p)
}

// codelControl is codel_dequeue (include/net/codel_impl.h) on flow f past
// its common case, which dequeue runs inline: packet p is the flow's head,
// taken out, and drop is CoDel's verdict on it; the flow is in the dropping
// state or drop says it should enter it. It returns the flow's next packet
// to serve, after dropping (or marking) those CoDel's control law condemns,
// or nilIndex when none is left.
func (q *FQCodel) codelControl(f *fqCodelFlow, p int32, drop bool, now codelTime) int32 {
	v, cp := &f.cvars, &q.p.codel
	switch {
	case v.dropping && !drop:
		// The sojourn time went below target: leave the dropping state.
		v.dropping = false
	case v.dropping && codelAfterEq(now, v.dropNext):
		// Time for the next drop, and perhaps more: a large backlog can
		// make the next drop due at once.
		for v.dropping && codelAfterEq(now, v.dropNext) {
			v.count++ // wrapping does not matter: no division by it
			v.newtonStep()
			if cp.ecn {
				q.ceMarks++
				v.dropNext = codelControlLaw(v.dropNext, cp.interval, v.recInvSqrt)
				return p
			}
			q.codelDrop(p)
			p = q.headOut(f)
			if !q.shouldDrop(v, p, now) {
				v.dropping = false
			} else {
				v.dropNext = codelControlLaw(v.dropNext, cp.interval, v.recInvSqrt)
			}
		}
	case !v.dropping && drop:
		if cp.ecn {
			q.ceMarks++
		} else {
			q.codelDrop(p)
			p = q.headOut(f)
			q.shouldDrop(v, p, now) // updates first_above_time; its verdict is not used
		}
		v.dropping = true
		// If the queue went above target again soon after the last dropping
		// state ended, start from the drop rate that controlled it then.
		delta := v.count - v.lastcount
		if delta > 1 && codelBefore(now-v.dropNext, 16*cp.interval) {
			v.count = delta
			v.newtonStep()
		} else {
			v.count = 1
			v.recInvSqrt = ^uint16(0)
		}
		v.lastcount = v.count
		v.dropNext = codelControlLaw(now, cp.interval, v.recInvSqrt)
	}
	return p
}

// Backlog is the number of packets queued.
func (q *FQCodel) Backlog() int { return q.qlen }

// Stats returns the counters. Drop reasons: DropCodel (CoDel's control law),
// DropOverlimit (over the packet limit) and DropOvermemory (over the memory
// limit; the kernel counts these in both drop_overlimit and
// drop_overmemory, here they are apart so that the reasons add up).
func (q *FQCodel) Stats() runstats.ConsumerStats {
	return runstats.ConsumerStats{
		Enqueued: q.enqueued,
		Dequeued: q.dequeued,
		Drops:    map[runstats.DropReason]uint64{runstats.DropCodel: q.dropCodel, runstats.DropOverlimit: q.dropOverlimit, runstats.DropOvermemory: q.dropOvermemory},
		CEMarks:  q.ceMarks,
		Backlog:  q.qlen,
	}
}

// Report is Stats with the flows' fairness and the sojourn times.
func (q *FQCodel) Report() runstats.ConsumerReport {
	return fairReport(q.Stats(), q.flowStats, q.maxBacklog)
}
