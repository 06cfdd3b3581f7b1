package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// testKey is the kernel SipHash KUnit key.
var testKey = hash.Key{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// expected is what the offline slow path says of one frame.
type expected struct {
	rec    queues.Record // the flow fields, Hash, L4, Len and Queue
	worker int
}

// oracleSource wraps a source and works out, for every frame a receive loop
// takes, the Record and worker the engine must produce, with the slow path
// and the hash package alone.
type oracleSource struct {
	source.Source
	queues []*oracleQueue
}

type oracleQueue struct {
	source.QueueSource
	want    func(frame []byte) (uint32, bool, int) // hash, l4, worker
	frames  []expected
	atEOF   func()
	eofOnce sync.Once
}

func newOracleSource(src source.Source, want func(frame []byte) (uint32, bool, int)) *oracleSource {
	o := &oracleSource{Source: src}
	for _, q := range src.Queues() {
		o.queues = append(o.queues, &oracleQueue{QueueSource: q, want: want})
	}
	return o
}

func (o *oracleSource) Queues() []source.QueueSource {
	qs := make([]source.QueueSource, len(o.queues))
	for i, q := range o.queues {
		qs[i] = q
	}
	return qs
}

func (q *oracleQueue) Receive(b *source.Batch) error {
	err := q.QueueSource.Receive(b)
	for i, f := range b.Frames {
		var keys dissect.FlowKeys
		dissect.DissectFrame(&keys, f, dissect.DefaultFlags)
		var r queues.Record
		r.FromKeys(&keys)
		r.Hash, r.L4, r.Len, r.Queue = 0, false, uint32(b.WireLen[i]), uint16(q.Queue())
		h, l4, w := q.want(f)
		r.Hash, r.L4, r.HashSource = h, l4, hash.SourceKernel // the oracle is the kernel hash
		q.frames = append(q.frames, expected{rec: r, worker: w})
	}
	if err != nil && q.atEOF != nil {
		q.eofOnce.Do(q.atEOF)
	}
	return err
}

// kernelRPS is the expectation of HashKernel with SteerRPS over workers
// workers: skb_get_hash of the slow path's keys, reciprocal_scale written
// out.
func kernelRPS(key hash.Key, workers int) func([]byte) (uint32, bool, int) {
	k := hash.NewKernel(key)
	return func(f []byte) (uint32, bool, int) {
		var keys dissect.FlowKeys
		dissect.DissectFrame(&keys, f, dissect.DefaultFlags)
		h, l4 := k.Hash(&keys)
		return h, l4, int(uint64(h) * uint64(workers) >> 32)
	}
}

// recorder is a consumer that keeps every record it is given, serves them at
// once, and can hold its worker until released.
type recorder struct {
	queues.FIFO
	hold <-chan struct{} // Enqueue waits for it to close; nil: never waits
	got  []queues.Record
}

func (c *recorder) Enqueue(recs []queues.Record, now int64) {
	if c.hold != nil {
		<-c.hold
	}
	c.got = append(c.got, recs...)
	c.FIFO.Enqueue(recs, now)
}

type recorders struct {
	mu   sync.Mutex
	all  []*recorder
	hold <-chan struct{}
}

func (rs *recorders) factory(limit int) func(int) queues.Consumer {
	return func(w int) queues.Consumer {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		for len(rs.all) <= w {
			rs.all = append(rs.all, nil)
		}
		rs.all[w] = &recorder{FIFO: *queues.NewFIFO(limit), hold: rs.hold}
		return rs.all[w]
	}
}

// checkRecords checks that each worker got, from each queue, exactly the
// frames the oracle steered to it, in order, with the oracle's Record.
func checkRecords(tb testing.TB, o *oracleSource, rs *recorders, drops uint64) {
	tb.Helper()
	var total, got uint64
	for w, c := range rs.all {
		byQueue := map[uint16][]queues.Record{}
		for _, r := range c.got {
			byQueue[r.Queue] = append(byQueue[r.Queue], r)
			got++
		}
		for q, oq := range o.queues {
			var want []expected
			for _, e := range oq.frames {
				if e.worker == w {
					want = append(want, e)
				}
			}
			recs := byQueue[uint16(oq.Queue())]
			if drops == 0 && len(recs) != len(want) {
				tb.Errorf("worker %d got %d records from queue %d, want %d", w, len(recs), q, len(want))
			}
			// With drops, the records are a subsequence of the frames.
			j := 0
			for i := range recs {
				r := recs[i]
				r.Arrival, r.Path = 0, 0
				for j < len(want) && want[j].rec != r {
					if drops == 0 {
						tb.Fatalf("worker %d, queue %d, record %d:\n-%+v\n+%+v", w, q, i, want[j].rec, r)
					}
					j++
				}
				if j == len(want) {
					tb.Fatalf("worker %d, queue %d: record %d %+v is no frame steered here", w, q, i, r)
				}
				j++
			}
		}
	}
	for _, oq := range o.queues {
		total += uint64(len(oq.frames))
	}
	if got+drops != total {
		tb.Errorf("%d records reached the consumers and %d were dropped, of %d frames", got, drops, total)
	}
}

func syntheticSource(tb testing.TB, profile string, cfg source.SyntheticConfig) source.Source {
	tb.Helper()
	frames, err := xdptest.Templates(profile)
	if err != nil {
		tb.Fatal(err)
	}
	if cfg.FlowOffset == nil {
		cfg.FlowOffset = xdptest.FlowPortOffset
	}
	src, err := source.NewSynthetic(frames, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { src.Close() })
	return src
}

func runEngine(tb testing.TB, cfg EngineConfig) *runstats.RunStats {
	tb.Helper()
	_, st := runNewEngine(tb, cfg)
	return st
}

// runNewEngine runs an engine of cfg for 20 s at most and returns it with its
// report, for tests that look inside the engine after the run.
func runNewEngine(tb testing.TB, cfg EngineConfig) (*Engine, *runstats.RunStats) {
	tb.Helper()
	e, err := NewEngine(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := e.Run(ctx)
	if err != nil {
		tb.Fatalf("run: %v\naccounting %+v", err, st.Accounting)
	}
	return e, st
}

func dropTotal(acc runstats.Accounting) uint64 {
	var n uint64
	for _, d := range acc.Dropped {
		n += d
	}
	return n
}

// TestEngineSynthetic runs the default profile through the whole engine:
// every Record matches the slow path and the kernel hash, lands on the worker
// reciprocal_scale picks, in order, and the accounting adds up.
func TestEngineSynthetic(t *testing.T) {
	for _, virtual := range []bool{false, true} {
		t.Run(fmt.Sprintf("virtual=%v", virtual), func(t *testing.T) {
			const workers, frames = 3, 20000
			src := syntheticSource(t, "default", source.SyntheticConfig{Queues: 2, Count: frames, Flows: 300})
			o := newOracleSource(src, kernelRPS(testKey, workers))
			var rs recorders
			st := runEngine(t, EngineConfig{
				Source:   o,
				Steering: hash.SteerConfig{Workers: workers, Key: testKey},
				Flags:    dissect.DefaultFlags, Gates: dissect.AllGates,
				NewConsumer: rs.factory(1 << 16),
				// Lossless: a live run with a ring this large and fast
				// consumers drops nothing on any machine worth testing on,
				// and a virtual run never drops.
				RingSize: 1 << 15,
				Virtual:  virtual,
			})
			checkRecords(t, o, &rs, dropTotal(st.Accounting))
			checkAccounting(t, st, frames)
			if n := dropTotal(st.Accounting); n != 0 {
				t.Errorf("drops %v, want none", st.Accounting.Dropped)
			}
			var fast uint64
			for _, s := range st.Shapes.Shape {
				fast += s.Fast
			}
			if fast == 0 || st.Shapes.Other == 0 {
				t.Errorf("shapes %+v: want fast-path and other frames", st.Shapes)
			}
		})
	}
}

// checkAccounting checks that the report's parts agree with each other.
func checkAccounting(tb testing.TB, st *runstats.RunStats, received uint64) {
	tb.Helper()
	acc := st.Accounting
	if !acc.Balanced || acc.Received != received || acc.Received != acc.Processed+acc.Unserved+dropTotal(acc) {
		tb.Errorf("accounting %+v, want %d received, balanced", acc, received)
	}
	var frames, steered, taken, ringDrops uint64
	for _, q := range st.Queues {
		frames += q.Stats.Frames
		var own uint64
		for _, n := range q.Steered {
			steered += n
			own += n
		}
		// Each loop's frames went to a worker or were dropped on the way,
		// by that loop's count.
		if lost := q.Drops[runstats.DropRingFull] + q.Drops[runstats.DropFlowLimit]; own+lost != q.Stats.Frames || q.Drops == nil {
			tb.Errorf("queue %d took %d frames, steered %d and dropped %v", q.Queue, q.Stats.Frames, own, q.Drops)
		}
	}
	for _, w := range st.Workers {
		taken += w.Packets
		ringDrops += w.Drops[runstats.DropRingFull] + w.Drops[runstats.DropFlowLimit]
	}
	if frames != received || steered != taken || steered+ringDrops != received {
		tb.Errorf("queues saw %d frames and steered %d, workers took %d and dropped %d, of %d", frames, steered, taken, ringDrops, received)
	}
	var winPackets, winServed uint64
	for _, w := range st.Windows {
		for _, n := range w.QueuePackets {
			winPackets += n
		}
		for _, n := range w.WorkerPackets {
			winServed += n
		}
	}
	var served uint64
	for _, w := range st.Workers {
		served += w.Consumer.Dequeued
	}
	if winPackets != received || winServed != served {
		tb.Errorf("windows count %d received and %d served, want %d and %d", winPackets, winServed, received, served)
	}
}

// TestEnginePcapCorpus replays the whole corpus, every odd frame the project
// knows, from a pcap file spread over 3 virtual queues by RSS, and checks each
// Record against the slow path.
func TestEnginePcapCorpus(t *testing.T) {
	var frames [][]byte
	for _, f := range corpus.Build() {
		frames = append(frames, f.Data)
	}
	file := xdptest.WriteCapture(t, xdptest.CapturePcapNanos, layers.LinkTypeEthernet, xdptest.CaptureRecords(frames, 10*time.Microsecond)...)
	src, err := NewPcap(bytes.NewReader(file), "corpus.pcap", source.PcapConfig{}, RSSConfig{Queues: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	const workers = 2
	o := newOracleSource(src, kernelRPS(testKey, workers))
	var rs recorders
	st := runEngine(t, EngineConfig{
		Source:   o,
		Steering: hash.SteerConfig{Workers: workers, Key: testKey},
		Flags:    dissect.DefaultFlags, Gates: dissect.AllGates,
		NewConsumer: rs.factory(1 << 16),
		Virtual:     true,
	})
	checkRecords(t, o, &rs, 0)
	checkAccounting(t, st, uint64(len(frames)))
	for q, oq := range o.queues {
		if len(oq.frames) == 0 {
			t.Errorf("RSS sent no frame to queue %d", q)
		}
	}
	// The capture spans len(frames) * 10 µs of virtual time.
	if want := int64(len(frames)-1)*10000 + 1; st.DurationNs != want {
		t.Errorf("virtual duration %d ns, want %d", st.DurationNs, want)
	}
}

// TestEngineTinyRing holds the workers until the source has sent everything,
// so that rings of 8 records overflow: the drops are counted and the rest
// add up.
func TestEngineTinyRing(t *testing.T) {
	tests := []struct {
		name      string
		ringSize  int
		flowLimit int
		profile   string
		flows     int
	}{
		{name: "ring_full", ringSize: 8, profile: "default", flows: 100},
		// With a ring of 8, a flow cannot fill the 128-packet history before
		// the ring is full: no flow limit drop, as in the kernel, which does
		// not consult the flow limit when the backlog is full.
		{name: "small_flow_limit", ringSize: 8, flowLimit: 1024, profile: "ipv4-tcp", flows: 1},
		// One elephant flow: once the ring is half full (128), its packets
		// fill the history, and from the 65th on the flow limit drops every
		// packet before the ring is full.
		{name: "flow_limit", ringSize: 256, flowLimit: 1024, profile: "ipv4-tcp", flows: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const frames = 5000
			src := syntheticSource(t, tt.profile, source.SyntheticConfig{Count: frames, Flows: tt.flows})
			o := newOracleSource(src, kernelRPS(testKey, 2))
			hold := make(chan struct{})
			o.queues[0].atEOF = func() { close(hold) }
			rs := recorders{hold: hold}
			// The workers block in their consumers until the source ends:
			// a loop must not step them, or it would block too.
			plan := stepPlan(1, false)
			e, err := NewEngine(EngineConfig{
				Plan:        &plan,
				Source:      o,
				Steering:    hash.SteerConfig{Workers: 2, Key: testKey},
				Flags:       dissect.DefaultFlags,
				NewConsumer: rs.factory(1 << 16),
				RingSize:    tt.ringSize,
				FlowLimit:   tt.flowLimit,
			})
			if err != nil {
				t.Fatal(err)
			}
			st, err := e.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkAccounting(t, st, frames)
			checkRecords(t, o, &rs, dropTotal(st.Accounting))
			acc := st.Accounting
			full, limited := acc.Dropped[runstats.DropRingFull], acc.Dropped[runstats.DropFlowLimit]
			switch {
			case tt.flowLimit > 0 && tt.ringSize >= 2*queues.FlowLimitHistory:
				// The ring takes 128 records below half full, then 64 more
				// counted in the history; the 65th is dropped, and so is
				// every later one while the ring stays above half full.
				if full != 0 || limited == 0 {
					t.Errorf("%d ring full, %d flow limit drops: want only flow limit drops", full, limited)
				}
			default:
				if full == 0 || limited != 0 {
					t.Errorf("%d ring full, %d flow limit drops: want only ring full drops", full, limited)
				}
			}
		})
	}
}

// TestEngineVirtualDeterministic runs a rate-limited virtual replay twice:
// with one queue and no flow limit the reports are identical.
func TestEngineVirtualDeterministic(t *testing.T) {
	a, _ := virtualReplay(t, "fifo", false)
	b, _ := virtualReplay(t, "fifo", false)
	if !bytes.Equal(a, b) {
		t.Errorf("two virtual runs differ:\n%s\n%s", a, b)
	}
}

// TestEngineLoopsStepWorkers checks that a receive loop stepping the workers
// (CPUPlan.LoopsStepWorkers: no Go processor to spare for them) changes no
// result: the virtual replay's report is the one the workers' own goroutines
// give.
func TestEngineLoopsStepWorkers(t *testing.T) {
	for _, consumer := range []string{"fifo", "fq_codel"} {
		t.Run(consumer, func(t *testing.T) {
			own, ownSteps := virtualReplay(t, consumer, false)
			for w, n := range ownSteps {
				if n != 0 {
					t.Errorf("workers on their own: the loop took %d records for worker %d, want 0", n, w)
				}
			}
			helped, steps := virtualReplay(t, consumer, true)
			for w, n := range steps {
				if n == 0 {
					t.Errorf("loops step workers: the loop took no record for worker %d", w)
				}
			}
			if !bytes.Equal(own, helped) {
				t.Errorf("the report changes when the receive loop steps the workers:\n%s\n%s", own, helped)
			}
		})
	}
	// Two loops on two processors: each steps the worker it owns and, when
	// a ring to the other falls half full, that one too; nothing is lost.
	t.Run("2 loops", func(t *testing.T) {
		const frames = 200000
		plan := stepPlan(2, true)
		e, st := runNewEngine(t, EngineConfig{
			Plan:     &plan,
			Source:   syntheticSource(t, "default", source.SyntheticConfig{Queues: 2, Count: frames}),
			Steering: hash.SteerConfig{Workers: 2, Key: testKey},
			Flags:    dissect.DefaultFlags,
			Gates:    dissect.AllGates,
			Consumer: "fq_codel",
			Virtual:  true,
		})
		checkAccounting(t, st, frames)
		if n := dropTotal(st.Accounting); n != 0 {
			t.Errorf("%d drops in a virtual run served at max: %+v", n, st.Accounting)
		}
		for _, w := range e.workers {
			if w.stepsByLoops == 0 {
				t.Errorf("the receive loops took no record for worker %d", w.index)
			}
		}
	})
}

// stepPlan is the CPU plan of loops receive loops and 2 workers, with the
// loops stepping the workers or not.
func stepPlan(loops int, step bool) CPUPlan {
	p := PlanCPUs(CPUInput{Loops: loops, Workers: 2})
	p.LoopsStepWorkers = step
	return p
}

// virtualReplay runs 30,000 frames of the default profile, replayed at
// 200 kpps on one queue, on the virtual clock through consumer served below
// the offered load, with the loop stepping the workers or not. It returns the
// report as JSON (without the plan's words) and, per worker, the records the
// receive loop took for it.
func virtualReplay(t *testing.T, consumer string, step bool) ([]byte, []uint64) {
	t.Helper()
	plan := stepPlan(1, step)
	frames, err := xdptest.Templates("default")
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.NewSynthetic(frames, source.SyntheticConfig{
		Count: 30000, FlowOffset: xdptest.FlowPortOffset, Replay: source.Replay{Mode: source.ReplayRate, PPS: 2e5},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	e, st := runNewEngine(t, EngineConfig{
		Plan:        &plan,
		Source:      src,
		Steering:    hash.SteerConfig{Workers: 2, Key: testKey},
		Flags:       dissect.DefaultFlags,
		Gates:       dissect.AllGates,
		Consumer:    consumer,
		ServiceRate: queues.Rate{BitsPerSec: 1e8}, // a quarter of the ~100 MB/s offered to each worker
		RingSize:    64,
		Virtual:     true,
		Window:      20 * time.Millisecond,
	})
	checkAccounting(t, st, 30000)
	var consumerDrops uint64
	for reason, n := range st.Accounting.Dropped {
		if strings.HasPrefix(string(reason), "consumer/") {
			consumerDrops += n
		}
	}
	if consumerDrops == 0 {
		t.Errorf("no %s drops at a service rate below the offered load: %+v", consumer, st.Accounting)
	}
	st.Started, st.Config.CPUPlan = time.Time{}, ""
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var steps []uint64
	for _, w := range e.workers {
		steps = append(steps, w.stepsByLoops)
	}
	return b, steps
}

// TestEngineWindows checks the window split of a virtual run: 1 Mpps per
// queue for 2.5 ms in 1 ms windows.
func TestEngineWindows(t *testing.T) {
	src := syntheticSource(t, "default", source.SyntheticConfig{Queues: 2, Count: 5000})
	st := runEngine(t, EngineConfig{
		Source:   src,
		Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		Virtual:  true,
		Window:   time.Millisecond,
	})
	checkAccounting(t, st, 5000)
	if len(st.Windows) != 3 {
		t.Fatalf("%d windows, want 3", len(st.Windows))
	}
	for k, want := range []uint64{1000, 1000, 500} {
		for q, got := range st.Windows[k].QueuePackets {
			if got != want {
				t.Errorf("window %d queue %d: %d packets, want %d", k, q, got, want)
			}
		}
	}
}

// TestEngineErrors checks configurations NewEngine refuses and a source that
// fails.
func TestEngineErrors(t *testing.T) {
	src := syntheticSource(t, "default", source.SyntheticConfig{Count: 10})
	for _, tt := range []struct {
		name string
		cfg  EngineConfig
	}{
		{"no source", EngineConfig{Steering: hash.SteerConfig{Workers: 1}}},
		{"no workers", EngineConfig{Source: src}},
		{"CPUs per worker", EngineConfig{Source: src, Steering: hash.SteerConfig{Workers: 2}, Plan: &CPUPlan{WorkerCPUs: []int{0}}}},
		{"unknown consumer", EngineConfig{Source: src, Steering: hash.SteerConfig{Workers: 1}, Consumer: "red"}},
		{"RETA weights", EngineConfig{Source: src, Steering: hash.SteerConfig{Workers: 2, Steer: hash.SteerRETA, RETAWeights: []int{1, 1, 1}}}},
		{"RSS key", EngineConfig{Source: src, Steering: hash.SteerConfig{Workers: 2, Hash: hash.KindToeplitz, RSSKey: make([]byte, 12)}}},
	} {
		if _, err := NewEngine(tt.cfg); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}

	broken := errors.New("broken")
	e, err := NewEngine(EngineConfig{Source: &failingSource{Source: src, err: broken}, Steering: hash.SteerConfig{Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background()); !errors.Is(err, broken) {
		t.Errorf("run on a failing source: %v, want %v", err, broken)
	}
	// No machine here has CPU 1023: pinning to it fails, and so does the run.
	e, err = NewEngine(EngineConfig{
		Source:   syntheticSource(t, "default", source.SyntheticConfig{Count: 100}),
		Steering: hash.SteerConfig{Workers: 1},
		Plan:     &CPUPlan{WorkerCPUs: []int{1023}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "start worker 0") {
		t.Errorf("run with a failing pin: %v, want the worker's pin error", err)
	}
}

type failingSource struct {
	source.Source
	err error
}

func (s *failingSource) Queues() []source.QueueSource {
	return []source.QueueSource{&failingQueue{QueueSource: s.Source.Queues()[0], err: s.err}}
}

type failingQueue struct {
	source.QueueSource
	err error
}

func (q *failingQueue) Receive(b *source.Batch) error {
	if err := q.QueueSource.Receive(b); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return q.err
}

// TestEngineCancel stops an endless live source with its context.
func TestEngineCancel(t *testing.T) {
	src := syntheticSource(t, "default", source.SyntheticConfig{Replay: source.Replay{Mode: source.ReplayRate, PPS: 1e5}, Clock: source.WallClock()})
	e, err := NewEngine(EngineConfig{Source: src, Steering: hash.SteerConfig{Workers: 2, Key: testKey}, ServiceRate: queues.Rate{PacketsPerSec: 2e4}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	st, err := e.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, st, st.Accounting.Received)
	if st.Accounting.Received == 0 {
		t.Error("received nothing in 100 ms")
	}
	// After the run, Stats and the final report read the same counters.
	if live := e.Stats(); live.Queues[0].Stats.Frames != st.Accounting.Received || !reflect.DeepEqual(live.Accounting, st.Accounting) {
		t.Errorf("Stats after the run: %+v, want the report's %+v", live.Accounting, st.Accounting)
	}
}

// TestEngineWindowsBounded replays three frames a million seconds apart on
// the virtual clock with 1 ms windows: the run keeps at most MaxWindows
// windows, each a power-of-two multiple of 1 ms long, and they still add up
// to the run.
func TestEngineWindowsBounded(t *testing.T) {
	src := syntheticSource(t, "ipv4-tcp", source.SyntheticConfig{Count: 3, Replay: source.Replay{Mode: source.ReplayRate, PPS: 1e-6}})
	st := runEngine(t, EngineConfig{
		Source:   src,
		Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		Flags:    dissect.DefaultFlags,
		Virtual:  true,
		Window:   time.Millisecond,
	})
	checkAccounting(t, st, 3)
	if n := len(st.Windows); n == 0 || n > MaxWindows {
		t.Fatalf("%d windows, want 1 to %d", n, MaxWindows)
	}
	w := st.Config.WindowNs
	if w < int64(time.Millisecond) || w%int64(time.Millisecond) != 0 || (w/int64(time.Millisecond))&(w/int64(time.Millisecond)-1) != 0 {
		t.Errorf("window %d ns: want a power-of-two multiple of 1 ms", w)
	}
	if w*int64(len(st.Windows)) < st.DurationNs {
		t.Errorf("%d windows of %d ns do not cover the run's %d ns", len(st.Windows), w, st.DurationNs)
	}
	var frames, served uint64
	for _, win := range st.Windows {
		frames += win.QueuePackets[0]
		served += win.WorkerPackets[0] + win.WorkerPackets[1]
	}
	if frames != 3 || served != 3 {
		t.Errorf("the windows count %d frames received and %d served, want 3 and 3", frames, served)
	}
}

// TestWindowLog checks the merging of windows in pairs by hand.
func TestWindowLog(t *testing.T) {
	l := newWindowLog[int](10)
	for v := range MaxWindows {
		l.closeUntil(int64(v+1)*10, v+1) // window v ends with the counter at v+1
	}
	if len(l.snaps.entries) != MaxWindows || l.length() != 10 {
		t.Fatalf("%d windows of %d before the merge", len(l.snaps.entries), l.length())
	}
	l.push(MaxWindows + 1)
	if len(l.snaps.entries) != MaxWindows/2+1 || l.length() != 20 {
		t.Fatalf("%d windows of %d after the merge, want %d of 20", len(l.snaps.entries), l.length(), MaxWindows/2+1)
	}
	// Window k of 20 ends where window 2k+1 of 10 did.
	for k, want := range map[int]int{-1: 0, 0: 2, 1: 4, MaxWindows/2 - 1: MaxWindows, MaxWindows / 2: MaxWindows + 1, MaxWindows: MaxWindows + 1} {
		if got := l.at(k, 20); got != want {
			t.Errorf("at(%d, 20) = %d, want %d", k, got, want)
		}
	}
	if got := l.at(0, 40); got != 4 {
		t.Errorf("at(0, 40) = %d, want 4", got)
	}
}
