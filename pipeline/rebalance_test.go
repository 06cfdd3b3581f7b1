package pipeline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// profileFrames is one cycle of a built-in pktgen profile, in send order.
func profileFrames(tb testing.TB, name string) [][]byte {
	tb.Helper()
	prof, err := pktgen.LoadProfile(name)
	if err != nil {
		tb.Fatal(err)
	}
	sched, err := pktgen.NewSchedule(prof, pktgen.MACs{Dst: net.HardwareAddr{0x02, 0, 0, 0, 0, 1}})
	if err != nil {
		tb.Fatal(err)
	}
	return sched.Frames()
}

// loadedRun is a virtual-clock run of frames at 1 Mpps over 4 workers,
// each served at a rate that puts the mean worker at 85% of its capacity,
// steered by a RETA to fq consumers, rebalanced every 10 ms when interval > 0.
func loadedRun(tb testing.TB, frames [][]byte, count uint64, rb RebalanceConfig) *runstats.RunStats {
	tb.Helper()
	return loadedRunStepped(tb, frames, count, rb, false)
}

// loadedRunStepped is loadedRun, with the receive loop stepping the workers
// when stepped (CPUPlan.LoopsStepWorkers), which cuts the records a worker
// takes at once differently.
func loadedRunStepped(tb testing.TB, frames [][]byte, count uint64, rb RebalanceConfig, stepped bool) *runstats.RunStats {
	tb.Helper()
	const pps, workers = 1e6, 4
	src, err := source.NewSynthetic(frames, source.SyntheticConfig{Count: count, Replay: source.Replay{Mode: source.ReplayRate, PPS: pps}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { src.Close() })
	plan := stepPlan(1, stepped)
	return runEngine(tb, EngineConfig{
		Plan:        &plan,
		Source:      src,
		Steering:    hash.SteerConfig{Workers: workers, Key: testKey, Steer: hash.SteerRETA},
		Flags:       dissect.DefaultFlags,
		Gates:       dissect.AllGates,
		Consumer:    "fq",
		ServiceRate: queues.Rate{PacketsPerSec: pps / workers / 0.85},
		RingSize:    256,
		Virtual:     true,
		Window:      10 * time.Millisecond,
		Rebalance:   rb,
	})
}

func workerDrops(st *runstats.RunStats) uint64 {
	var n uint64
	for _, d := range st.Accounting.Dropped {
		n += d
	}
	return n
}

func maxSojourn(st *runstats.RunStats, q string) int64 {
	var m int64
	for _, w := range st.Workers {
		m = max(m, w.Consumer.SojournNs[q])
	}
	return m
}

// TestRebalanceLowersDrops replays the elephants profile at 85% mean load
// with a static table and rebalanced: rebalancing moves buckets, lowers the
// drops and the busiest worker's p99 sojourn, and brings max/mean closer to
// the bound, which no run beats.
func TestRebalanceLowersDrops(t *testing.T) {
	frames := profileFrames(t, "elephants")
	const count = 200000
	static := loadedRun(t, frames, count, RebalanceConfig{})
	moved := loadedRun(t, frames, count, RebalanceConfig{Interval: 10 * time.Millisecond})
	for _, st := range []*runstats.RunStats{static, moved} {
		checkAccounting(t, st, count)
		if st.Steering == nil {
			t.Fatal("no steering report for a RETA run")
		}
		if b := st.Steering.Balance; b.MaxMean < b.Bound {
			t.Errorf("max/mean %.3f below the bound %.3f", b.MaxMean, b.Bound)
		}
	}
	ss, ms := static.Steering, moved.Steering
	t.Logf("static: max/mean %.3f bound %.3f drops %d p99 %v", ss.Balance.MaxMean, ss.Balance.Bound, workerDrops(static), time.Duration(maxSojourn(static, "p99")))
	t.Logf("rebalanced: max/mean %.3f bound %.3f drops %d p99 %v moves %d", ms.Balance.MaxMean, ms.Balance.Bound, workerDrops(moved), time.Duration(maxSojourn(moved, "p99")), ms.Rebalance.Moves)
	t.Logf("reorder: static %+v, rebalanced %+v", ss.Reorder, ms.Reorder)
	// One receive queue and a static table: every flow on one worker, which
	// serves it in order.
	if ss.Reorder.Reordered != 0 || !ss.Reorder.Exact || !ms.Reorder.Exact || ss.Reorder.Served+ss.Reorder.Dropped == 0 {
		t.Errorf("reorder counts: static %+v, rebalanced %+v; want 0 static, both exact", ss.Reorder, ms.Reorder)
	}
	if ss.Rebalance != nil || ms.Rebalance == nil || ms.Rebalance.Moves == 0 {
		t.Fatalf("rebalance reports: static %+v, rebalanced %+v", ss.Rebalance, ms.Rebalance)
	}
	if workerDrops(moved) >= workerDrops(static) {
		t.Errorf("drops: rebalanced %d, static %d", workerDrops(moved), workerDrops(static))
	}
	if maxSojourn(moved, "p99") >= maxSojourn(static, "p99") {
		t.Errorf("p99 sojourn: rebalanced %d, static %d", maxSojourn(moved, "p99"), maxSojourn(static, "p99"))
	}
	if ms.Balance.MaxMean >= ss.Balance.MaxMean {
		t.Errorf("max/mean: rebalanced %.3f, static %.3f", ms.Balance.MaxMean, ss.Balance.MaxMean)
	}
}

// TestRebalanceDeterministic runs TestRebalanceLowersDrops' rebalanced
// replay, with the hold, three times, the last with the receive loop
// stepping the workers: the reports are identical to the last figure,
// sojourn times included, however the records a worker took at once were
// cut (fq's enqueue times are the arrivals).
func TestRebalanceDeterministic(t *testing.T) {
	frames := profileFrames(t, "elephants")
	var first []byte
	for i := range 3 {
		st := loadedRunStepped(t, frames, 200000, RebalanceConfig{Interval: 10 * time.Millisecond, Hold: true}, i == 2)
		st.Started, st.Host, st.Config.CPUPlan = time.Time{}, runstats.Host{}, ""
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("run %d differs from the first:\n%s\n%s", i+1, b, first)
		}
	}
}

