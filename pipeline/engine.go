package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/nicrss"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// Errors of this package's constructors and runs.
var (
	// ErrConfig reports an engine or steering configuration that cannot run.
	ErrConfig = errors.New("invalid configuration")
	// ErrUnbalanced reports a run whose accounting does not add up: a bug,
	// never a property of the traffic.
	ErrUnbalanced = errors.New("accounting does not add up")
)

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
	DefaultTick = 10 * time.Microsecond
)

// Limits of EngineConfig: each bounds memory a typo in a flag would
// otherwise ask for (a ring holds RingSize+1 64-byte records per receive
// loop and worker).
const (
	MaxWorkers    = 1024
	MaxLoops      = 1024
	MaxRingSize   = 1 << 20
	MaxBatch      = 1 << 14
	MaxRingMemory = 4 << 30 // bytes of all rings together
	MinWindow     = time.Millisecond
)

// EngineConfig describes a run.
type EngineConfig struct {
	Source source.Source

	// Steering picks each packet's hash and worker; Steering.Workers is the
	// number of workers.
	Steering hash.SteerConfig

	// Flags and Gates configure each receive loop's dissector; Auto lets
	// auto mode open and close the gates.
	Flags dissect.Flags
	Gates dissect.Gates
	Auto  bool
	// Descent is the opt-in UDP tunnel descent of each dissector (the zero
	// value: none, the kernel's behaviour).
	Descent dissect.Descent

	// Plan is how the loops and workers share the processors. The zero
	// plan means PlanCPUs of the source and the workers, with nothing
	// pinned; a plan's WorkerCPUs must name one CPU per worker.
	Plan *CPUPlan

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

	// Consumer names each worker's consumer ("fifo", "fq", "fq_codel";
	// "" is fifo), configured by ConsumerConfig.
	Consumer       string
	ConsumerConfig queues.ConsumerConfig
	// NewConsumer, when set, makes worker w's consumer instead: for a
	// model that is not one of the named consumers.
	NewConsumer func(worker int) queues.Consumer
	// ServiceRate is how fast each worker serves its consumer.
	ServiceRate queues.Rate

	// Clock is the wall clock of a live run; nil means source.WallClock.
	// Virtual runs time everything by the arrival stamps of the source
	// instead (see Virtual).
	Clock source.Clock
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

	// QueueSpread says what put each frame on its receive queue, for the
	// report (runstats.RunConfig.QueueSpread).
	QueueSpread string

	// Sampler, when set, copies 1 in N hashed frames with their hash and
	// worker, for an offline check (see Sampler); nil samples nothing.
	Sampler *Sampler

	// Capture, when set, copies the first frames of the run with what the
	// receive loops found (see Capture); nil captures nothing.
	Capture *Capture

	// CheckDeviceHash compares, for every frame with a device hash (from
	// the XDP metadata), the device's hash with the steering's own
	// (RunStats.DeviceHash): a Toeplitz hash with CheckNIC's hash of the
	// frame (the NIC's own parse), the kernel's SipHash by partition.
	CheckDeviceHash bool
	// CheckNIC is the NIC model a Toeplitz device hash must equal, frame by
	// frame: the device's key, hash fields, header level and quirks. Nil
	// takes Steering's RSS key and symmetry, the default hash types and the
	// outer headers.
	CheckNIC *nicrss.Hasher
	// CheckDeviceQueue, when set, is the device's RSS indirection table:
	// every frame with a device hash h must have come in on
	// CheckDeviceQueue[h % len] (RunStats.DeviceQueue).
	CheckDeviceQueue []uint32
	// WithholdVLANTag dissects every frame as if the device had given no
	// VLAN tag in its metadata: a debugging aid that shows what a pipeline
	// blind to stripped tags computes (--check-device-hash then reports
	// the tagged frames as conflicts).
	WithholdVLANTag bool

	// Rebalance, with SteerRETA, rewrites the table from each interval's
	// per-bucket load (see RebalanceConfig); the zero value keeps it static.
	Rebalance RebalanceConfig
}

