package pipeline

import (
	"cmp"
	"sync"

	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/reorder"
	"github.com/xdphash/xdphash/runstats"
)

// reorderState counts the packets a RETA run serves out of order within
// their flow (the flow hash), by the run's clock: the receive loops number
// each flow's packets (Record.Tag) before they commit them, the workers
// report what they served and what their consumers dropped, with the time.
// One mutex, taken once per committed batch and per consumer call.
type reorderState struct {
	mu sync.Mutex
	c  *reorder.TimedCounter
}

// newReorderState sizes the counter for every packet the engine can hold
// at once (rings and consumers), within reorder.MaxFlows.
func newReorderState(cfg *EngineConfig, loops, workers int) (*reorderState, error) {
	limit := cmp.Or(cfg.ConsumerConfig.Limit, queues.DefaultFQCodelLimit)
	n := min(int64(workers)*(int64(loops)*int64(cfg.RingSize+1)+int64(limit)), reorder.MaxFlows)
	c, err := reorder.NewTimed(int(n), int(n))
	if err != nil {
		return nil, err
	}
	return &reorderState{c: c}, nil
}

// arrive numbers recs, in arrival order, before their loop commits them.
// Frames without a hash (no bucket) are not counted.
func (s *reorderState) arrive(recs []*queues.Record) {
	if len(recs) == 0 {
		return
	}
	s.mu.Lock()
	for _, r := range recs {
		r.Tag = uint16(s.arriveOne(r.Hash))
	}
	s.mu.Unlock()
}

func (s *reorderState) arriveOne(h uint32) reorder.Tag {
	tag, _ := s.c.Arrive(uint64(h))
	return tag
}

// finish reports what a worker served and what its consumer dropped at now.
func (s *reorderState) finish(served, dropped []queues.Record, now int64) {
	if len(served) == 0 && len(dropped) == 0 {
		return
	}
	s.mu.Lock()
	for i := range served {
		if h := served[i].Hash; h != 0 {
			s.c.Finish(uint64(h), reorder.Tag(served[i].Tag), now, true)
		}
	}
	for i := range dropped {
		if h := dropped[i].Hash; h != 0 {
			s.c.Finish(uint64(h), reorder.Tag(dropped[i].Tag), now, false)
		}
	}
	s.mu.Unlock()
}

// countInFlight adds the flows with packets in flight to counts[hash&mask].
func (s *reorderState) countInFlight(mask uint64, counts []int) {
	s.mu.Lock()
	s.c.CountInFlight(mask, counts)
	s.mu.Unlock()
}

func (s *reorderState) report() runstats.ReorderReport {
	s.mu.Lock()
	st := s.c.Stats()
	s.mu.Unlock()
	return runstats.ReorderReport{
		Served: st.Served, Dropped: st.Dropped, Reordered: st.Reordered,
		Untracked: st.Untracked, Merged: st.Merged, Exact: st.Exact(),
	}
}

// finished hands the worker's served records and its consumer's drops to
// the reordering counter.
func (w *worker) finished(served []queues.Record, now int64) {
	if w.ro == nil {
		return
	}
	w.ro.finish(served, w.drops.Recs, now)
	w.drops.Recs = w.drops.Recs[:0]
}

// logDrops gives the worker's consumer its drop log when the run counts
// reordering.
func (w *worker) logDrops() {
	if w.ro == nil {
		return
	}
	if dl, ok := w.cons.(queues.DropLogger); ok {
		dl.LogDrops(&w.drops)
	}
}
