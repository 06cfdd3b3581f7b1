package pipeline

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
)

// receiver is one receive queue's loop, run to completion like the kernel's
// RPS: it takes a batch of frames off its source, dissects and hashes each
// frame once, in place, and writes the Record straight into a slot of the ring
// to the worker the hash selects. Nothing downstream parses the frame again.
// A batch whose frames' device metadata changes nothing (no VLAN tag to
// dissect with, no device hash to take) is dissected a batch at a time and
// its keys hashed together (Steering.HashBatch), which overlaps the SipHashes
// of independent frames.
type receiver struct {
	e       *Engine
	index   int // position among the receive loops: the ring index in each worker
	src     source.QueueSource
	queue   int
	d       *dissect.Dissector
	steer   *hash.Steering
	fl      *queues.FlowLimit // nil without a flow limit
	buckets *recvBuckets      // nil unless SteerRETA
	reorder *reorderState     // nil unless SteerRETA
	// maxBacklog is netdev_max_backlog: the flow limit's reference.
	maxBacklog int
	// help steps a worker whose ring holds this many records (CPUPlan).
	ownStepAt, otherStepAt int
	batch                  *source.Batch
	// Per frame of the batch: its keys, and for a batch without metadata
	// its path, hash and l4 as dissectBatch left them.
	keys   []dissect.FlowKeys
	paths  []dissect.Path
	hashes []uint32
	l4     []bool
	out    []outRing // per worker

	virtual bool
	base    int64 // the engine clock at the start of the run
	last    int64 // the last arrival, on the run's clock
	// mark is, on the virtual clock, how far the loop has committed:
	// every record that arrived before it is in the rings (doneClock once
	// the loop has ended). Idle workers serve up to it (worker.catchUp).
	mark atomic.Int64

	frames, bytes uint64
	steered       []uint64 // per worker: records committed to its ring
	dev           deviceState

	// The cumulative counters at the end of each window.
	win windowLog[recvSnap]

	pub recvCounters
}

// outRing is the receive loop's side of its ring to one worker.
type outRing struct {
	ring *queues.Ring
	w    *worker
	free int // slots free at the batch's start, less those committed since
	n    int // slots filled in this batch, not yet committed
	// Drops of records for this worker.
	full    uint64 // the ring was full: the kernel's backlog drop
	limited uint64 // the flow limit dropped it
}

// recvCounters are the receive loop's counters as it publishes them, once
// per batch, for Engine.Stats.
type recvCounters struct {
	frames, bytes atomic.Uint64
	drops         []struct{ full, limited atomic.Uint64 }
	steered       []atomic.Uint64 // per worker
	// shapes is a copy of the loop's dissector counters, for live metrics. The
	// loop copies them under the mutex once per batch (about 200 bytes), not
	// per frame.
	shapesMu sync.Mutex
	shapes   dissect.Counters
	dev      devicePub
}

// recvSnap is a receive loop's cumulative counters at a window's end.
type recvSnap struct {
	frames, bytes uint64
	kernelDrops   uint64   // the source's, before the loop
	drops         []uint64 // per worker, ring full and flow limit together
}

// drop is the drops of records for worker w, 0 in the zero snapshot.
func (s recvSnap) drop(w int) uint64 {
	if s.drops == nil {
		return 0
	}
	return s.drops[w]
}

