package pipeline

import (
	"fmt"
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

// retaState is a SteerRETA run's table and its per-bucket load: the receive
// loops steer by the table in live, count per bucket in arrays of their own,
// and hand each window's and interval's counts here, under mu, once per
// window and interval; the last loop to end an interval rebalances.
type retaState struct {
	live    *hash.LiveRETA
	initial []uint16
	size    int
	window  int64
	iv      int64 // the rebalancing interval, 0 when static

	mu sync.Mutex
	// The bucket log: rows of size loads, each of rowLen ns from 0.
	rowLen int64
	rows   []bucketLoad
	// The rebalancer and the interval it is collecting.
	reb      *rebalance.Rebalancer
	cfg      RebalanceConfig
	cur      int64 // the interval being collected
	acc      []uint64
	reported int // loops that ended cur
	active   int // loops still running
	zero     []uint64
	report   runstats.RebalanceReport
	// ro counts reordering (nil until the engine sets it): every table
	// that moves a bucket is handed to it, before and after, as a new
	// generation.
	ro     *reorderState
	gen    atomic.Uint64
	before []uint16
	after  []uint16
	err    error
}

func newRETAState(cfg *EngineConfig, loops int) (*retaState, error) {
	sc := cfg.Steering
	size := sc.RETASize
	if size == 0 {
		size = hash.DefaultRETASize
	}
	valid := false
	for _, s := range RETASizes {
		valid = valid || s == size
	}
	if !valid {
		return nil, fmt.Errorf("%w: RETA size %d, want one of %v", ErrConfig, size, RETASizes)
	}
	t, err := hash.NewRETA(size, sc.Workers, sc.RETAWeights)
	if err != nil {
		return nil, err
	}
	st := &retaState{
		live: hash.NewLiveRETA(t), size: size, window: int64(cfg.Window), rowLen: int64(cfg.Window),
		active: loops, cfg: cfg.Rebalance,
	}
	st.initial = t.AppendEntries(nil)
	if cfg.Rebalance.Interval == 0 {
		return st, nil
	}
	if cfg.Rebalance.Interval < MinRebalanceInterval {
		return nil, fmt.Errorf("%w: rebalancing interval %s, want at least %s", ErrConfig, cfg.Rebalance.Interval, MinRebalanceInterval)
	}
	if st.reb, err = rebalance.New(rebalance.Config{Size: size, Workers: sc.Workers, Threshold: cfg.Rebalance.Threshold, Dwell: cfg.Rebalance.Dwell}); err != nil {
		return nil, err
	}
	st.iv = int64(cfg.Rebalance.Interval)
	st.acc, st.zero = make([]uint64, size), make([]uint64, size)
	st.before, st.after = make([]uint16, 0, size), make([]uint16, 0, size)
	rc := st.reb.Config()
	st.report = runstats.RebalanceReport{IntervalNs: st.iv, Threshold: rc.Threshold, Dwell: rc.Dwell}
	return st, nil
}

// addWindow adds one loop's counts of the window [start, start+window) to
// the bucket log. Rows are merged in pairs when the log would hold more than
// MaxWindows rows or MaxBucketCells cells.
func (st *retaState) addWindow(start int64, d []bucketLoad) {
	st.mu.Lock()
	defer st.mu.Unlock()
	maxRows := min(MaxWindows, runstats.MaxBucketCells/st.size)
	row := int(start / st.rowLen)
	for row >= maxRows {
		n := len(st.rows) / st.size
		for i := range n / 2 {
			dst, a, b := st.rows[i*st.size:][:st.size], st.rows[2*i*st.size:][:st.size], st.rows[(2*i+1)*st.size:][:st.size]
			for j := range dst {
				dst[j] = bucketLoad{a[j].packets + b[j].packets, a[j].bytes + b[j].bytes}
			}
		}
		if n%2 == 1 {
			copy(st.rows[n/2*st.size:], st.rows[(n-1)*st.size:n*st.size])
			n++
		}
		st.rows = st.rows[:n/2*st.size]
		st.rowLen *= 2
		row = int(start / st.rowLen)
	}
	for len(st.rows) < (row+1)*st.size {
		st.rows = append(st.rows, make([]bucketLoad, st.size)...)
	}
	r := st.rows[row*st.size:][:st.size]
	for b, l := range d {
		r[b].packets += l.packets
		r[b].bytes += l.bytes
	}
}

// endInterval adds one loop's packets per bucket in interval k. Interval k
// ends when every running loop has ended it, or when a loop ends a later
// one (a loop that receives nothing reports nothing): counts that come after
// their interval ended go to the one being collected.
func (st *retaState) endInterval(k int64, d []uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if k > st.cur {
		if st.reported > 0 {
			st.close()
		}
		// Intervals without load still count for the dwell; after Dwell+1
		// of them no bucket is pinned, so more change nothing.
		for range min(k-st.cur, int64(st.report.Dwell)+1) {
			st.apply(st.zero)
		}
		st.cur = k
	}
	for b, n := range d {
		st.acc[b] += n
	}
	if k == st.cur {
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
	if st.reb != nil && st.reported > 0 && st.reported >= st.active {
		st.close()
	}
}

// close ends the interval being collected: rebalance and report it.
func (st *retaState) close() {
	// The reordering count sees the move before any loop can commit, or
	// any worker serve, a packet steered by the new table.
	if st.ro != nil {
		st.ro.mu.Lock()
	}
	st.before = st.live.Load().AppendEntries(st.before[:0])
	res := st.apply(st.acc)
	if res.Moves > 0 {
		gen := st.gen.Add(1)
		if st.ro != nil {
			st.after = st.live.Load().AppendEntries(st.after[:0])
			st.ro.moveLocked(st.before, st.after, gen, (st.cur+1)*st.iv)
		}
	}
	if st.ro != nil {
		st.ro.mu.Unlock()
	}
	var total uint64
	for _, n := range st.acc {
		total += n
	}
	if total > 0 {
		st.record(runstats.IntervalReport{
			StartNs: st.cur * st.iv, Packets: total, Before: res.Before, After: res.After, Bound: res.Bound,
			Moves: res.Moves, MovedPackets: res.Moved, Pinned: res.Pinned,
		})
	}
	clear(st.acc)
	st.reported = 0
	st.cur++
}

func (st *retaState) apply(load []uint64) rebalance.Result {
	res, err := st.reb.Apply(st.live, load)
	if err != nil && st.err == nil {
		st.err = fmt.Errorf("rebalance interval %d: %w", st.cur, err)
	}
	if res.Moves > 0 {
		st.report.Moves += uint64(res.Moves)
		st.report.Tables++
	}
	return res
}

// record appends an interval's report, merging neighbours in pairs when
// there are MaxIntervals already.
func (st *retaState) record(ir runstats.IntervalReport) {
	ivs := st.report.Intervals
	if len(ivs) == runstats.MaxIntervals {
		n := len(ivs) / 2
		for i := range n {
			a, b := ivs[2*i], ivs[2*i+1]
			ivs[i] = runstats.IntervalReport{
				StartNs: a.StartNs, Packets: a.Packets + b.Packets,
				Before: max(a.Before, b.Before), After: max(a.After, b.After), Bound: max(a.Bound, b.Bound),
				Moves: a.Moves + b.Moves, MovedPackets: a.MovedPackets + b.MovedPackets, Pinned: a.Pinned + b.Pinned,
			}
		}
		ivs = ivs[:n]
	}
	st.report.Intervals = append(ivs, ir)
}

// steeringReport is the run's SteeringReport, once every loop has ended.
func (st *retaState) steeringReport(workers int) (*runstats.SteeringReport, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	sr := &runstats.SteeringReport{
		RETASize: st.size, Initial: st.initial, Final: st.live.Load().AppendEntries(nil),
		BucketWindowNs: st.rowLen,
	}
	total := make([]uint64, st.size)
	for k := range len(st.rows) / st.size {
		r := st.rows[k*st.size:][:st.size]
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
	if st.reb != nil {
		rr := st.report
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
	cum   []bucketLoad
	// The counts at the end of the last window and interval handed over.
	atWin []bucketLoad
	atIv  []uint64
	// The ends of the open window and interval, and the earlier of them.
	winEnd, ivEnd, next int64
	win                 []bucketLoad // scratch
	iv                  []uint64     // scratch
}

func newRecvBuckets(st *retaState) *recvBuckets {
	b := &recvBuckets{
		st: st, table: st.live.Load(),
		cum: make([]bucketLoad, st.size), atWin: make([]bucketLoad, st.size), win: make([]bucketLoad, st.size),
		winEnd: st.window, ivEnd: 1<<63 - 1,
	}
	if st.iv > 0 {
		b.atIv, b.iv, b.ivEnd = make([]uint64, st.size), make([]uint64, st.size), st.iv
	}
	b.next = min(b.winEnd, b.ivEnd)
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
	c := &b.cum[b.table.Bucket(h)]
	c.packets++
	c.bytes += uint64(n)
	return b.table.Queue(h)
}

// cross hands over the counts of every window and interval that ended by t,
// and loads the table in force.
func (b *recvBuckets) cross(t int64) {
	for t >= b.winEnd {
		b.flushWindow(b.winEnd - b.st.window)
		b.winEnd = max(b.winEnd+b.st.window, (t/b.st.window)*b.st.window+b.st.window)
	}
	for t >= b.ivEnd {
		b.flushInterval(b.ivEnd/b.st.iv - 1)
		b.ivEnd = max(b.ivEnd+b.st.iv, (t/b.st.iv)*b.st.iv+b.st.iv)
	}
	b.next = min(b.winEnd, b.ivEnd)
	b.load()
}

// load takes the table in force. The generation is read first: a table is
// published before its generation, so gen never names a later table than
// the one loaded.
func (b *recvBuckets) load() {
	b.gen = b.st.gen.Load()
	b.table = b.st.live.Load()
}

func (b *recvBuckets) flushWindow(start int64) {
	loaded := false
	for i, c := range b.cum {
		b.win[i] = bucketLoad{c.packets - b.atWin[i].packets, c.bytes - b.atWin[i].bytes}
		loaded = loaded || b.win[i].packets > 0
	}
	copy(b.atWin, b.cum)
	if loaded {
		b.st.addWindow(start, b.win)
	}
}

func (b *recvBuckets) flushInterval(k int64) {
	for i, c := range b.cum {
		b.iv[i] = c.packets - b.atIv[i]
		b.atIv[i] = c.packets
	}
	b.st.endInterval(k, b.iv)
}

// finish hands over the open window's counts and counts the loop out. The
// open interval's packets are in the window log; no table follows it.
func (b *recvBuckets) finish() {
	b.flushWindow(b.winEnd - b.st.window)
	if b.st.iv > 0 {
		b.st.loopDone()
	}
}

// batch starts a batch: a live loop, which stamps the whole batch with now,
// hands over what ended by now; every loop loads the table in force.
func (b *recvBuckets) batch(now int64) {
	if now >= b.next {
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
	e.ro = newReorderState(cfg, e.reta.size, loops, cfg.Steering.Workers)
	e.reta.ro = e.ro
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
		sr.Reorder, flows = e.ro.report()
		if sr.Rebalance != nil {
			sr.Rebalance.FlowsMoved = flows
			sr.Rebalance.Hold = e.holdReport()
		}
	}
	st.Steering = sr
	return err
}
