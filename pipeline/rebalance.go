package pipeline

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/rebalance"
	"github.com/xdphash/xdphash/runstats"
)

// RebalanceConfig turns on load-aware steering for a SteerRETA run: at the
// end of each interval the workers' load over the interval (packets per
// bucket) goes to a rebalance.Rebalancer, and the table it publishes steers
// the next one. Interval 0 keeps the table static.
type RebalanceConfig struct {
	Interval  time.Duration
	Threshold float64 // rebalance.Config.Threshold; 0 takes its default
	Dwell     int     // rebalance.Config.Dwell, in intervals
	// Hold makes the new worker of a moved bucket hold the bucket's
	// packets until the old worker has finished every packet of it it
	// had (RSS++'s remedy for reordering; hold.go).
	Hold bool
}

// DefaultRebalanceInterval is RSS++'s period.
const DefaultRebalanceInterval = 100 * time.Millisecond

// MinRebalanceInterval bounds RebalanceConfig.Interval from below: a
// rebalancing costs up to a few hundred microseconds at 2048 buckets.
const MinRebalanceInterval = time.Millisecond

// RETASizes are the indirection table sizes a run may count buckets of:
// many NICs' 128, and the larger tables of others.
var RETASizes = []int{128, 512, 2048}

// bucketLoad is what went through one bucket.
type bucketLoad struct{ packets, bytes uint64 }

// addLoads adds b's loads to a's, bucket by bucket, and returns a.
func addLoads(a, b []bucketLoad) []bucketLoad {
	for i := range a {
		a[i].packets += b[i].packets
		a[i].bytes += b[i].bytes
	}
	return a
}

// The locks of a SteerRETA run, in their order: a goroutine that holds one
// takes only locks further down the list, never one above it.
//
//  1. worker.mu: held by whoever steps a worker (its goroutine, or a
//     receive loop helping it with TryLock), while the worker's consumer
//     serves and its hold decides (hold.go);
//  2. retaState.mu: held by a receive loop handing over a window's or an
//     interval's counts, and by the loop that ends an interval while it
//     rebalances (never while holding a worker.mu: a loop hands over
//     counts between the batch's steps, not inside one);
//  3. reorderState.mu: the reordering count and the hold's state, taken
//     by receive loops at each commit, by workers for what their consumers
//     finished, and under retaState.mu when a new table moves buckets, so
//     that the count sees the move before any packet steered by the new
//     table is committed or served.
//
// Each holder of reorderState.mu takes no other lock. A virtual worker
// that waits for an old worker's clock (holdCheck) holds its own worker.mu
// and no other lock while it waits; hold.go says why the wait ends.
// Engine.Stats takes each worker.mu alone, and the leaf locks (a receive
// loop's shapesMu, the device-hash samplesMu) are taken last and alone.

// retaState is a SteerRETA run's table and its per-bucket load: the receive
// loops steer by the table in live, count per bucket in arrays of their own,
// and hand each window's and interval's counts here, under mu, once per
// window and interval; the last loop to end an interval rebalances.
type retaState struct {
	live     *hash.LiveRETA
	initial  []uint16
	size     int
	window   int64
	interval int64 // the rebalancing interval, 0 when static

	mu sync.Mutex
	// bucketLog holds, per window, the load of each bucket (entries of
	// size loads), windows of bucketLog.span from 0.
	bucketLog halvingLog[[]bucketLoad]
	// The rebalancer and the interval it is collecting: the packets per
	// bucket so far, and how many loops have ended it.
	rebalancer   *rebalance.Rebalancer
	cfg          RebalanceConfig
	collecting   int64 // the index of the interval being collected
	intervalLoad []uint64
	reported     int // loops that ended the interval being collected
	active       int // loops still running
	noLoad       []uint64
	report       runstats.RebalanceReport
	intervals    halvingLog[runstats.IntervalReport] // the report's Intervals
	// reorder counts reordering (nil until the engine sets it): every
	// table that moves a bucket is handed to it, before and after, as a
	// new generation.
	reorder *reorderState
	// generation numbers the tables that moved a bucket; the receive loops
	// read it before the table (recvBuckets.load).
	generation atomic.Uint64
	// tableBefore and tableAfter are scratch for the table's entries
	// around a rebalancing.
	tableBefore, tableAfter []uint16
	err                     error
}

