package pipeline

import (
	"cmp"
	"sync"
	"sync/atomic"

	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// reorderState counts, in a RETA run, the packets served while an earlier
// packet of their flow (the flow hash) finished, served or dropped, later
// on the run's clock.
//
// With one table no packet is ever reordered: a flow comes in on one
// receive queue, whose loop steers all of it to one worker, and every
// consumer serves a flow in order. So the count needs no per-packet state
// until a bucket moves: it keeps, per worker and bucket, the packets in
// flight (arrived, not finished), and when a table moves bucket b from
// worker A to B it opens a transition for b. The flow's packets on A all
// arrived before those on B (its loop switched tables once), so a packet p
// of flow f served on B at time t is reordered exactly when some packet of
// f finished on A later than t. The transition records, per flow, the
// latest finish on A; once A holds no packet of b and every receive loop
// steers by the new table, the serves on B it kept are judged, and later
// ones at once, until B's clock passes the latest finish on A.
//
// Receive loops report a batch's records when they commit them, workers
// what their consumers served and (through queues.DropLog) dropped, each
// under mu, once per batch or consumer call (the lock order is written in
// rebalance.go).
type reorderState struct {
	mu       sync.Mutex
	size     int
	mask     uint32
	inflight []int32       // [worker*size + bucket]
	trans    []*transition // per bucket: nil when the bucket did not move
	active   []int32       // buckets with a transition not yet drained
	nActive  atomic.Int32  // len(active), read without mu
	spare    []*transition
	loopGen  []uint64 // per loop: the table generation of its last commit
	loopDone []bool
	// inBatch is set by a loop from before it loads the table for a batch
	// until it has committed the batch: a loop outside a batch holds no
	// record steered by an old table, and loads the table in force when
	// its next batch begins.
	inBatch []atomic.Bool
	// maxPending bounds a transition's kept serves: the packets the engine
	// can hold at once.
	maxPending int
	stats      runstats.ReorderReport
	flowsMoved uint64

	// The hold (hold.go): per bucket, 1 + the worker holding its packets
	// (0: none), written under mu and read by that worker without it; per
	// worker, the buckets it holds; the buckets held.
	hold         bool
	holdTo       []atomic.Int32
	holding      []atomic.Int32
	holds        []int32
	holdsStarted uint64
}

// transition is a bucket moved from worker old to worker new by the table
// of generation gen.
type transition struct {
	old, new int
	gen      uint64
	at       int64 // the move, on the run's clock: the interval's end
	drained  bool
	latest   map[uint32]int64 // per flow: its latest finish on old since the move
	maxLast  int64
	pending  []servedAt // new's serves before drained
}

type servedAt struct {
	hash uint32
	at   int64
}

func newReorderState(cfg *EngineConfig, size, loops, workers int) *reorderState {
	limit := cmp.Or(cfg.ConsumerConfig.Limit, queues.DefaultFQCodelLimit)
	return &reorderState{
		size: size, mask: uint32(size - 1),
		inflight:   make([]int32, workers*size),
		trans:      make([]*transition, size),
		loopGen:    make([]uint64, loops),
		loopDone:   make([]bool, loops),
		inBatch:    make([]atomic.Bool, loops),
		maxPending: workers * (loops*(cfg.RingSize+1) + limit),
		hold:       cfg.Rebalance.Hold,
		holdTo:     make([]atomic.Int32, size),
		holding:    make([]atomic.Int32, workers),
	}
}

// arrive counts the records a loop is about to commit, per worker, steered
// by tables of generation gen or older.
func (s *reorderState) arrive(loop int, gen uint64, out []outRing) {
	s.mu.Lock()
	for w := range out {
		o := &out[w]
		base := w * s.size
		for k := range o.n {
			if h := o.ring.Slot(k).Hash; h != 0 {
				s.inflight[base+int(h&s.mask)]++
			}
		}
	}
	s.loopGen[loop] = gen
	s.settle()
	s.mu.Unlock()
}

// finish takes what worker w served and what its consumer dropped at now.
// A bucket that did not move costs one decrement and one nil check.
func (s *reorderState) finish(w int, served, dropped []queues.Record, now int64) {
	if len(served) == 0 && len(dropped) == 0 {
		return
	}
	s.mu.Lock()
	s.stats.Served += uint64(len(served))
	s.stats.Dropped += uint64(len(dropped))
	s.finishRecs(w, served, now, true)
	s.finishRecs(w, dropped, now, false)
	s.mu.Unlock()
}

// finishRecs takes recs, served or dropped by worker w at now; the caller
// holds mu.
func (s *reorderState) finishRecs(w int, recs []queues.Record, now int64, served bool) {
	base := w * s.size
	for i := range recs {
		if h := recs[i].Hash; h != 0 {
			b := int(h & s.mask)
			s.inflight[base+b]--
			if s.trans[b] != nil {
				s.moved(w, b, h, now, served)
			}
		}
	}
}

// moved takes the finish on worker w of a packet of flow h in bucket b,
// which has a transition.
func (s *reorderState) moved(w, b int, h uint32, now int64, served bool) {
	tr := s.trans[b]
	switch {
	case w == tr.old:
		// A finish before the move cannot follow a serve on new, which
		// takes only packets steered after it; a worker that runs behind
		// the receive loop reports such finishes after the move.
		if now >= tr.at {
			tr.latest[h] = max(tr.latest[h], now)
			tr.maxLast = max(tr.maxLast, now)
		}
		if s.inflight[w*s.size+b] == 0 {
			s.settle()
		}
	case w == tr.new && served && !tr.drained:
		if len(tr.pending) == s.maxPending {
			s.stats.Merged++ // no room to wait: this serve goes unjudged
			return
		}
		tr.pending = append(tr.pending, servedAt{h, now})
	case w == tr.new && served:
		if now < tr.latest[h] {
			s.stats.Reordered++
		}
		if now >= tr.maxLast {
			s.release(b)
		}
	}
}

// moveLocked opens a transition for every bucket the table of generation
// gen, in force from at, moved (before[b] != after[b]); the caller holds
// mu. A bucket that moves again before its old worker drained it is judged
// as far as it got, and the count marked inexact.
func (s *reorderState) moveLocked(before, after []uint16, gen uint64, at int64) {
	for b := range before {
		if before[b] == after[b] {
			continue
		}
		if tr := s.trans[b]; tr != nil {
			if !tr.drained {
				s.stats.Merged++
				s.judge(tr)
				s.dropActive(b)
			}
			s.release(b)
		}
		tr := s.newTransition()
		tr.old, tr.new, tr.gen, tr.at = int(before[b]), int(after[b]), gen, at
		s.trans[b] = tr
		s.active = append(s.active, int32(b))
		if s.hold {
			s.startHold(b, tr)
		}
	}
	s.settle()
}

// settle drains the transitions whose old worker holds nothing of their
// bucket while every running loop steers by their table or a later one.
func (s *reorderState) settle() {
	for i := 0; i < len(s.active); {
		b := int(s.active[i])
		tr := s.trans[b]
		if s.inflight[tr.old*s.size+b] > 0 || !s.loopsPast(tr.gen) {
			i++
			continue
		}
		tr.drained = true
		s.judge(tr)
		s.active[i] = s.active[len(s.active)-1]
		s.active = s.active[:len(s.active)-1]
	}
	s.nActive.Store(int32(len(s.active)))
}

// loopsPast reports whether no loop can still steer by a table older than
// generation gen: each has committed with it or a later one, ended, or is
// between batches.
func (s *reorderState) loopsPast(gen uint64) bool {
	for l, g := range s.loopGen {
		if g < gen && !s.loopDone[l] && s.inBatch[l].Load() {
			return false
		}
	}
	return true
}

// batch marks loop as inside a batch or not. A loop that leaves its batch
// settles the transitions that waited for it.
func (s *reorderState) batch(loop int, in bool) {
	s.inBatch[loop].Store(in)
	if !in && s.nActive.Load() > 0 {
		s.mu.Lock()
		s.settle()
		s.mu.Unlock()
	}
}

// judge counts tr's kept serves against the latest finishes on its old
// worker.
func (s *reorderState) judge(tr *transition) {
	for _, p := range tr.pending {
		if p.at < tr.latest[p.hash] {
			s.stats.Reordered++
		}
	}
	tr.pending = tr.pending[:0]
}

func (s *reorderState) dropActive(b int) {
	for i, a := range s.active {
		if int(a) == b {
			s.active[i] = s.active[len(s.active)-1]
			s.active = s.active[:len(s.active)-1]
			return
		}
	}
}

// release ends bucket b's transition: nothing served on its new worker
// from now on can be earlier than a finish on the old one.
func (s *reorderState) release(b int) {
	if s.holdTo[b].Load() != 0 {
		s.stopHold(b)
	}
	tr := s.trans[b]
	s.flowsMoved += uint64(len(tr.latest))
	clear(tr.latest)
	tr.maxLast, tr.drained = 0, false
	s.spare = append(s.spare, tr)
	s.trans[b] = nil
}

func (s *reorderState) newTransition() *transition {
	if n := len(s.spare); n > 0 {
		tr := s.spare[n-1]
		s.spare = s.spare[:n-1]
		return tr
	}
	return &transition{latest: map[uint32]int64{}}
}

// loopEnded counts a receive loop out: transitions no longer wait for it to
// take a new table.
func (s *reorderState) loopEnded(loop int) {
	s.mu.Lock()
	s.loopDone[loop] = true
	s.settle()
	s.mu.Unlock()
}

// report is the count at the end of the run. Transitions whose old worker
// still holds packets of their bucket are judged with the finishes so far,
// and the count marked inexact if they kept serves.
func (s *reorderState) report() (runstats.ReorderReport, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.active {
		tr := s.trans[b]
		if len(tr.pending) > 0 {
			s.stats.Merged++
		}
		s.judge(tr)
	}
	s.active = s.active[:0]
	s.nActive.Store(0)
	flows := s.flowsMoved
	for _, tr := range s.trans {
		if tr != nil {
			flows += uint64(len(tr.latest))
		}
	}
	st := s.stats
	st.Exact = st.Untracked == 0 && st.Merged == 0
	return st, flows
}

// finished hands the worker's served records and its consumer's drops to
// the reordering count.
func (w *worker) finished(served []queues.Record, now int64) {
	if w.reorder == nil {
		return
	}
	w.reorder.finish(w.index, served, w.drops.Recs, now)
	w.drops.Recs = w.drops.Recs[:0]
}

// logDrops gives the worker's consumer its drop log when the run counts
// reordering.
func (w *worker) logDrops() {
	if w.reorder == nil {
		return
	}
	if dl, ok := w.cons.(queues.DropLogger); ok {
		dl.LogDrops(&w.drops)
	}
}
