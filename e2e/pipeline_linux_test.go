package e2e

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// testKey is the key of the kernel's SipHash KUnit test: k0 =
// 0x0706050403020100, k1 = 0x0f0e0d0c0b0a0908.
var testKey = hash.Key{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// TestPipelineAFXDP runs the whole pipeline on a lab's Host end (an AF_XDP
// source on every queue, the engine with 2 workers) while the Peer end sends
// every corpus shape, each frame a flow of its own. Each frame must reach
// exactly one worker, the one its hash selects, with the record the slow
// path and hash.Kernel make of it offline; the counters of the source, the
// loops, the workers and the dissectors must add up; and nothing may stay
// attached to Host after the run.
func TestPipelineAFXDP(t *testing.T) {
	const workers = 2
	tests := []struct {
		name   string
		queues int
		cfg    source.AFXDPConfig
		// preload sends every frame before the engine runs, into rings too
		// small for them: the kernel drops the rest, and must count them.
		preload bool
	}{
		{name: "native/2 queues/poll", queues: 2, cfg: source.AFXDPConfig{Mode: source.XDPNative, RxMode: source.RxPoll}},
		{name: "generic/2 queues/poll", queues: 2, cfg: source.AFXDPConfig{Mode: source.XDPGeneric, RxMode: source.RxPoll}},
		{name: "native/4 queues/spin", queues: 4, cfg: source.AFXDPConfig{Mode: source.XDPNative, RxMode: source.RxSpin}},
		{name: "generic/3 queues/spin", queues: 3, cfg: source.AFXDPConfig{Mode: source.XDPGeneric, RxMode: source.RxSpin}},
		{name: "native/2 queues/kernel drops", queues: 2, preload: true,
			cfg: source.AFXDPConfig{Mode: source.XDPNative, RxMode: source.RxPoll, Frames: 64, RingSize: 32, Batch: 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab := xdptest.NewLab(t, vethlab.Config{Queues: tt.queues})
			frames, err := Frames(lab.HostMAC, rounds)
			if err != nil {
				t.Fatal(err)
			}
			want := expect(t, frames, workers)

			cfg := tt.cfg
			cfg.Iface = lab.Host
			src, err := source.OpenAFXDP(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := src.Close(); err != nil {
					t.Error(err)
				}
			})
			if got := xdptest.XDPAttached(t, lab.Host); got != string(cfg.Mode) {
				t.Fatalf("XDP program on %s: %q, want %q", lab.Host, got, cfg.Mode)
			}
			if n := len(src.Queues()); n != tt.queues {
				t.Fatalf("the source opened %d queues, want all %d", n, tt.queues)
			}
			var rec recorders
			e, err := pipeline.NewEngine(pipeline.EngineConfig{
				Source:      src,
				Steering:    hash.SteerConfig{Workers: workers, Key: testKey},
				Flags:       dissect.DefaultFlags,
				Gates:       dissect.AllGates,
				NewConsumer: rec.factory,
			})
			if err != nil {
				t.Fatal(err)
			}

			if tt.preload {
				xdptest.Send(t, lab, frames)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Run may deliver before the Close it started on the source is
			// done: the source is closed again below to wait for it.
			done := xdptest.Go(func() (*runstats.RunStats, error) { return e.Run(ctx) })
			if !tt.preload {
				xdptest.Send(t, lab, frames)
			}
			waitAccounted(t, e, uint64(len(frames)), 10*time.Second)
			cancel()
			var r xdptest.Result[*runstats.RunStats]
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the engine still runs 10 s after its context ended")
			}
			if r.Err != nil {
				t.Fatalf("run: %v", r.Err)
			}
			// Wait for the Close that Run started.
			if err := src.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if got := xdptest.XDPAttached(t, lab.Host); got != "" {
				t.Errorf("XDP program on %s after Close: %q, want none", lab.Host, got)
			}

			got := checkRecords(t, want, rec.all, !tt.preload)
			checkRunStats(t, r.Value, got, uint64(len(frames)), tt.preload)
			// A frame arrives on Host's receive queue numbered like the
			// Peer transmit queue that the sending stack picked by its
			// flow hash; in generic mode (no NAPI on Host) the kernel takes
			// that number minus one, so the last queue gets nothing.
			if cfg.Mode == source.XDPNative && len(got.perQueue) != tt.queues {
				t.Errorf("frames came on %d of %d queues: %v", len(got.perQueue), tt.queues, got.perQueue)
			}
			t.Logf("rx %s; frames per queue %v, per worker %v; kernel drops %v",
				src.(*source.AFXDP).RxMode(), got.perQueue, got.perWorker, r.Value.Accounting.KernelDrops)
		})
	}
}