func newReceiver(e *Engine, index int, src source.QueueSource) *receiver {
	cfg := &e.cfg
	r := &receiver{
		e: e, index: index, src: src, queue: src.Queue(),
		d:          dissect.NewDissector(cfg.Flags, cfg.Gates),
		steer:      e.steer,
		batch:      source.NewBatch(cfg.Batch),
		virtual:    cfg.Virtual,
		win:        newWindowLog[recvSnap](int64(cfg.Window)),
		steered:    make([]uint64, len(e.workers)),
		maxBacklog: cfg.RingSize,
		dev:        newDeviceState(cfg, e.steer, src.Queue()),
	}
	capacity := float64(e.workers[0].rings[index].Cap())
	r.ownStepAt, r.otherStepAt = int(capacity*e.plan.OwnStepAt), int(capacity*e.plan.OtherStepAt)
	r.grow(cfg.Batch)
	if cfg.Auto {
		r.d.EnableAuto(dissect.AutoConfig{})
	}
	r.d.SetDescent(cfg.Descent)
	if cfg.FlowLimit > 0 {
		r.fl = queues.NewFlowLimit(cfg.FlowLimit)
	}
	if e.reta != nil {
		r.buckets = newRecvBuckets(e.reta)
		r.reorder = e.reorder
	}
	r.pub.drops = make([]struct{ full, limited atomic.Uint64 }, len(e.workers))
	r.pub.steered = make([]atomic.Uint64, len(e.workers))
	for _, wk := range e.workers {
		r.out = append(r.out, outRing{ring: wk.rings[index], w: wk})
	}
	return r
}

// run receives until the source ends or is closed, then tells the workers.
func (r *receiver) run() error {
	defer r.finish()
	if err := r.e.place(-1); err != nil {
		return fmt.Errorf("start receive loop %d: %w", r.index, err)
	}
	for {
		err := r.src.Receive(r.batch)
		if r.batch.Len() > 0 {
			r.process(r.batch)
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.Is(err, source.ErrClosed):
			return nil
		default:
			return fmt.Errorf("receive on queue %d: %w", r.queue, err)
		}
	}
}

// finish closes the last window, publishes, and counts the loop out; the
// workers drain its rings before they end.
func (r *receiver) finish() {
	r.win.push(r.snap())
	r.publish()
	if r.buckets != nil {
		r.buckets.finish()
		r.reorder.loopEnded(r.index)
	}
	r.mark.Store(doneClock)
	r.e.running.Add(-1)
	for _, o := range r.out {
		o.w.wakeUp()
	}
}

