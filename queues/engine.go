package queues

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/pipeline"
)

// Errors of this package's constructors and runs.
var (
	// ErrConfig reports an engine or steering configuration that cannot run.
	ErrConfig = errors.New("invalid configuration")
	// ErrUnbalanced reports a run whose accounting does not add up: a bug,
	// never a property of the traffic.
	ErrUnbalanced = errors.New("accounting does not add up")
)

// ConsumerFactory makes the consumer behind worker w.
type ConsumerFactory func(worker int) Consumer

// Consumers are the consumers by name, with their default parameters. Each
// consumer's file adds itself from its init.
var Consumers = map[string]ConsumerFactory{}

// ConsumerNames lists the registered consumers, sorted.
func ConsumerNames() []string { return slices.Sorted(maps.Keys(Consumers)) }

// ConsumerReporter is a Consumer that describes its flows at the end of a
// run; the engine uses its report in place of the bare ConsumerStats.
type ConsumerReporter interface {
	Report() ConsumerReport
}

// Defaults of EngineConfig.
const (
	// DefaultRingSize is netdev_max_backlog's default.
	DefaultRingSize = 1000
	// DefaultBatch is the frames a receive loop asks its source for at once,
	// NAPI's default weight.
	DefaultBatch = 64
	// DefaultWindow is the length of a WindowReport.
	DefaultWindow = time.Second
	// DefaultTick is how often, in virtual time, a worker with a limited
	// service rate serves its consumer.
	DefaultTick = 100 * time.Microsecond
)

// EngineConfig describes a run.
type EngineConfig struct {
	Source pipeline.Source

	// Steering picks each packet's hash and worker; Steering.Workers is the
	// number of workers.
	Steering SteerConfig

	// Flags and Gates configure each receive loop's dissector; Auto lets
	// auto mode open and close the gates.
	Flags dissect.Flags
	Gates dissect.Gates
	Auto  bool

	// CPUs, when not empty, pins worker w to CPUs[w]: its goroutine locks
	// its OS thread and calls PinThread(CPUs[w]) on it. There must be one
	// CPU per worker.
	CPUs      []int
	PinThread func(cpu int) error

	// RingSize is netdev_max_backlog for each receive loop -> worker ring,
	// default DefaultRingSize. Like the kernel's backlog, which takes a
	// packet while it holds no more than netdev_max_backlog
	// (enqueue_to_backlog), a ring holds up to RingSize+1 records.
	//
	// The kernel has one backlog per CPU that every receiving CPU appends
	// to under a lock; here each receive loop has a ring of its own to each
	// worker, so that no two goroutines write the same memory. With one
	// receive queue the two are the same; with Q queues a worker holds up to
	// Q×(RingSize+1) records, and a ring (like the flow limit) sees only its
	// own receive loop's share of the backlog.
	RingSize int
	// FlowLimit, when > 0, is the flow limit table length
	// (flow_limit_table_len) of each receive loop; see FlowLimit.
	FlowLimit int

	// Consumer makes each worker's consumer; nil means fifo.
	Consumer ConsumerFactory
	// ServiceRate is how fast each worker serves its consumer.
	ServiceRate Rate

	// Clock is the wall clock of a live run; nil means pipeline.WallClock.
	// Virtual runs time everything by the arrival stamps of the source
	// instead (see Virtual).
	Clock pipeline.Clock
	// Virtual runs the model on the source's arrival stamps rather than the
	// wall clock: for files and synthetic traffic replayed faster than
	// real time. The rings are then lossless (a full ring makes its receive
	// loop wait instead of dropping), and a worker serves its consumer at
	// the service rate at every Tick of virtual time. With one receive
	// queue and no flow limit, a virtual run is deterministic: the same
	// input gives the same report. (With several queues, a worker takes the
	// queues' records in the order they reach it; the flow limit reads ring
	// occupancy, which depends on real timing.)
	Virtual bool
	Tick    time.Duration

	// Window is the length of each WindowReport; default DefaultWindow.
	Window time.Duration
	// Batch is the frames asked of the source per Receive; default
	// DefaultBatch.
	Batch int

	// Sampler, when set, copies 1 in N hashed frames with their hash and
	// worker, for an offline check (see Sampler); nil samples nothing.
	Sampler *Sampler
}