// Engine runs the receive side: one receive loop per receive queue, which
// dissects, hashes and steers every frame and hands a Record to the worker
// its hash selects, and the workers, which feed their consumers.
type Engine struct {
	cfg     EngineConfig
	plan    CPUPlan
	steer   *hash.Steering
	reta    *retaState    // nil unless SteerRETA
	reorder *reorderState // nil unless SteerRETA
	clock   source.Clock
	recv    []*receiver
	workers []*worker
	running atomic.Int32 // receive loops still running
	// stop is set when the run is to end early (its context is done or a
	// loop failed): every wait in the engine ends on it.
	stop atomic.Bool

	info     source.Info
	host     runstats.Host
	ran      atomic.Bool
	failOnce sync.Once
	err      error
	started  atomic.Pointer[time.Time]
}

// NewEngine checks cfg and sets up the loops, rings and consumers; Run runs
// them.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.Source == nil {
		return nil, fmt.Errorf("create engine: %w: no source", ErrConfig)
	}
	qs := cfg.Source.Queues()
	cfg = cfg.WithDefaults()
	if err := cfg.Check(len(qs)); err != nil {
		return nil, fmt.Errorf("create engine: %w", err)
	}
	steer, err := hash.NewSteering(cfg.Steering)
	if err != nil {
		return nil, fmt.Errorf("create engine: %w", err)
	}
	nw := steer.Workers()
	if cfg.NewConsumer == nil {
		// A virtual worker takes records in chunks that real timing cuts;
		// stamped with their arrivals, they make the same queues whatever
		// the cut, and a virtual run repeats to the last figure. Not with
		// several receive queues: a worker takes each queue's records in
		// turn, and the queues' loops run apart in real time, so a record
		// can reach its worker after later arrivals of another queue; its
		// arrival would count that skew as time in the queue.
		cfg.ConsumerConfig.StampArrival = cfg.Virtual && len(qs) == 1
		mk, err := cfg.ConsumerConfig.New(cfg.Consumer)
		if err != nil {
			return nil, fmt.Errorf("create engine: %w", err)
		}
		cfg.NewConsumer = func(int) queues.Consumer { return mk() }
	}
	if cfg.Clock == nil {
		cfg.Clock = source.WallClock()
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("create engine: %w: the source has no receive queue", ErrConfig)
	}
	info := cfg.Source.Info()
	var plan CPUPlan
	if cfg.Plan != nil {
		plan = *cfg.Plan
	} else {
		plan = PlanCPUs(CPUInput{Loops: len(qs), Workers: nw, KernelFed: info.KernelFed, RxMode: info.RxMode})
	}
	if len(plan.WorkerCPUs) > 0 && len(plan.WorkerCPUs) != nw {
		return nil, fmt.Errorf("create engine: %w: %d CPUs for %d workers (hint: give one CPU per worker)", ErrConfig, len(plan.WorkerCPUs), nw)
	}
	e := &Engine{cfg: cfg, plan: plan, steer: steer, clock: cfg.Clock, info: info, host: runstats.Host{
		Kernel: kernel.Release(), CPUModel: kernel.CPUModel(), CPUs: runtime.NumCPU(), Go: runtime.Version(),
	}}
	if err := e.setupRETA(&cfg, len(qs)); err != nil {
		return nil, fmt.Errorf("create engine: %w", err)
	}
	for w := range nw {
		cpu := -1
		if len(plan.WorkerCPUs) > 0 {
			cpu = plan.WorkerCPUs[w]
		}
		e.workers = append(e.workers, newWorker(e, w, cpu, len(qs)))
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
		e.stop.Store(true)
		_ = e.cfg.Source.Close()
	})
}

// Run runs the engine until every receive queue's source ends, ctx is done
// (it then closes the source) or a loop fails, drains the rings into the
// consumers, and reports. The report is returned also with an error, as far
// as the run got. An engine runs once.
func (e *Engine) Run(ctx context.Context) (*runstats.RunStats, error) {
	if !e.ran.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("run engine: %w: it has run already", ErrConfig)
	}
	now := time.Now()
	e.started.Store(&now)
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
	// On cancellation the source is stopped: a Stopper's receive loops
	// first take what it already holds (AF_XDP: the frames on the RX
	// rings), then end; another source is closed at once. Run waits for the
	// Close to finish (for AF_XDP: the XDP program detached) before it
	// returns.
	closed := make(chan struct{})
	stopper, gentle := e.cfg.Source.(source.Stopper)
	stop := context.AfterFunc(ctx, func() {
		e.stop.Store(true)
		if gentle {
			stopper.Stop()
		} else {
			_ = e.cfg.Source.Close()
		}
		close(closed)
	})
	receivers.Wait()
	if !stop() {
		<-closed
		if gentle {
			_ = e.cfg.Source.Close()
		}
	}
	workers.Wait()
	end := e.clock() - base
	stats := e.report(end)
	if err := e.reportSteering(stats); err != nil && e.err == nil {
		e.err = err
	}
	if e.err != nil {
		return stats, e.err
	}
	if !stats.Accounting.Balanced {
		return stats, fmt.Errorf("run engine: %w: %+v", ErrUnbalanced, stats.Accounting)
	}
	return stats, nil
}