// expected is what the pipeline must make of one frame.
type expected struct {
	rec    queues.Record // Arrival, Queue and Path zero: they depend on the run
	worker int
}

// expect computes, offline, what the pipeline must make of each frame: the
// slow path's keys, hash.Kernel's hash with testKey, and the worker that
// get_rps_cpu picks from an RPS map of workers CPUs. It fails the test if
// two frames would make the same record: the test could not tell them
// apart.
func expect(tb testing.TB, frames [][]byte, workers int) map[queues.Record]expected {
	tb.Helper()
	kern := hash.NewKernel(testKey)
	// The engine's workers stand for CPUs 0 to workers-1 of an RPS map.
	cpus := make([]int, workers)
	for w := range cpus {
		cpus[w] = w
	}
	rps, err := hash.NewRPSMap(cpus)
	if err != nil {
		tb.Fatal(err)
	}
	want := make(map[queues.Record]expected, len(frames))
	for i, f := range frames {
		var keys dissect.FlowKeys
		dissect.DissectFrame(&keys, f, dissect.DefaultFlags)
		var e expected
		e.rec.FromKeys(&keys)
		e.rec.Hash, e.rec.L4 = kern.Hash(&keys)
		e.rec.HashSource = hash.SourceKernel
		e.rec.Len = uint32(len(f))
		if e.worker = rps.CPU(e.rec.Hash); e.worker < 0 {
			tb.Fatalf("frame %d hashes to 0, which steers nowhere", i)
		}
		if _, dup := want[e.rec]; dup {
			tb.Fatalf("frame %d makes the same record as an earlier frame: %s", i, describe(e.rec))
		}
		want[e.rec] = e
	}
	return want
}

// delivered is what the workers' consumers got, counted.
type delivered struct {
	perQueue  map[int]uint64 // records by receive queue
	perWorker []uint64
	perPath   map[dissect.Path]uint64 // records by the dissector that made their keys
	total     uint64
}

// checkRecords checks the records each worker's consumer got against want:
// each a frame sent, at most once (exactly once when all), on the worker its
// hash selects, with the record made offline.
func checkRecords(tb testing.TB, want map[queues.Record]expected, byWorker []*recorder, all bool) delivered {
	tb.Helper()
	d := delivered{perQueue: map[int]uint64{}, perWorker: make([]uint64, len(byWorker)), perPath: map[dissect.Path]uint64{}}
	seen := make(map[queues.Record]int, len(want))
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= maxReported {
			tb.Errorf(format, args...)
		}
	}
	for w, c := range byWorker {
		for _, r := range c.got {
			d.perQueue[int(r.Queue)]++
			d.perWorker[w]++
			d.perPath[r.Path]++
			d.total++
			id := r
			id.Arrival, id.Queue, id.Path = 0, 0, 0
			e, ok := want[id]
			switch {
			case !ok:
				report("worker %d got a record of no frame sent (or with other keys, hash or length than offline): %s", w, describe(r))
			case e.worker != w:
				report("worker %d got the record of a frame its hash steers to worker %d: %s", w, e.worker, describe(r))
			}
			seen[id]++
		}
	}
	missing := 0
	for id := range want {
		switch n := seen[id]; {
		case n == 0:
			missing++
		case n > 1:
			report("a frame reached the workers %d times: %s", n, describe(id))
		}
	}
	if bad > maxReported {
		tb.Errorf("... and %d more wrong records", bad-maxReported)
	}
	if all && missing > 0 {
		tb.Errorf("%d of %d frames never reached a worker", missing, len(want))
	}
	return d
}

// maxReported bounds the wrong records a test reports one by one.
const maxReported = 10

// describe is a record in a line: its flow, length, hash and where it came
// from.
func describe(r queues.Record) string {
	return fmt.Sprintf("%s:%d -> %s:%d proto %d ethertype %#04x, %d bytes, hash %#08x l4 %v, queue %d, path %s",
		r.SrcAddr(), r.SPort, r.DstAddr(), r.DPort, r.IPProto, r.NProto, r.Len, r.Hash, r.L4, r.Queue, r.Path)
}