// Engine runs the receive side: one receive loop per receive queue, which
// dissects, hashes and steers every frame and hands a Record to the worker
// its hash selects, and the workers, which feed their consumers.
type Engine struct {
	cfg     EngineConfig
	steer   *Steering
	clock   pipeline.Clock
	recv    []*receiver
	workers []*worker
	running atomic.Int32 // receive loops still running

	ran      atomic.Bool
	failOnce sync.Once
	err      error
	started  time.Time
}

// NewEngine checks cfg and sets up the loops, rings and consumers; Run runs
// them.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.Source == nil {
		return nil, fmt.Errorf("create engine: %w: no source", ErrConfig)
	}
	steer, err := NewSteering(cfg.Steering)
	if err != nil {
		return nil, fmt.Errorf("create engine: %w", err)
	}
	nw := steer.Workers()
	if len(cfg.CPUs) > 0 {
		if len(cfg.CPUs) != nw {
			return nil, fmt.Errorf("create engine: %w: %d CPUs for %d workers (hint: give one CPU per worker)", ErrConfig, len(cfg.CPUs), nw)
		}
		if cfg.PinThread == nil {
			return nil, fmt.Errorf("create engine: %w: CPUs given without PinThread", ErrConfig)
		}
	}
	if cfg.RingSize <= 0 {
		cfg.RingSize = DefaultRingSize
	}
	if cfg.Consumer == nil {
		cfg.Consumer = Consumers["fifo"]
	}
	if cfg.Clock == nil {
		cfg.Clock = pipeline.WallClock()
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	qs := cfg.Source.Queues()
	if len(qs) == 0 {
		return nil, fmt.Errorf("create engine: %w: the source has no receive queue", ErrConfig)
	}
	e := &Engine{cfg: cfg, steer: steer, clock: cfg.Clock}
	for w := range nw {
		cpu := -1
		if len(cfg.CPUs) > 0 {
			cpu = cfg.CPUs[w]
		}
		e.workers = append(e.workers, newWorker(e, w, cpu, busyProcessors(cfg.Source, len(qs)), len(qs)))
	}
	for i, q := range qs {
		e.recv = append(e.recv, newReceiver(e, i, q))
	}
	return e, nil
}

// fail records the run's first error and stops the sources, so that every
// loop drains and ends.
func (e *Engine) fail(err error) {
	e.failOnce.Do(func() {
		e.err = err
		_ = e.cfg.Source.Close()
	})
}

// Run runs the engine until every receive queue's source ends, ctx is done
// (it then closes the source) or a loop fails, drains the rings into the
// consumers, and reports. The report is returned also with an error, as far
// as the run got. An engine runs once.
func (e *Engine) Run(ctx context.Context) (*RunStats, error) {
	if !e.ran.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("run engine: %w: it has run already", ErrConfig)
	}
	e.started = time.Now()
	base := e.clock()
	for _, r := range e.recv {
		r.base = base
	}
	var workers, receivers sync.WaitGroup
	// Before any worker starts: a worker ends when no receive loop runs.
	e.running.Store(int32(len(e.recv)))
	for _, w := range e.workers {
		w.base = base
		workers.Go(w.run)
	}
	for _, r := range e.recv {
		receivers.Go(func() {
			if err := r.run(); err != nil {
				e.fail(err)
			}
		})
	}
	// On cancellation the source is closed; Run waits for that Close to finish
	// (for AF_XDP: the XDP program detached) before it returns.
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { _ = e.cfg.Source.Close(); close(closed) })
	receivers.Wait()
	if !stop() {
		<-closed
	}
	workers.Wait()
	end := e.clock() - base
	stats := e.report(end)
	if e.err != nil {
		return stats, e.err
	}
	if !stats.Accounting.Balanced {
		return stats, fmt.Errorf("run engine: %w: %+v", ErrUnbalanced, stats.Accounting)
	}
	return stats, nil
}

// producersDone reports whether every receive loop has committed its last
// record.
func (e *Engine) producersDone() bool { return e.running.Load() == 0 }

// Snapshot is a live view of a running engine's counters, for a status line.
type Snapshot struct {
	Queues  []QueueSnapshot
	Workers []WorkerSnapshot
}