// process runs one batch: per frame dissect, hash, steer, and fill a ring
// slot; per batch one atomic load (Free) and one store (Commit) per worker.
// It allocates nothing and makes no interface call per frame.
func (r *receiver) process(b *source.Batch) {
	for w := range r.out {
		o := &r.out[w]
		o.free, o.n = o.ring.Free(), 0
	}
	// A live run stamps the batch with the engine's clock when it comes off
	// the source, as the kernel stamps an skb when the driver hands it up;
	// the sources' own clocks have other origins.
	now := int64(0)
	if !r.virtual {
		now = r.e.clock() - r.base
		r.closeWindows(now)
	}
	if r.buckets != nil {
		r.reorder.batch(r.index, true)
		r.buckets.batch(now)
	}
	// The batch's slices, resliced to its length, and what stays the same
	// for the whole batch, in locals: the loop then carries no bounds checks
	// on them and reloads nothing through r.
	frames := b.Frames
	n := len(frames)
	plain := r.dev.plain && r.dev.ownOnly(b.Meta, r.steer)
	var (
		paths  []dissect.Path
		hashes []uint32
		l4s    []bool
	)
	if plain {
		r.dissectBatch(b)
		paths, hashes, l4s = r.paths[:n], r.hashes[:n], r.l4[:n]
		r.dev.sources[r.dev.own] += uint64(n) // every plain frame's hash is ours
	} else {
		r.grow(n)
	}
	keysOf, wireLens := r.keys[:n], b.WireLen[:n]
	stamped := len(b.Meta) > 0 && !r.virtual
	own, sampler, capture, fl := r.dev.own, r.e.cfg.Sampler, r.e.cfg.Capture, r.fl
	for i, frame := range frames {
		arrival := now
		if r.virtual {
			// Arrivals never go back (captures may): the worker's clock is
			// the latest arrival.
			arrival = max(b.Arrival[i], r.last)
			r.closeWindows(arrival)
			if r.buckets != nil && arrival >= r.buckets.nextEnd {
				r.buckets.cross(arrival)
			}
		}
		if stamped && i < len(b.Meta) && b.Meta[i].HasTimestamp() {
			arrival = r.dev.arrival(b.Meta[i].Timestamp, now, r.last)
		}
		r.last = arrival
		wireLen := wireLens[i]
		r.frames++
		r.bytes += uint64(wireLen)

		var (
			path dissect.Path
			h    uint32
			l4   bool
			hsrc = own
		)
		keys := &keysOf[i]
		if plain {
			path, h, l4 = paths[i], hashes[i], l4s[i]
		} else {
			meta := &r.dev.none
			if len(b.Meta) > i {
				meta = &b.Meta[i]
			}
			path, h, l4, hsrc = r.hashMeta(frame, meta, keys)
			r.dev.sources[hsrc]++
		}
		var w int
		if r.buckets != nil {
			w = r.buckets.steer(r.steer, h, r.queue, wireLen)
		} else {
			w = r.steer.Worker(h, r.queue)
		}
		if sampler != nil {
			sampler.offer(r.index, frame, r.dev.tag(b, i), h, w, r.queue)
		}
		if capture != nil {
			r.captureFrame(capture, b, i, arrival, h, hsrc, l4, path, w)
		}
		o := &r.out[w]
		if o.n >= o.free {
			if !r.virtual {
				o.full++
				continue
			}
			if !r.waitForRoom(o) {
				o.full++ // the run stops: a drop, as a live ring's
				continue
			}
		}
		// The backlog as the kernel reads it: what the worker had not taken
		// at the batch's start, plus this batch's records so far.
		if fl != nil && fl.Limited(h, o.ring.Cap()-o.free+o.n, r.maxBacklog) {
			o.limited++
			continue
		}
		rec := o.ring.Slot(o.n)
		o.n++
		rec.FromKeys(keys)
		rec.Hash, rec.L4, rec.Path, rec.HashSource = h, l4, path, hsrc
		rec.Len, rec.Arrival, rec.Queue = uint32(wireLen), arrival, uint16(r.queue)
	}
	behind := r.commit()
	if r.reorder != nil {
		r.reorder.batch(r.index, false)
	}
	r.publish()
	if helped := r.help(); behind && !helped {
		// A worker lags, and this loop could not step it. With fewer
		// cores than loops, it may be waiting for this one's processor:
		// a woken worker runs only when its waker yields (or after the
		// scheduler's 10 ms preemption, when the ring has long
		// overflowed). On a machine with a core per loop the yield
		// returns at once.
		runtime.Gosched()
	}
}

// dissectBatch dissects every frame of b into r.keys and r.paths, then
// hashes their keys together into r.hashes and r.l4.
func (r *receiver) dissectBatch(b *source.Batch) {
	n := len(b.Frames)
	r.grow(n)
	keys, paths := r.keys[:n], r.paths[:n]
	for i, frame := range b.Frames {
		_, paths[i] = r.d.DissectFrame(&keys[i], frame)
	}
	r.steer.HashBatch(keys, r.hashes[:n], r.l4[:n])
}

// grow makes the per-frame slices hold at least n frames. Sources fill a
// batch up to the capacity NewBatch gave it, so this allocates only in
// newReceiver.
func (r *receiver) grow(n int) {
	if n <= len(r.keys) {
		return
	}
	r.keys = make([]dissect.FlowKeys, n)
	r.paths = make([]dissect.Path, n)
	r.hashes = make([]uint32, n)
	r.l4 = make([]bool, n)
}