func newRETAState(cfg *EngineConfig, loops int) (*retaState, error) {
	sc := cfg.Steering
	size := sc.RETASize
	if size == 0 {
		size = hash.DefaultRETASize
	}
	var t *hash.RETA
	var err error
	if sc.RETATable != nil {
		// A device's own table (run --reta-table device), of its size:
		// NewRETAFromTable checks it.
		size = len(sc.RETATable)
		t, err = hash.NewRETAFromTable(sc.RETATable, sc.Workers)
	} else {
		if !slices.Contains(RETASizes, size) {
			return nil, fmt.Errorf("%w: RETA size %d, want one of %v", ErrConfig, size, RETASizes)
		}
		t, err = hash.NewRETA(size, sc.Workers, sc.RETAWeights)
	}
	if err != nil {
		return nil, err
	}
	st := &retaState{
		live: hash.NewLiveRETA(t), size: size, window: int64(cfg.Window),
		bucketLog: newHalvingLog(min(MaxWindows, runstats.MaxBucketCells/size), int64(cfg.Window), addLoads),
		active:    loops, cfg: cfg.Rebalance,
	}
	st.initial = t.AppendEntries(nil)
	if cfg.Rebalance.Interval == 0 {
		return st, nil
	}
	if cfg.Rebalance.Interval < MinRebalanceInterval {
		return nil, fmt.Errorf("%w: rebalancing interval %s, want at least %s", ErrConfig, cfg.Rebalance.Interval, MinRebalanceInterval)
	}
	if st.rebalancer, err = rebalance.New(rebalance.Config{Size: size, Workers: sc.Workers, Threshold: cfg.Rebalance.Threshold, Dwell: cfg.Rebalance.Dwell}); err != nil {
		return nil, err
	}
	st.interval = int64(cfg.Rebalance.Interval)
	st.intervalLoad, st.noLoad = make([]uint64, size), make([]uint64, size)
	st.tableBefore, st.tableAfter = make([]uint16, 0, size), make([]uint16, 0, size)
	rc := st.rebalancer.Config()
	st.report = runstats.RebalanceReport{IntervalNs: st.interval, Threshold: rc.Threshold, Dwell: rc.Dwell}
	st.intervals = newHalvingLog(runstats.MaxIntervals, 0, mergeIntervals)
	return st, nil
}

// mergeIntervals is the report of intervals a and b together: the sums of
// their counts, the larger of each ratio.
func mergeIntervals(a, b runstats.IntervalReport) runstats.IntervalReport {
	return runstats.IntervalReport{
		StartNs: a.StartNs, Packets: a.Packets + b.Packets,
		Before: max(a.Before, b.Before), After: max(a.After, b.After), Bound: max(a.Bound, b.Bound),
		Moves: a.Moves + b.Moves, MovedPackets: a.MovedPackets + b.MovedPackets, Pinned: a.Pinned + b.Pinned,
	}
}

// addWindow adds one loop's counts of the window [start, start+window) to
// the bucket log. Windows are merged in pairs when the log would hold more
// than MaxWindows windows or MaxBucketCells cells.
func (st *retaState) addWindow(start int64, d []bucketLoad) {
	st.mu.Lock()
	defer st.mu.Unlock()
	l := &st.bucketLog
	row := int(start / l.span)
	for row >= l.limit {
		l.halve()
		row = int(start / l.span)
	}
	for len(l.entries) <= row {
		l.push(make([]bucketLoad, st.size))
	}
	addLoads(l.entries[row], d)
}

// endInterval adds one loop's packets per bucket in interval k. Interval k
// ends when every running loop has ended it, or when a loop ends a later
// one (a loop that receives nothing reports nothing): counts that come after
// their interval ended go to the one being collected.
func (st *retaState) endInterval(k int64, d []uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if k > st.collecting {
		if st.reported > 0 {
			st.close()
		}
		// Intervals without load still count for the dwell; after Dwell+1
		// of them no bucket is pinned, so more change nothing.
		for range min(k-st.collecting, int64(st.report.Dwell)+1) {
			st.apply(st.noLoad)
		}
		st.collecting = k
	}
	for b, n := range d {
		st.intervalLoad[b] += n
	}
	if k == st.collecting {
		st.reported++
		if st.reported >= st.active {
			st.close()
		}
	}
}

// loopDone counts a receive loop out: the interval being collected no
// longer waits for it.
func (st *retaState) loopDone() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.active--
	if st.rebalancer != nil && st.reported > 0 && st.reported >= st.active {
		st.close()
	}
}