// TestRebalanceUniformMovesNothing: traffic a round-robin table already
// spreads evenly (many equal flows) never crosses the threshold.
func TestRebalanceUniformMovesNothing(t *testing.T) {
	frames, err := xdptest.Templates("default")
	if err != nil {
		t.Fatal(err)
	}
	// One IPv4/TCP template over 65536 flows, one flow per source port.
	src, err := source.NewSynthetic(frames[:1], source.SyntheticConfig{
		Flows: 65536, FlowOffset: xdptest.FlowPortOffset, Count: 400000, Replay: source.Replay{Mode: source.ReplayRate, PPS: 4e6},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	plan := stepPlan(1, false)
	st := runEngine(t, EngineConfig{
		Plan: &plan, Source: src,
		Steering:  hash.SteerConfig{Workers: 4, Key: testKey, Steer: hash.SteerRETA},
		Flags:     dissect.DefaultFlags,
		Gates:     dissect.AllGates,
		Virtual:   true,
		Rebalance: RebalanceConfig{Interval: 10 * time.Millisecond},
	})
	checkAccounting(t, st, 400000)
	rr := st.Steering.Rebalance
	worst := 0.0
	for _, iv := range rr.Intervals {
		worst = max(worst, iv.Before)
	}
	if rr.Moves != 0 || len(rr.Intervals) < 9 {
		t.Errorf("%d moves over %d intervals (worst max/mean %.3f), want none over 10", rr.Moves, len(rr.Intervals), worst)
	}
}

// pollBatch runs one batch through e's first receive loop and lets every
// worker poll its rings.
func pollBatch(tb testing.TB, e *Engine) {
	r := e.recv[0]
	if err := r.src.Receive(r.batch); err != nil {
		tb.Fatal(err)
	}
	r.process(r.batch)
	for _, w := range e.workers {
		w.poll()
	}
}

// TestRETABucketsZeroAllocs: counting per bucket and steering by the live
// table allocate nothing per batch (a window's or an interval's end does,
// once).
func TestRETABucketsZeroAllocs(t *testing.T) {
	src := syntheticSource(t, "default", source.SyntheticConfig{})
	e, err := NewEngine(EngineConfig{
		Source:    src,
		Steering:  hash.SteerConfig{Workers: 2, Key: testKey, Steer: hash.SteerRETA, RETASize: 2048},
		Flags:     dissect.DefaultFlags,
		Gates:     dissect.AllGates,
		Virtual:   true,
		Window:    time.Hour,
		Rebalance: RebalanceConfig{Interval: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := e.recv[0]
	iteration := func() { pollBatch(t, e) }
	for range 100 {
		iteration()
	}
	if n := testing.AllocsPerRun(1000, iteration); n != 0 {
		t.Errorf("%.2f allocations per batch, want 0", n)
	}
	var counted uint64
	for _, c := range r.buckets.total {
		counted += c.packets
	}
	if counted != r.frames {
		t.Errorf("buckets counted %d packets of %d", counted, r.frames)
	}
}

// newBenchEngine is a virtual-clock engine over count frames (0: without
// end) of the default profile and 2 workers at "max", steered as mode says:
// "rps", "reta" (static), or "rebalance" every interval.
func newBenchEngine(b *testing.B, mode string, count uint64, interval time.Duration) *Engine {
	b.Helper()
	cfg := EngineConfig{
		Source:   syntheticSource(b, "default", source.SyntheticConfig{Count: count}),
		Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		Flags:    dissect.DefaultFlags,
		Gates:    dissect.AllGates,
		Virtual:  true,
	}
	if mode != "rps" {
		cfg.Steering.Steer = hash.SteerRETA
	}
	if mode == "rebalance" {
		cfg.Rebalance.Interval = interval
	}
	e, err := NewEngine(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkPipelineRebalance is BenchmarkPipeline (default profile, one
// receive queue, 2 workers at "max", virtual clock) steered by RPS, by a
// static RETA counting its buckets, and by a RETA rebalanced every 100 µs
// of virtual time (at max, the source stamps frames 1 µs apart): what
// counting and rebalancing cost the hot path. Run with -count for an
// interleaved A/B.
func BenchmarkPipelineRebalance(b *testing.B) {
	for _, mode := range []string{"rps", "reta", "rebalance"} {
		b.Run(mode, func(b *testing.B) {
			e := newBenchEngine(b, mode, uint64(b.N), 100*time.Millisecond)
			b.ResetTimer()
			start := time.Now()
			st, err := e.Run(context.Background())
			elapsed := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Accounting.Processed)/elapsed.Seconds()/1e6, "Mpps")
		})
	}
}

// TestBucketLogBounded: a log of 2048 buckets keeps at most 2^20 cells
// (512 rows), merging rows in pairs, and loses no packet.
func TestBucketLogBounded(t *testing.T) {
	st, err := newRETAState(&EngineConfig{Steering: hash.SteerConfig{Workers: 4, Steer: hash.SteerRETA, RETASize: 2048}, Window: time.Millisecond}, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := make([]bucketLoad, 2048)
	d[5] = bucketLoad{packets: 1, bytes: 100}
	const windows = 3000
	for k := range windows {
		st.addWindow(int64(k)*int64(time.Millisecond), d)
	}
	sr, err := st.steeringReport(4)
	if err != nil {
		t.Fatal(err)
	}
	rows := len(sr.BucketPackets)
	if rows*2048 > runstats.MaxBucketCells || rows < windows/8 || sr.BucketWindowNs != 8*int64(time.Millisecond) {
		t.Errorf("%d rows of %v, want at most %d of 8ms", rows, time.Duration(sr.BucketWindowNs), runstats.MaxBucketCells/2048)
	}
	var packets, bytes uint64
	for k := range sr.BucketPackets {
		packets += sr.BucketPackets[k][5]
		bytes += sr.BucketBytes[k][5]
	}
	if packets != windows || bytes != 100*windows {
		t.Errorf("%d packets and %d bytes in the log, want %d and %d", packets, bytes, windows, 100*windows)
	}
}

// BenchmarkReceiveBatchRebalance runs one receive loop's batches and the
// workers' polls on one goroutine (no scheduling in the measure): the
// default profile, 2 workers at "max", virtual clock, steered by RPS, by a
// static RETA (counting buckets and reordering), and by a RETA rebalanced
// every 10 ms and every 100 ms of virtual time (frames are stamped 1 µs
// apart): the CPU cost per batch of each. Interleave runs for an A/B.
func BenchmarkReceiveBatchRebalance(b *testing.B) {
	for _, mode := range []string{"rps", "reta", "rebalance", "rebalance100ms"} {
		b.Run(mode, func(b *testing.B) {
			interval := 10 * time.Millisecond
			if mode == "rebalance100ms" {
				mode, interval = "rebalance", 100*time.Millisecond
			}
			e := newBenchEngine(b, mode, 0, interval)
			r := e.recv[0]
			for b.Loop() {
				pollBatch(b, e)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(r.frames), "ns/frame")
		})
	}
}

// serveLog is a fifo consumer that logs what it takes, and what it serves
// and when.
type serveLog struct {
	*queues.FIFO
	taken  []loggedServe
	served []loggedServe
}

func (c *serveLog) Enqueue(recs []queues.Record, now int64) {
	for _, r := range recs {
		c.taken = append(c.taken, loggedServe{r.Hash, r.Arrival, -1})
	}
	c.FIFO.Enqueue(recs, now)
}

type loggedServe struct {
	hash        uint32
	arrival, at int64
}

func (c *serveLog) Dequeue(now int64, budget queues.Budget, out []queues.Record) []queues.Record {
	n := len(out)
	out = c.FIFO.Dequeue(now, budget, out)
	for _, r := range out[n:] {
		c.served = append(c.served, loggedServe{r.Hash, r.Arrival, now})
	}
	return out
}

// TestReorderCountMatchesServeLog: the engine's reordering count equals
// the count from the consumers' logs by the definition (reorderedInLogs).
func TestReorderCountMatchesServeLog(t *testing.T) {
	const count = 400000
	st, logs := serveLoggedRun(t, count, RebalanceConfig{Interval: 50 * time.Millisecond})
	checkAccounting(t, st, count)
	if st.Accounting.Total() != 0 || st.Steering.Rebalance.Moves == 0 {
		t.Fatalf("drops %d, moves %d: want none, and some", st.Accounting.Total(), st.Steering.Rebalance.Moves)
	}
	want := reorderedInLogs(logs)
	got := st.Steering.Reorder
	t.Logf("reordered %d of %d served; %d moves", got.Reordered, got.Served, st.Steering.Rebalance.Moves)
	if got.Reordered != want || !got.Exact || want == 0 {
		t.Errorf("engine counted %+v, the serve logs %d reordered (want equal, above 0)", got, want)
	}
	// Only a flow in flight when its bucket moved can be reordered.
	if st.Steering.Rebalance.FlowsMoved == 0 {
		t.Errorf("no flow in flight in a moved bucket, yet %d reordered", got.Reordered)
	}
}

// TestRebalanceHoldReordersNothing runs TestReorderCountMatchesServeLog's
// traffic with the hold: the serve logs show no flow served out of order,
// the engine counts none, the moved buckets' packets were held, and two runs
// give the same counts.
func TestRebalanceHoldReordersNothing(t *testing.T) {
	const count = 400000
	rb := RebalanceConfig{Interval: 50 * time.Millisecond, Hold: true}
	st, logs := serveLoggedRun(t, count, rb)
	checkAccounting(t, st, count)
	rr := st.Steering.Rebalance
	if rr.Moves == 0 || rr.Hold == nil || rr.Hold.Held == 0 || rr.Hold.Buckets != rr.Moves {
		t.Fatalf("moves %d, hold %+v: want moves, each held, some packets held", rr.Moves, rr.Hold)
	}
	got := st.Steering.Reorder
	if n := reorderedInLogs(logs); n != 0 || got.Reordered != 0 || !got.Exact {
		t.Errorf("with the hold: serve logs %d reordered, engine %+v; want 0, exact", n, got)
	}
	if rr.Hold.Overflow != 0 || rr.Hold.AtEnd != 0 {
		t.Errorf("hold %+v: want every held packet let go during the run", rr.Hold)
	}
	again, _ := serveLoggedRun(t, count, rb)
	if a, b := again.Steering.Rebalance.Hold, rr.Hold; *a != *b || again.Steering.Reorder != got || again.Accounting.Processed != st.Accounting.Processed {
		t.Errorf("a second run held %+v and counted %+v; the first %+v and %+v", a, again.Steering.Reorder, b, got)
	}
	t.Logf("hold %+v over %d moves; reorder %+v", *rr.Hold, rr.Moves, got)
}

// serveLoggedRun rebalances the elephants profile at 85% mean load with
// fifo consumers that drop nothing (a moved bucket's packets wait behind
// the old worker's whole queue) and log every packet they take and serve.
func serveLoggedRun(t *testing.T, count uint64, rb RebalanceConfig) (*runstats.RunStats, []*serveLog) {
	t.Helper()
	const pps, workers = 1e6, 4
	src, err := source.NewSynthetic(profileFrames(t, "elephants"), source.SyntheticConfig{Count: count, Replay: source.Replay{Mode: source.ReplayRate, PPS: pps}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	logs := make([]*serveLog, workers)
	plan := stepPlan(1, false)
	st := runEngine(t, EngineConfig{
		Plan: &plan, Source: src,
		Steering:    hash.SteerConfig{Workers: workers, Key: testKey, Steer: hash.SteerRETA},
		Flags:       dissect.DefaultFlags,
		Gates:       dissect.AllGates,
		NewConsumer: func(w int) queues.Consumer { logs[w] = &serveLog{FIFO: queues.NewFIFO(1 << 20)}; return logs[w] },
		ServiceRate: queues.Rate{PacketsPerSec: pps / workers / 0.85},
		RingSize:    256,
		Virtual:     true,
		Window:      10 * time.Millisecond,
		Rebalance:   rb,
	})
	return st, logs
}

// reorderedInLogs counts, from the consumers' logs, the packets served
// strictly before an earlier-arrived packet of their flow, among the
// packets whose earlier packets were all served.
func reorderedInLogs(logs []*serveLog) uint64 {
	// Per flow, the packets in arrival order (one receive loop: stamps
	// strictly increase) with their service times, up to the first one
	// still queued at the end.
	servedAtTime := map[int64]int64{}
	flows := map[uint32][]loggedServe{}
	for _, l := range logs {
		for _, s := range l.served {
			servedAtTime[s.arrival] = s.at
		}
		for _, s := range l.taken {
			flows[s.hash] = append(flows[s.hash], s)
		}
	}
	var n uint64
	for _, pkts := range flows {
		slices.SortFunc(pkts, func(a, b loggedServe) int { return cmp.Compare(a.arrival, b.arrival) })
		var latest int64
		for _, p := range pkts {
			at, ok := servedAtTime[p.arrival]
			if !ok {
				break
			}
			if at < latest {
				n++
			}
			latest = max(latest, at)
		}
	}
	return n
}

// BenchmarkReorderStatic is the reordering count's cost per packet on a
// table that does not move: a batch of 64 records committed to one of 2
// workers and finished by it, in a RETA of 128 buckets.
func BenchmarkReorderStatic(b *testing.B) {
	s := newReorderState(&EngineConfig{RingSize: DefaultRingSize}, 128, 1, 2)
	ring := queues.NewRing(128)
	out := []outRing{{ring: ring, n: 64}, {ring: queues.NewRing(128)}}
	recs := make([]queues.Record, 64)
	for i := range 64 {
		ring.Slot(i).Hash = uint32(i*2654435761 + 1)
		recs[i] = *ring.Slot(i)
	}
	for b.Loop() {
		s.arrive(0, 0, out)
		s.finish(0, recs, nil, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(64*b.N), "ns/packet")
}
