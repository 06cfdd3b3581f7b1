package pipeline

import (
	"math"
	"runtime"
	"slices"

	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// The hold (RebalanceConfig.Hold) is RSS++'s remedy for the reordering a
// move causes: when a table moves bucket b from worker A to worker B, B
// holds the packets of b it takes, before its consumer, until A holds no
// packet of b (served or dropped all it had) and no receive loop can still
// steer b to A. B then hands them to its consumer in their order, so no
// flow of b is served out of order, at the cost of the hold's delay.
//
// The state lives in reorderState, which already follows each moved
// bucket's packets on its old worker: holdTo[b] names the worker holding
// b's packets. The worker that holds decides when to let go, in holdCheck.
//
// Live, the decision is made on the wall clock whenever the holding worker
// steps. On the virtual clock with one receive loop, each worker runs ahead
// on its own goroutine, so B, about to act at virtual time t (take a packet
// of a held bucket, or serve a tick), first waits until every old worker it
// holds for has reported its finishes before t (worker.pub.clock), and lets
// go only if the old worker's last finish of b came before t. That makes
// the decision depend on the virtual times alone.
//
// The wait cannot close a cycle. B acts at t only on records the loop has
// committed, so the loop's mark is already past t; an old worker reaches t
// by taking what its rings hold and catching up to the mark (catchUp),
// which needs nothing of the loop, nor of B: a worker sets its clock to t
// before it waits, so of two workers holding for each other the one at the
// earlier time goes on. The loop may wait for room in B's ring meanwhile,
// but nothing waits for the loop.
//
// With several receive loops there is no such wait: an old worker reaches
// t only once every loop has committed up to t, and a loop can be waiting
// for room in B's ring (waitForRoom) or for its source, which waits for
// another loop: B waiting there would close the cycle. B then decides on
// what the old worker has reported so far. The hold still reorders
// nothing (an old worker that has not reported a packet of b keeps it in
// flight, which keeps the hold), it only may hold longer; and such a run
// is not deterministic anyway (EngineConfig.Virtual). Every wait also ends
// when the run stops (Engine.stopped).

// holdState is one worker's held records.
type holdState struct {
	recs  []queues.Record // held, in the order taken
	out   []queues.Record // the records being let go
	limit int             // most records held at once
	wait  []int           // old workers to wait for
	stats runstats.HoldReport
}

func newHoldState(limit int) *holdState { return &holdState{limit: limit} }

// holding reports whether the worker has records held or buckets to hold.
func (w *worker) holding() bool {
	return w.hold != nil && (len(w.hold.recs) > 0 || w.reorder.holding[w.index].Load() > 0)
}

// enqueue hands chunk to the consumer, holding back the records of the
// buckets this worker holds. Records hold their place: a record of a held
// bucket first lets go what can be let go at its arrival.
//
// The caller counted the chunk as taken; a held record is counted out until
// it is let go, so that every record taken is the consumer's.
func (w *worker) enqueue(chunk []queues.Record) {
	if !w.holding() {
		w.cons.Enqueue(chunk, w.now)
		return
	}
	s, me := w.reorder, int32(w.index+1)
	start := 0
	for i := range chunk {
		h := chunk[i].Hash
		if h == 0 || s.holdTo[h&s.mask].Load() != me {
			continue
		}
		if start < i {
			w.cons.Enqueue(chunk[start:i], w.now)
		}
		start = i
		w.holdCheck(chunk[i].Arrival)
		if s.holdTo[h&s.mask].Load() != me {
			continue // let go: the record goes with the next run
		}
		if len(w.hold.recs) == w.hold.limit {
			w.hold.stats.Overflow++
			continue
		}
		start = i + 1
		w.hold.recs = append(w.hold.recs, chunk[i])
		w.taken--
		w.takenBytes -= uint64(chunk[i].Len)
		hs := &w.hold.stats
		hs.Held++
		hs.MaxHeld = max(hs.MaxHeld, len(w.hold.recs))
	}
	if start < len(chunk) {
		w.cons.Enqueue(chunk[start:], w.now)
	}
}

// holdCheck lets go of the held buckets whose old worker has drained them
// before t, and hands their records to the consumer.
func (w *worker) holdCheck(t int64) {
	s := w.reorder
	w.finished(nil, w.now)
	if w.virtual {
		w.setClock(t)
		if len(w.e.recv) == 1 {
			w.waitForOld(t)
		}
	}
	s.mu.Lock()
	s.letGo(w.index, t, w.virtual)
	s.mu.Unlock()
	// On the virtual clock the records let go at a tick's end enter the
	// consumer then, not at the last arrival the worker took.
	w.now = max(w.now, t)
	w.release(false, t)
}

// waitForOld waits until every old worker of the buckets w holds has
// reported its finishes before t, or the run stops.
func (w *worker) waitForOld(t int64) {
	s := w.reorder
	s.mu.Lock()
	w.hold.wait = s.oldWorkers(w.index, w.hold.wait[:0])
	s.mu.Unlock()
	for _, o := range w.hold.wait {
		old := w.e.workers[o]
		for old.pub.clock.Load() < t && !w.e.stopped() {
			old.wakeUp()
			runtime.Gosched()
		}
	}
}

// release hands the consumer, at t, the held records of the buckets this
// worker no longer holds, or all of them at the run's end.
func (w *worker) release(all bool, t int64) {
	if len(w.hold.recs) == 0 {
		return
	}
	s, me := w.reorder, int32(w.index+1)
	keep, out := w.hold.recs[:0], w.hold.out[:0]
	for _, r := range w.hold.recs {
		if !all && s.holdTo[r.Hash&s.mask].Load() == me {
			keep = append(keep, r)
		} else {
			out = append(out, r)
		}
	}
	w.hold.recs, w.hold.out = keep, out
	if len(out) == 0 {
		return
	}
	hs := &w.hold.stats
	if all {
		hs.AtEnd += uint64(len(out))
	}
	for _, r := range out {
		// The wait is timed by the decision, not by the consumer's now,
		// which is the latest arrival of the chunk the worker took.
		// With several receive loops a worker can take one loop's
		// records after another's later ones: a record let go at t may
		// have arrived after t, and waited not at all.
		wait := max(t-r.Arrival, 0)
		hs.WaitNs += wait
		hs.MaxWaitNs = max(hs.MaxWaitNs, wait)
		w.takenBytes += uint64(r.Len)
	}
	w.cons.Enqueue(out, w.now)
	w.taken += uint64(len(out))
	w.finished(nil, w.now)
}

// catchUp brings an idle virtual worker to mark, the receive loops' clock:
// every record that arrived before it has been taken, so the worker serves
// its ticks up to it and reports that it has. Without it a worker that
// receives nothing more would never serve its backlog, and a worker holding
// for it would wait forever.
func (w *worker) catchUp(mark int64) {
	if !w.rate.IsMax() {
		// A held bucket is let go at a tick's end (advance) or at the
		// arrival of one of its packets (enqueue), never at mark, whose
		// value depends on real timing.
		w.advance(mark)
	}
	if w.hold != nil {
		w.finished(nil, w.now)
		w.setClock(mark)
	}
}

// setClock tells the workers that may wait for this one that it has
// reported every finish before t. It never goes back.
func (w *worker) setClock(t int64) {
	if t > w.pub.clock.Load() {
		w.pub.clock.Store(t)
	}
}

// finishRun brings a worker whose rings are empty for good to the run's
// end: a virtual worker serves its ticks up to the last arrival, and held
// records go to the consumer, which keeps them as its backlog.
func (w *worker) finishRun() {
	if w.virtual {
		w.catchUp(w.e.lastArrival())
	}
	if w.hold != nil {
		w.release(true, w.now)
		w.setClock(doneClock)
	}
}

// oldWorkers appends the old workers of the buckets worker w holds; the
// caller holds mu.
func (s *reorderState) oldWorkers(w int, dst []int) []int {
	for _, b := range s.holds {
		if int(s.holdTo[b].Load()) != w+1 {
			continue
		}
		if o := s.trans[b].old; !slices.Contains(dst, o) {
			dst = append(dst, o)
		}
	}
	return dst
}

// letGo ends the holds of worker w whose old worker holds nothing of the
// bucket while every loop steers by the new table, and, on the virtual
// clock, finished its last packet of the bucket before t. The caller holds
// mu.
func (s *reorderState) letGo(w int, t int64, virtual bool) {
	for i := 0; i < len(s.holds); {
		b := int(s.holds[i])
		tr := s.trans[b]
		if int(s.holdTo[b].Load()) != w+1 || s.inflight[tr.old*s.size+b] > 0 || !s.loopsPast(tr.gen) || (virtual && tr.maxLast >= t) {
			i++
			continue
		}
		s.endHold(i)
	}
}

// startHold makes tr's new worker hold bucket b; the caller holds mu.
func (s *reorderState) startHold(b int, tr *transition) {
	s.holdTo[b].Store(int32(tr.new + 1))
	s.holding[tr.new].Add(1)
	s.holds = append(s.holds, int32(b))
	s.holdsStarted++
}

// stopHold ends bucket b's hold, if it has one; the caller holds mu.
func (s *reorderState) stopHold(b int) {
	for i, h := range s.holds {
		if int(h) == b {
			s.endHold(i)
			return
		}
	}
}

func (s *reorderState) endHold(i int) {
	b := s.holds[i]
	w := s.holdTo[b].Load() - 1
	s.holdTo[b].Store(0)
	s.holding[w].Add(-1)
	s.holds[i] = s.holds[len(s.holds)-1]
	s.holds = s.holds[:len(s.holds)-1]
}

// holdReport sums the workers' holds; every goroutine has ended.
func (e *Engine) holdReport() *runstats.HoldReport {
	if !e.cfg.Rebalance.Hold || e.reorder == nil {
		return nil
	}
	r := runstats.HoldReport{Buckets: e.reorder.holdsStarted}
	for _, w := range e.workers {
		hs := w.hold.stats
		r.Held += hs.Held
		r.Overflow += hs.Overflow
		r.AtEnd += hs.AtEnd
		r.MaxHeld = max(r.MaxHeld, hs.MaxHeld)
		r.WaitNs += hs.WaitNs
		r.MaxWaitNs = max(r.MaxWaitNs, hs.MaxWaitNs)
	}
	return &r
}

// doneClock is a worker's clock once it has ended: no finish is to come.
const doneClock = math.MaxInt64