// close ends the interval being collected: rebalance and report it.
func (st *retaState) close() {
	// The reordering count sees the move before any loop can commit, or
	// any worker serve, a packet steered by the new table.
	if st.reorder != nil {
		st.reorder.mu.Lock()
	}
	st.tableBefore = st.live.Load().AppendEntries(st.tableBefore[:0])
	res := st.apply(st.intervalLoad)
	if res.Moves > 0 {
		gen := st.generation.Add(1)
		if st.reorder != nil {
			st.tableAfter = st.live.Load().AppendEntries(st.tableAfter[:0])
			st.reorder.moveLocked(st.tableBefore, st.tableAfter, gen, (st.collecting+1)*st.interval)
		}
	}
	if st.reorder != nil {
		st.reorder.mu.Unlock()
	}
	var total uint64
	for _, n := range st.intervalLoad {
		total += n
	}
	if total > 0 {
		st.intervals.push(runstats.IntervalReport{
			StartNs: st.collecting * st.interval, Packets: total, Before: res.Before, After: res.After, Bound: res.Bound,
			Moves: res.Moves, MovedPackets: res.Moved, Pinned: res.Pinned,
		})
	}
	clear(st.intervalLoad)
	st.reported = 0
	st.collecting++
}

func (st *retaState) apply(load []uint64) rebalance.Result {
	res, err := st.rebalancer.Apply(st.live, load)
	if err != nil && st.err == nil {
		st.err = fmt.Errorf("rebalance interval %d: %w", st.collecting, err)
	}
	if res.Moves > 0 {
		st.report.Moves += uint64(res.Moves)
		st.report.Tables++
	}
	return res
}

// steeringReport is the run's SteeringReport, once every loop has ended.
func (st *retaState) steeringReport(workers int) (*runstats.SteeringReport, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	sr := &runstats.SteeringReport{
		RETASize: st.size, Initial: st.initial, Final: st.live.Load().AppendEntries(nil),
		BucketWindowNs: st.bucketLog.span,
	}
	total := make([]uint64, st.size)
	for _, r := range st.bucketLog.entries {
		p, b := make([]uint64, st.size), make([]uint64, st.size)
		for i, l := range r {
			p[i], b[i] = l.packets, l.bytes
			total[i] += l.packets
		}
		sr.BucketPackets, sr.BucketBytes = append(sr.BucketPackets, p), append(sr.BucketBytes, b)
	}
	// The table that would have balanced the whole run: one interval, no
	// dwell, from the table in force at the end.
	reb, err := rebalance.New(rebalance.Config{Size: st.size, Workers: workers, Threshold: st.cfg.Threshold})
	if err != nil {
		return nil, fmt.Errorf("report steering: %w", err)
	}
	sr.Balance.Table = make([]uint16, st.size)
	res, err := reb.Rebalance(sr.Balance.Table, sr.Final, total)
	if err != nil {
		return nil, fmt.Errorf("report steering: %w", err)
	}
	sr.Balance.Bound, sr.Balance.BalancedMaxMean, sr.Balance.BalancedMoves = res.Bound, res.After, res.Moves
	if st.rebalancer != nil {
		rr := st.report
		rr.Intervals = slices.Clone(st.intervals.entries)
		sr.Rebalance = &rr
	}
	return sr, st.err
}

// recvBuckets is a receive loop's side of retaState: the table it steers
// the batch by, and its cumulative counts per bucket, which only it writes.
type recvBuckets struct {
	st    *retaState
	table *hash.RETA
	gen   uint64 // the generation of table or an older one
	total []bucketLoad
	// The totals at the end of the last window and interval handed over.
	atWindowEnd   []bucketLoad
	atIntervalEnd []uint64
	// The ends of the open window and interval, and the earlier of them.
	windowEnd, intervalEnd, nextEnd int64
	windowLoad                      []bucketLoad // scratch: one window's loads
	intervalLoad                    []uint64     // scratch: one interval's packets
}

func newRecvBuckets(st *retaState) *recvBuckets {
	b := &recvBuckets{
		st: st, table: st.live.Load(),
		total: make([]bucketLoad, st.size), atWindowEnd: make([]bucketLoad, st.size), windowLoad: make([]bucketLoad, st.size),
		windowEnd: st.window, intervalEnd: 1<<63 - 1,
	}
	if st.interval > 0 {
		b.atIntervalEnd, b.intervalLoad, b.intervalEnd = make([]uint64, st.size), make([]uint64, st.size), st.interval
	}
	b.nextEnd = min(b.windowEnd, b.intervalEnd)
	return b
}