// stopped reports whether the run is ending early: waits give up.
func (e *Engine) stopped() bool { return e.stop.Load() }

// producersDone reports whether every receive loop has committed its last
// record.
func (e *Engine) producersDone() bool { return e.running.Load() == 0 }

// Stats returns the run's statistics so far: every receive queue, worker
// and consumer, the dissector counters and the accounting, from the counters
// the loops publish once per batch and the consumers' own reports (read
// under each worker's lock, so a call costs a worker a short wait). It is
// the one view of the counters: the status line, the live metrics and the
// final report all read it. Safe to call from any goroutine, during and
// after Run; the windows and the duration are the final report's (Run).
func (e *Engine) Stats() *runstats.RunStats {
	st := &runstats.RunStats{SchemaVersion: runstats.SchemaVersion, Config: e.runConfig(), Host: e.host}
	if t := e.started.Load(); t != nil {
		st.Started = *t
	}
	nw := len(e.workers)
	st.Workers = make([]runstats.WorkerReport, nw)
	for w := range st.Workers {
		st.Workers[w] = runstats.WorkerReport{Worker: w, CPU: e.workers[w].cpu, Drops: map[runstats.DropReason]uint64{}}
		for _, reason := range runstats.WorkerDropReasons {
			st.Workers[w].Drops[reason] = 0
		}
	}
	for _, r := range e.recv {
		// The conversion stops compiling when the two types drift apart.
		qs := runstats.QueueStats(r.src.Stats())
		qs.Frames, qs.Bytes = r.pub.frames.Load(), r.pub.bytes.Load()
		qr := runstats.QueueReport{Queue: r.queue, Stats: qs, Steered: make([]uint64, nw), Drops: map[runstats.DropReason]uint64{}}
		for _, reason := range runstats.WorkerDropReasons {
			qr.Drops[reason] = 0
		}
		for w := range nw {
			qr.Steered[w] = r.pub.steered[w].Load()
			full, limited := r.pub.drops[w].full.Load(), r.pub.drops[w].limited.Load()
			st.Workers[w].Drops[runstats.DropRingFull] += full
			st.Workers[w].Drops[runstats.DropFlowLimit] += limited
			qr.Drops[runstats.DropRingFull] += full
			qr.Drops[runstats.DropFlowLimit] += limited
		}
		st.Queues = append(st.Queues, qr)
		r.pub.shapesMu.Lock()
		c := r.pub.shapes
		r.pub.shapesMu.Unlock()
		st.Shapes.Add(&c)
	}
	for w, wk := range e.workers {
		wk.mu.Lock()
		st.Workers[w].Packets, st.Workers[w].Bytes = wk.taken, wk.takenBytes
		st.Workers[w].Consumer = wk.cons.Report()
		wk.mu.Unlock()
	}
	st.Account()
	e.deviceStats(st)
	return st
}