// QueueSnapshot is one receive queue so far.
type QueueSnapshot struct {
	Queue       int
	Frames      uint64 // taken off the source
	Bytes       uint64 // their wire bytes
	KernelDrops uint64 // dropped before the receive loop (AF_XDP)
}

// WorkerSnapshot is one worker so far.
type WorkerSnapshot struct {
	Packets uint64 // taken off the rings
	Served  uint64 // served by the consumer
	Bytes   uint64 // wire bytes served
	Drops   uint64 // ring full and flow limit drops, all receive loops together
	Backlog int    // consumer backlog at the last window or drain
}

// Snapshot reads the counters the loops publish once per batch; it is safe
// to call from any goroutine during and after Run.
func (e *Engine) Snapshot() Snapshot {
	s := Snapshot{Queues: make([]QueueSnapshot, len(e.recv)), Workers: make([]WorkerSnapshot, len(e.workers))}
	for i, r := range e.recv {
		st := r.src.Stats()
		s.Queues[i] = QueueSnapshot{Queue: r.src.Queue(), Frames: r.pub.frames.Load(), Bytes: r.pub.bytes.Load(), KernelDrops: st.KernelDrops()}
		for w := range e.workers {
			s.Workers[w].Drops += r.pub.drops[w].full.Load() + r.pub.drops[w].limited.Load()
		}
	}
	for w, wk := range e.workers {
		s.Workers[w].Packets = wk.pub.taken.Load()
		s.Workers[w].Served = wk.pub.served.Load()
		s.Workers[w].Bytes = wk.pub.servedBytes.Load()
		s.Workers[w].Backlog = int(wk.pub.backlog.Load())
	}
	return s
}

// Drop reasons of the WorkerReport and their Accounting stages.
const (
	dropRingFull  = "ring_full"
	dropFlowLimit = "flow_limit"
)

// report assembles the run's statistics after every loop has ended.
func (e *Engine) report(end int64) *RunStats {
	nw := len(e.workers)
	st := &RunStats{
		SchemaVersion: SchemaVersion,
		Started:       e.started,
		Config: RunConfig{
			Hash:        e.cfg.Steering.Hash.String(),
			Steer:       e.cfg.Steering.Steer.String(),
			Gates:       e.cfg.Gates.String(),
			CPUs:        slices.Clone(e.cfg.CPUs),
			RingSize:    e.cfg.RingSize,
			FlowLimit:   e.cfg.FlowLimit,
			ServiceRate: e.cfg.ServiceRate.String(),
			Workers:     nw,
			Clock:       "wall",
			WindowNs:    int64(e.cfg.Window),
		},
		Accounting: Accounting{Dropped: map[string]uint64{}, KernelDrops: map[string]uint64{}},
	}
	if e.cfg.Auto {
		st.Config.Gates = "auto"
	}
	if e.cfg.Steering.Hash == HashToeplitz {
		st.Config.Symmetric = e.cfg.Steering.Symmetry.String()
	}
	if e.cfg.Virtual {
		st.Config.Clock = "virtual"
		// A virtual run lasts from its origin to its last arrival.
		end = 0
		for _, r := range e.recv {
			end = max(end, r.last+1)
		}
	}
	st.DurationNs = end

	acc := &st.Accounting
	workerDrops := make([]map[string]uint64, nw)
	for w := range workerDrops {
		workerDrops[w] = map[string]uint64{dropRingFull: 0, dropFlowLimit: 0}
	}
	for _, r := range e.recv {
		qs := r.src.Stats()
		qr := QueueReport{Queue: r.src.Queue(), Stats: qs, Steered: slices.Clone(r.steered)}
		st.Queues = append(st.Queues, qr)
		c := r.d.Counters()
		st.Shapes.Add(&c)
		acc.Received += r.frames
		acc.KernelDrops["rx_dropped"] += qs.RxDropped
		acc.KernelDrops["rx_invalid_descs"] += qs.RxInvalidDescs
		acc.KernelDrops["rx_ring_full"] += qs.RxRingFull
		for w := range r.out {
			workerDrops[w][dropRingFull] += r.out[w].full
			workerDrops[w][dropFlowLimit] += r.out[w].limited
		}
	}
	offeredOK := true
	for w, wk := range e.workers {
		cr := wk.consumerReport()
		wr := WorkerReport{Worker: w, CPU: wk.cpu, Packets: wk.taken, Bytes: wk.takenBytes, Drops: workerDrops[w], Consumer: cr}
		st.Workers = append(st.Workers, wr)
		acc.Dropped["ring/full"] += workerDrops[w][dropRingFull]
		acc.Dropped["worker/flow_limit"] += workerDrops[w][dropFlowLimit]
		acc.Processed += cr.Dequeued + uint64(cr.Backlog)
		held := cr.Dequeued + uint64(cr.Backlog)
		for reason, n := range cr.Drops {
			acc.Dropped["consumer/"+reason] += n
			held += n
		}
		// What the consumer reports must account for every record it was
		// offered, or the totals below would balance by accident.
		offeredOK = offeredOK && held == wk.taken
	}
	var dropped uint64
	for _, n := range acc.Dropped {
		dropped += n
	}
	acc.Balanced = offeredOK && acc.Received == acc.Processed+dropped
	st.Windows = e.windows(st.DurationNs)
	return st
}