// steer returns the worker of a packet of hash h and n bytes that came in
// on queue, by the table loaded for the batch, and counts it in its bucket.
// A hash of 0 (no hash) is in no bucket and stays on its queue's worker, as
// hash.Steering.Worker says.
func (b *recvBuckets) steer(s *hash.Steering, h uint32, queue int, n int) int {
	if h == 0 {
		return s.Worker(h, queue)
	}
	c := &b.total[b.table.Bucket(h)]
	c.packets++
	c.bytes += uint64(n)
	return b.table.Queue(h)
}

// cross hands over the counts of every window and interval that ended by t,
// and loads the table in force.
func (b *recvBuckets) cross(t int64) {
	win, iv := b.st.window, b.st.interval
	for t >= b.windowEnd {
		b.flushWindow(b.windowEnd - win)
		b.windowEnd = max(b.windowEnd+win, (t/win)*win+win)
	}
	for t >= b.intervalEnd {
		b.flushInterval(b.intervalEnd/iv - 1)
		b.intervalEnd = max(b.intervalEnd+iv, (t/iv)*iv+iv)
	}
	b.nextEnd = min(b.windowEnd, b.intervalEnd)
	b.load()
}

// load takes the table in force. The generation is read first: a table is
// published before its generation, so gen never names a later table than
// the one loaded.
func (b *recvBuckets) load() {
	b.gen = b.st.generation.Load()
	b.table = b.st.live.Load()
}

func (b *recvBuckets) flushWindow(start int64) {
	loaded := false
	for i, c := range b.total {
		b.windowLoad[i] = bucketLoad{c.packets - b.atWindowEnd[i].packets, c.bytes - b.atWindowEnd[i].bytes}
		loaded = loaded || b.windowLoad[i].packets > 0
	}
	copy(b.atWindowEnd, b.total)
	if loaded {
		b.st.addWindow(start, b.windowLoad)
	}
}

func (b *recvBuckets) flushInterval(k int64) {
	for i, c := range b.total {
		b.intervalLoad[i] = c.packets - b.atIntervalEnd[i]
		b.atIntervalEnd[i] = c.packets
	}
	b.st.endInterval(k, b.intervalLoad)
}

// finish hands over the open window's counts and counts the loop out. The
// open interval's packets are in the window log; no table follows it.
func (b *recvBuckets) finish() {
	b.flushWindow(b.windowEnd - b.st.window)
	if b.st.interval > 0 {
		b.st.loopDone()
	}
}

// batch starts a batch: a live loop, which stamps the whole batch with now,
// hands over what ended by now; every loop loads the table in force.
func (b *recvBuckets) batch(now int64) {
	if now >= b.nextEnd {
		b.cross(now)
		return
	}
	b.load()
}

// setupRETA sets up the table state and the reordering counter of a
// SteerRETA run; an RPS run has neither.
func (e *Engine) setupRETA(cfg *EngineConfig, loops int) error {
	if cfg.Rebalance.Hold && cfg.Rebalance.Interval == 0 {
		return fmt.Errorf("%w: holding moved buckets needs rebalancing", ErrConfig)
	}
	if cfg.Steering.Steer != hash.SteerRETA {
		if cfg.Rebalance.Interval != 0 {
			return fmt.Errorf("%w: rebalancing needs RETA steering", ErrConfig)
		}
		return nil
	}
	var err error
	if e.reta, err = newRETAState(cfg, loops); err != nil {
		return err
	}
	e.reorder = newReorderState(cfg, e.reta.size, loops, cfg.Steering.Workers)
	e.reta.reorder = e.reorder
	return nil
}

// reportSteering adds the SteeringReport of a SteerRETA run to st.
func (e *Engine) reportSteering(st *runstats.RunStats) error {
	if e.reta == nil {
		return nil
	}
	sr, err := e.reta.steeringReport(len(e.workers))
	if sr != nil {
		// A worker's load is every packet steered to it, dropped at its
		// ring or not, as the buckets count them.
		var sum, most uint64
		for w, wr := range st.Workers {
			n := wr.Drops[runstats.DropRingFull] + wr.Drops[runstats.DropFlowLimit]
			for _, q := range st.Queues {
				n += q.Steered[w]
			}
			sum += n
			most = max(most, n)
		}
		sr.Balance.MaxMean = 1
		if sum > 0 {
			sr.Balance.MaxMean = float64(most) * float64(len(st.Workers)) / float64(sum)
		}
	}
	if sr != nil {
		var flows uint64
		sr.Reorder, flows = e.reorder.report()
		if sr.Rebalance != nil {
			sr.Rebalance.FlowsMoved = flows
			sr.Rebalance.Hold = e.holdReport()
		}
	}
	st.Steering = sr
	return err
}