// checkRunStats checks that the run's statistics add up and agree with what
// the consumers got: sent frames were received or dropped by the kernel
// (counted), received ones processed (nothing is dropped after the
// source), and the queues', loops', workers' and dissectors' counters agree.
func checkRunStats(tb testing.TB, st *runstats.RunStats, got delivered, sent uint64, kernelDrops bool) {
	tb.Helper()
	acc := st.Accounting
	if !acc.Balanced || acc.Received != acc.Processed || acc.Received != got.total {
		tb.Errorf("accounting %+v; the consumers got %d records", acc, got.total)
	}
	for stage, n := range acc.Dropped {
		if n != 0 {
			tb.Errorf("%d frames dropped at %s, want none", n, stage)
		}
	}
	for _, k := range []string{"rx_dropped", "rx_invalid_descs", "rx_ring_full"} {
		if _, ok := acc.KernelDrops[k]; !ok {
			tb.Errorf("no kernel drop counter %q in %v", k, acc.KernelDrops)
		}
	}
	var kdrops, queueFrames uint64
	steered := make([]uint64, len(st.Workers))
	for _, q := range st.Queues {
		kdrops += q.Stats.KernelDrops()
		queueFrames += q.Stats.Frames
		if q.Stats.Frames != got.perQueue[q.Queue] {
			tb.Errorf("queue %d counted %d frames; the workers got %d from it", q.Queue, q.Stats.Frames, got.perQueue[q.Queue])
		}
		var sum uint64
		for w, n := range q.Steered {
			sum += n
			steered[w] += n
		}
		if sum != q.Stats.Frames {
			tb.Errorf("queue %d steered %v, %d in all, of %d frames", q.Queue, q.Steered, sum, q.Stats.Frames)
		}
	}
	if sum := sumValues(acc.KernelDrops); sum != kdrops {
		tb.Errorf("accounting counts %d kernel drops, the queues %d", sum, kdrops)
	}
	if queueFrames != acc.Received {
		tb.Errorf("the queues counted %d frames, the accounting %d received", queueFrames, acc.Received)
	}
	switch {
	case acc.Received+kdrops != sent:
		tb.Errorf("sent %d frames: %d received, %d dropped by the kernel", sent, acc.Received, kdrops)
	case kernelDrops && kdrops == 0:
		tb.Errorf("%d frames sent into rings of 32 before the run: the kernel dropped none", sent)
	case !kernelDrops && kdrops != 0:
		tb.Errorf("the kernel dropped %d frames", kdrops)
	}
	for w, wr := range st.Workers {
		if wr.Packets != got.perWorker[w] || wr.Packets != steered[w] || wr.Consumer.Dequeued+uint64(wr.Consumer.Backlog) != wr.Packets {
			tb.Errorf("worker %d took %d packets, was steered %d, its consumer got %d, served %d, holds %d",
				w, wr.Packets, steered[w], got.perWorker[w], wr.Consumer.Dequeued, wr.Consumer.Backlog)
		}
		if wr.Packets == 0 {
			tb.Errorf("worker %d got nothing: the hashes do not spread", w)
		}
	}
	var runs uint64
	for s := range dissect.NumShapes {
		c := st.Shapes.Shape[s]
		runs += c.Fast + c.Slow
		if c.Fast != got.perPath[dissect.FastPath(s)] {
			tb.Errorf("shape %s: %d frames on its fast path, %d records say so", s, c.Fast, got.perPath[dissect.FastPath(s)])
		}
	}
	if runs+st.Shapes.Other != acc.Received {
		tb.Errorf("the dissectors counted %d frames, %d received", runs+st.Shapes.Other, acc.Received)
	}
}

func sumValues(m map[string]uint64) uint64 {
	var n uint64
	for v := range maps.Values(m) {
		n += v
	}
	return n
}

// waitAccounted waits until the workers have taken, and the kernel dropped,
// n frames in all, for timeout at most; the test then checks whether they
// are the right ones. The counters signal nothing: they are polled.
func waitAccounted(tb testing.TB, e *pipeline.Engine, n uint64, timeout time.Duration) {
	tb.Helper()
	var got uint64
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s := e.Stats()
		got = 0
		for _, w := range s.Workers {
			got += w.Packets
		}
		for _, q := range s.Queues {
			got += q.Stats.KernelDrops()
		}
		if got >= n {
			return
		}
	}
	tb.Errorf("after %s, %d of %d frames taken by the workers or dropped by the kernel", timeout, got, n)
}

// recorder is a fifo consumer that keeps every record its worker gives it.
type recorder struct {
	*queues.FIFO
	got []queues.Record
}

func (c *recorder) Enqueue(recs []queues.Record, now int64) {
	c.got = append(c.got, recs...)
	c.FIFO.Enqueue(recs, now)
}

// recorders are the recorders of an engine's workers.
type recorders struct{ all []*recorder }

// factory is the engine's ConsumerFactory: NewEngine calls it for worker 0,
// 1, ... in order. The fifo holds every frame a test sends.
func (rs *recorders) factory(w int) queues.Consumer {
	c := &recorder{FIFO: queues.NewFIFO(1 << 16)}
	rs.all = append(rs.all, c)
	if len(rs.all) != w+1 {
		panic("consumers made out of order")
	}
	return c
}