// windows merges the loops' per-window counters into WindowReports.
func (e *Engine) windows(duration int64) []WindowReport {
	win := int64(e.cfg.Window)
	n := int((duration + win - 1) / win)
	for _, r := range e.recv {
		n = max(n, len(r.snaps))
	}
	for _, w := range e.workers {
		n = max(n, len(w.snaps))
	}
	nq, nw := len(e.recv), len(e.workers)
	out := make([]WindowReport, n)
	for k := range out {
		wr := &out[k]
		wr.StartNs = int64(k) * win
		wr.QueuePackets, wr.QueueBytes = make([]uint64, nq), make([]uint64, nq)
		wr.WorkerPackets, wr.WorkerBytes = make([]uint64, nw), make([]uint64, nw)
		wr.WorkerBacklog, wr.WorkerDrops = make([]int, nw), make([]uint64, nw)
		for q, r := range e.recv {
			cur, prev := at(r.snaps, k), at(r.snaps, k-1)
			wr.QueuePackets[q] = cur.frames - prev.frames
			wr.QueueBytes[q] = cur.bytes - prev.bytes
			for w := range nw {
				wr.WorkerDrops[w] += cur.drop(w) - prev.drop(w)
			}
		}
		for w, wk := range e.workers {
			cur, prev := at(wk.snaps, k), at(wk.snaps, k-1)
			wr.WorkerPackets[w] = cur.served - prev.served
			wr.WorkerBytes[w] = cur.servedBytes - prev.servedBytes
			wr.WorkerBacklog[w] = cur.backlog
			wr.WorkerDrops[w] += cur.consumerDrops - prev.consumerDrops
		}
	}
	return out
}

// snapshot is a loop's cumulative counters at the end of a window.
type snapshot interface{ recvSnap | workerSnap }

// at returns snaps[k], the last snapshot for k past the end (the counters
// stopped), and the zero snapshot for k < 0.
func at[S snapshot](snaps []S, k int) S {
	var zero S
	switch {
	case k < 0 || len(snaps) == 0:
		return zero
	case k >= len(snaps):
		return snaps[len(snaps)-1]
	}
	return snaps[k]
}

// KernelFed is implemented by sources whose frames the kernel receives on this
// machine's processors (AF_XDP: the driver's or veth's NAPI work and the XDP
// redirect run in softirq context before a frame reaches its ring).
type KernelFed interface{ KernelFed() bool }

// busyProcessors is how many processors the receive side keeps busy: one per
// receive loop, and for a kernel-fed source one more per queue for the kernel's
// own receive work. Workers yield between polls only when GOMAXPROCS exceeds
// it: measured on the 2-core machine with AF_XDP on one veth queue
// (BenchmarkAFXDPPipeline/queues=1/rx=poll), yielding workers reached 66-71%
// of the bare receive loop's rate and sleeping ones 65-86% (median ~75%).
func busyProcessors(src pipeline.Source, loops int) int {
	if k, ok := src.(KernelFed); ok && k.KernelFed() {
		return 2 * loops
	}
	return loops
}
