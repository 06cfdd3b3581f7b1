package pipeline

import (
	"cmp"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xdphash/xdphash/queues"
)

// feedChunk bounds the records handed to a consumer's Enqueue at once, and
// serveChunk those asked of its Dequeue: small enough that a fifo of the
// default limit never overflows while the worker serves at "max", large
// enough that the interface calls cost nothing per packet.
const (
	feedChunk  = 256
	serveChunk = 256
)

// Idle strategy of a worker whose rings are empty: poll spinPolls times,
// yield CPUPlan.WorkerYields times, then sleep until a receive loop wakes it
// or parkTimeout passes.
const (
	spinPolls   = 32
	parkTimeout = time.Millisecond
	minPark     = 10 * time.Microsecond
)

// cacheLine keeps what one goroutine writes off the lines others read.
const cacheLine = 64

// worker is one modelled CPU: it drains its rings, one per receive loop, into
// its consumer and serves the consumer at the service rate.
type worker struct {
	e       *Engine
	index   int
	cpu     int // -1 when not pinned
	rings   []*queues.Ring
	cons    queues.Consumer
	rate    queues.Rate
	tb      *queues.TokenBucket
	out     []queues.Record // Dequeue's output, serveChunk long
	reorder *reorderState   // nil unless the run counts reordering
	drops   queues.DropLog  // the consumer's drops, for reorder
	hold    *holdState      // nil unless RebalanceConfig.Hold

	yields int // yields before sleeping (CPUPlan.WorkerYields)
	// shared is set when receive loops may step the worker on their own
	// goroutines (receiver.help, CPUPlan.LoopsStepWorkers): every Go
	// processor runs a receive loop, and the worker is not pinned.
	shared bool

	virtual bool
	tick    int64 // a virtual run's service tick
	tickEnd int64
	base    int64 // the engine clock at the start of the run
	now     int64 // on the run's clock

	taken, takenBytes   uint64 // records taken off the rings
	served, servedBytes uint64 // records the consumer served

	win windowLog[workerSnap]

	// parked is read by every receive loop after each commit: it has a
	// cache line of its own, away from the counters the worker writes.
	_      [cacheLine]byte
	parked atomic.Bool
	_      [cacheLine - 1]byte
	wake   chan struct{}
	timer  *time.Timer

	// mu is held by whoever steps the worker, its own goroutine or a
	// receive loop helping it: it guards what a step changes (the consumer,
	// the token bucket, the clock, the counters and the windows). The
	// lock order is written in rebalance.go.
	mu sync.Mutex
	// stepsByLoops counts the records receive loops took for this worker.
	stepsByLoops uint64

	pub struct {
		taken, served, servedBytes atomic.Uint64
		backlog                    atomic.Int64
		// clock is how far, on the virtual clock, the worker has
		// reported its finishes to reorder (see holdCheck); used with a hold.
		clock atomic.Int64
	}
}

// workerSnap is a worker's cumulative counters at a window's end.
type workerSnap struct {
	served, servedBytes uint64
	consumerDrops       uint64
	backlog             int // not cumulative: the backlog at the window's end
}

func newWorker(e *Engine, index, cpu, loops int) *worker {
	cfg := &e.cfg
	w := &worker{
		yields: e.plan.WorkerYields,
		shared: e.plan.LoopsStepWorkers && cpu < 0,
		e:      e, index: index, cpu: cpu,
		cons:    cfg.NewConsumer(index),
		rate:    cfg.ServiceRate,
		tb:      queues.NewTokenBucket(cfg.ServiceRate),
		out:     make([]queues.Record, serveChunk),
		virtual: cfg.Virtual,
		tick:    int64(cfg.Tick),
		tickEnd: int64(cfg.Tick),
		win:     newWindowLog[workerSnap](int64(cfg.Window)),
		wake:    make(chan struct{}, 1),
		timer:   time.NewTimer(time.Hour),
	}
	w.timer.Stop()
	w.reorder = e.reorder
	w.logDrops()
	if cfg.Rebalance.Hold && e.reorder != nil {
		w.hold = newHoldState(cmp.Or(cfg.ConsumerConfig.Limit, queues.DefaultFQCodelLimit))
	}
	for range loops {
		w.rings = append(w.rings, queues.NewRing(cfg.RingSize+1))
	}
	return w
}

// run drains the rings until every receive loop has ended and its rings are
// empty. A pinned worker locks its OS thread and never unlocks it, so that
// the runtime ends the pinned thread with the goroutine rather than reuse it.
func (w *worker) run() {
	if err := w.e.place(w.cpu); err != nil {
		w.e.fail(fmt.Errorf("start worker %d: %w", w.index, err))
	}
	for idle := 0; ; {
		// Read "done" before polling: a receive loop commits its last
		// records before it counts itself out, so an empty poll after
		// "done" means the rings are empty for good.
		done := w.e.producersDone()
		// The loops' clock is read before the poll: every record that
		// arrived before it is then in the rings.
		var mark int64
		if w.virtual {
			mark = w.e.watermark()
		}
		w.mu.Lock()
		n := w.step()
		if n == 0 && w.virtual && !done {
			w.catchUp(mark)
		}
		w.mu.Unlock()
		if n > 0 {
			idle = 0
			continue
		}
		if done {
			break
		}
		idle++
		w.idle(idle)
	}
	w.mu.Lock()
	w.finishRun()
	w.mu.Unlock()
	w.win.push(w.snap())
	w.publish()
}