// help steps shared workers (worker.shared) on this loop's goroutine: each of
// the workers this loop owns (their index modulo the number of loops is this
// loop's) once its ring from this loop is CPUPlan.OwnStepAt full, and any
// other once that ring is OtherStepAt full, so that no worker waits on a busy
// owner. It returns whether it stepped one.
//
// With a Go processor per receive loop and none to spare, a worker's
// goroutine runs only when a loop yields its processor. Stepping the worker
// here, as the kernel's RPS processes its own CPU's backlog in the same
// softirq, saves the two goroutine switches, takes this loop's records while
// its core still holds them, and keeps each consumer's state mostly on one
// core (BenchmarkPipelineConsumers measures it; docs/pipeline.md has the
// figures).
func (r *receiver) help() (helped bool) {
	loops := len(r.e.recv)
	for w := range r.out {
		o := &r.out[w]
		queued, limit := o.ring.Cap()-o.free, r.otherStepAt
		if w%loops == r.index {
			limit = r.ownStepAt
		}
		if queued < limit || !o.w.shared || !o.w.mu.TryLock() {
			continue
		}
		o.w.stepsByLoops += uint64(o.w.step())
		o.w.mu.Unlock()
		helped = true
	}
	return helped
}

// commit publishes the batch's records to every worker and wakes the workers
// that sleep. It returns whether a ring is now more than half full.
func (r *receiver) commit() (behind bool) {
	if r.reorder != nil {
		r.reorder.arrive(r.index, r.buckets.gen, r.out)
	}
	for w := range r.out {
		o := &r.out[w]
		if o.n == 0 {
			continue
		}
		o.ring.Commit(o.n)
		r.steered[w] += uint64(o.n)
		o.free -= o.n
		o.n = 0
		o.w.wakeUp()
		behind = behind || o.free < o.ring.Cap()/2
	}
	if r.virtual {
		// The frame being steered, if any, arrived at last: no earlier.
		r.mark.Store(r.last)
	}
	return behind
}

// waitForRoom is a virtual run's lossless enqueue: it commits what the batch
// has so far (the worker may be waiting for it) and waits until o's worker
// has taken records off the full ring. It returns false, with no room, when
// the run stops first. The worker may wait in its hold, but never for a
// receive loop (see hold.go), so this ends.
func (r *receiver) waitForRoom(o *outRing) bool {
	r.commit()
	for spins := 0; ; spins++ {
		if o.free = o.ring.Free(); o.free > 0 {
			return true
		}
		if r.e.stopped() {
			return false
		}
		o.w.wakeUp()
		if spins > 64 {
			runtime.Gosched()
		}
	}
}

// closeWindows snapshots the counters for every window that ended by t.
func (r *receiver) closeWindows(t int64) {
	if r.win.due(t) {
		r.win.closeUntil(t, r.snap())
	}
}

func (r *receiver) snap() recvSnap {
	s := recvSnap{frames: r.frames, bytes: r.bytes, kernelDrops: r.src.Stats().LostBeforeLoop(), drops: make([]uint64, len(r.out))}
	for w, o := range r.out {
		s.drops[w] = o.full + o.limited
	}
	return s
}

// publish stores the counters for Engine.Snapshot: plain stores by their one
// writer, no read-modify-write.
func (r *receiver) publish() {
	r.pub.frames.Store(r.frames)
	r.pub.bytes.Store(r.bytes)
	for w, o := range r.out {
		r.pub.drops[w].full.Store(o.full)
		r.pub.drops[w].limited.Store(o.limited)
		r.pub.steered[w].Store(r.steered[w])
	}
	r.publishDevice()
	c := r.d.Counters()
	r.pub.shapesMu.Lock()
	r.pub.shapes = c
	r.pub.shapesMu.Unlock()
}

// watermark is the virtual clock up to which every receive loop has
// committed its records: the earliest of their marks, or the last arrival
// once every loop has ended.
func (e *Engine) watermark() int64 {
	m := int64(doneClock)
	for _, r := range e.recv {
		m = min(m, r.mark.Load())
	}
	if m == doneClock {
		// Every loop stored its mark after its last arrival.
		return e.lastArrival()
	}
	return m
}

// lastArrival is a virtual run's last arrival, once every loop has ended.
func (e *Engine) lastArrival() int64 {
	var t int64
	for _, r := range e.recv {
		t = max(t, r.last)
	}
	return t
}