// runConfig is how the run was set up, all of it known to the engine.
func (e *Engine) runConfig() runstats.RunConfig {
	cfg := &e.cfg
	c := runstats.RunConfig{
		Source:      e.info.Name,
		Hash:        cfg.Steering.Hash.String(),
		Steer:       cfg.Steering.Steer.String(),
		Consumer:    cfg.Consumer,
		Gates:       cfg.Gates.String(),
		CPUs:        slices.Clone(e.plan.WorkerCPUs),
		RingSize:    cfg.RingSize,
		FlowLimit:   cfg.FlowLimit,
		ServiceRate: cfg.ServiceRate.String(),
		RxMode:      string(e.info.RxMode),
		Workers:     len(e.workers),
		Clock:       "wall",
		Replay:      e.info.Replay,
		WindowNs:    int64(cfg.Window),
		CPUPlan:     e.plan.String(),
		QueueSpread: cfg.QueueSpread,
		XDPProgram:  e.info.XDPProgram,
	}
	if cfg.Auto {
		c.Gates = "auto"
	}
	if !cfg.Descent.IsZero() {
		c.Descent = cfg.Descent.String()
	}
	switch cfg.Steering.Hash {
	case hash.KindToeplitz:
		c.Symmetric = cfg.Steering.Symmetry.String()
	case hash.KindKernel, hash.KindAuto, hash.KindDevice:
		c.HashKey = cfg.Steering.Key.String()
	}
	if cfg.Consumer != "fifo" {
		c.Flows = cmp.Or(cfg.ConsumerConfig.Flows, queues.DefaultFlows)
	}
	if cfg.Virtual {
		c.Clock = "virtual"
	}
	return c
}

// report is the final statistics, after every loop has ended: Stats, the
// run's duration and its windows.
func (e *Engine) report(end int64) *runstats.RunStats {
	st := e.Stats()
	if e.cfg.Virtual {
		// A virtual run lasts from its origin to its last arrival.
		end = 0
		for _, r := range e.recv {
			end = max(end, r.last+1)
		}
	}
	st.DurationNs = end
	st.Windows, st.Config.WindowNs = e.windows(st.DurationNs)
	return st
}

// windows merges the loops' per-window counters into WindowReports, in
// windows of the longest length any loop's log reached (see MaxWindows), and
// returns that length.
func (e *Engine) windows(duration int64) ([]runstats.WindowReport, int64) {
	win := int64(e.cfg.Window)
	for _, r := range e.recv {
		win = max(win, r.win.length())
	}
	for _, w := range e.workers {
		win = max(win, w.win.length())
	}
	n := int((duration + win - 1) / win)
	for _, r := range e.recv {
		n = max(n, r.win.windows(win))
	}
	for _, w := range e.workers {
		n = max(n, w.win.windows(win))
	}
	n = min(n, MaxWindows)
	nq, nw := len(e.recv), len(e.workers)
	out := make([]runstats.WindowReport, n)
	for k := range out {
		wr := &out[k]
		wr.StartNs = int64(k) * win
		wr.QueuePackets, wr.QueueBytes = make([]uint64, nq), make([]uint64, nq)
		wr.WorkerPackets, wr.WorkerBytes = make([]uint64, nw), make([]uint64, nw)
		wr.WorkerBacklog, wr.WorkerDrops = make([]int, nw), make([]uint64, nw)
		wr.QueueKernelDrops = make([]uint64, nq)
		for q, r := range e.recv {
			cur, prev := r.win.at(k, win), r.win.at(k-1, win)
			wr.QueuePackets[q] = cur.frames - prev.frames
			wr.QueueBytes[q] = cur.bytes - prev.bytes
			wr.QueueKernelDrops[q] = cur.kernelDrops - prev.kernelDrops
			for w := range nw {
				wr.WorkerDrops[w] += cur.drop(w) - prev.drop(w)
			}
		}
		for w, wk := range e.workers {
			cur, prev := wk.win.at(k, win), wk.win.at(k-1, win)
			wr.WorkerPackets[w] = cur.served - prev.served
			wr.WorkerBytes[w] = cur.servedBytes - prev.servedBytes
			wr.WorkerBacklog[w] = cur.backlog
			wr.WorkerDrops[w] += cur.consumerDrops - prev.consumerDrops
		}
	}
	return out, win
}

// place puts the calling goroutine where the plan says: on cpu when it is
// >= 0 (a pinned worker), else on the plan's PlaceCPUs when it has any. A
// placed goroutine locks its OS thread and never unlocks it, so that the
// runtime ends the thread with the goroutine rather than reuse it.
func (e *Engine) place(cpu int) error {
	switch {
	case cpu >= 0:
		runtime.LockOSThread()
		return kernel.SetAffinity(cpu)
	case len(e.plan.PlaceCPUs) > 0:
		runtime.LockOSThread()
		return kernel.SetAffinityMask(e.plan.PlaceCPUs)
	}
	return nil
}