// step polls the rings and, in a live run, lets go of held records and, at a
// limited rate, serves what the token bucket allows. The caller holds mu. It
// returns the records taken.
func (w *worker) step() int {
	n := w.poll()
	if w.virtual {
		return n
	}
	if hold := w.holding(); hold || !w.rate.IsMax() && w.cons.Backlog() > 0 {
		if n == 0 {
			w.readClock()
		}
		if hold {
			w.holdCheck(w.now)
		}
		if w.rate.IsMax() || w.cons.Backlog() > 0 {
			w.serve(w.now)
		}
	}
	return n
}

// readClock sets a live worker's now from the wall clock and closes the
// windows that ended. A worker reads the clock only when it has something to
// do, or before it sleeps: reading it on every empty poll took a tenth of the
// pipeline's time (BenchmarkPipeline's profile). The windows stay exact, as
// the counters change only after a read.
func (w *worker) readClock() {
	w.now = w.e.clock() - w.base
	w.closeWindows(w.now)
}

// poll takes every record off the rings and feeds it to the consumer.
func (w *worker) poll() int {
	n := 0
	for _, ring := range w.rings {
		a, b := ring.Peek()
		if len(a) == 0 {
			continue
		}
		if n == 0 && !w.virtual {
			w.readClock()
		}
		w.feed(a)
		w.feed(b)
		ring.Release(len(a) + len(b))
		n += len(a) + len(b)
	}
	if n > 0 {
		w.publish()
	}
	return n
}

// feed hands recs, read in place in a ring, to the consumer in chunks. At
// "max" the consumer is served after each chunk. A virtual run with a limited
// rate cuts the chunks at tick boundaries and serves the consumer at each
// tick's end before it enqueues the records of a later tick.
func (w *worker) feed(recs []queues.Record) {
	for len(recs) > 0 {
		n := min(len(recs), feedChunk)
		if w.virtual && !w.rate.IsMax() {
			w.advance(recs[0].Arrival)
			for i := 1; i < n; i++ {
				if recs[i].Arrival >= w.tickEnd {
					n = i
					break
				}
			}
		}
		if w.hold != nil && w.virtual {
			w.setClock(recs[0].Arrival)
		}
		chunk := recs[:n]
		var bytes uint64
		for i := range chunk {
			bytes += uint64(chunk[i].Len)
		}
		w.taken += uint64(n)
		w.takenBytes += bytes
		if w.virtual {
			w.now = max(w.now, chunk[n-1].Arrival)
			w.closeWindows(w.now)
		}
		w.enqueue(chunk)
		w.finished(nil, w.now)
		if w.rate.IsMax() {
			w.serve(w.now)
		}
		recs = recs[n:]
	}
}

// advance serves the consumer at the end of every tick before t, in virtual
// time. Ticks in which the consumer is empty are skipped.
func (w *worker) advance(t int64) {
	for t >= w.tickEnd {
		// Service during a tick belongs to the window the tick ends in.
		w.closeWindows(w.tickEnd - 1)
		if w.hold != nil {
			w.setClock(w.tickEnd)
			if w.holding() {
				w.holdCheck(w.tickEnd)
			}
		}
		w.serve(w.tickEnd)
		if w.cons.Backlog() == 0 && (w.hold == nil || len(w.hold.recs) == 0) {
			w.tickEnd = (t/w.tick + 1) * w.tick
			return
		}
		w.tickEnd += w.tick
	}
}

// serve dequeues what the token bucket allows at now.
func (w *worker) serve(now int64) {
	for {
		budget, ok := w.tb.Budget(now, len(w.out))
		if !ok {
			return
		}
		got := w.cons.Dequeue(now, budget, w.out[:0])
		w.finished(got, now)
		var bytes int64
		for i := range got {
			bytes += int64(got[i].Len)
		}
		w.tb.Spend(len(got), bytes)
		w.served += uint64(len(got))
		w.servedBytes += uint64(bytes)
		if len(got) < len(w.out) {
			return
		}
	}
}

// idle waits for records: spin, then yield, then sleep until woken. A live
// worker with a backlog and a limited rate sleeps only until the token
// bucket allows the next packet.
func (w *worker) idle(polls int) {
	switch {
	case polls <= spinPolls:
		return
	case polls <= spinPolls+w.yields:
		runtime.Gosched()
		return
	}
	w.mu.Lock()
	if !w.virtual {
		w.readClock()
	}
	wait := parkTimeout
	if !w.virtual && !w.rate.IsMax() && w.cons.Backlog() > 0 {
		wait = min(max(time.Duration(w.tb.Wait()), minPark), parkTimeout)
	}
	w.mu.Unlock()
	// Dekker with the receive loop's commit-then-wakeUp: either it sees
	// parked, or this sees its records.
	w.parked.Store(true)
	if !w.empty() || w.e.producersDone() {
		w.parked.Store(false)
		return
	}
	w.timer.Reset(wait)
	select {
	case <-w.wake:
	case <-w.timer.C:
	}
	w.timer.Stop()
	w.parked.Store(false)
}

// wakeUp wakes the worker if it sleeps; receive loops call it after a commit.
func (w *worker) wakeUp() {
	if w.parked.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

func (w *worker) empty() bool {
	for _, r := range w.rings {
		if r.Len() > 0 {
			return false
		}
	}
	return true
}

// closeWindows snapshots the counters for every window that ended by t.
func (w *worker) closeWindows(t int64) {
	if w.win.due(t) {
		w.win.closeUntil(t, w.snap())
	}
}

func (w *worker) snap() workerSnap {
	s := workerSnap{served: w.served, servedBytes: w.servedBytes, backlog: w.cons.Backlog()}
	for _, n := range w.cons.Stats().Drops {
		s.consumerDrops += n
	}
	w.pub.backlog.Store(int64(s.backlog))
	return s
}

func (w *worker) publish() {
	w.pub.taken.Store(w.taken)
	w.pub.served.Store(w.served)
	w.pub.servedBytes.Store(w.servedBytes)
}
