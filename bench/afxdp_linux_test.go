package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// BenchmarkAFXDPPipeline measures the whole pipeline on live traffic
// against the bare receive loop on the same sockets, interleaved in one run
// so that machine noise hits both alike:
//
//   - pipeline: AF_XDP on every queue of a veth lab's Host end (native XDP),
//     then dissect, hash and steer on each queue's receive loop to 2
//     workers, each feeding fifo at "max" (pipeline.Engine);
//   - drain: source.Drain on the same configuration, which takes frames
//     off the rings and does nothing with them.
//
// Both are fed by the XDP live-frames generator (pktgen's xdp mode, the
// simple profile: 64-byte IPv4 and IPv6 TCP/UDP frames, 1024 flows) from
// the lab's Peer end, one thread per queue pinned to CPU q, whose XDP_TX
// frames arrive on Host's queue q: the generator thread's CPU also runs that
// queue's kernel receive work (the redirect program and the copy into the
// UMEM). The generator sends as fast as it can; what the receivers do not
// take in time the kernel drops (counted: kdrop-share).
//
// One op is one frame through each contender: with -benchtime Nx each
// takes N frames in benchRounds rounds, in the order drain, pipeline,
// pipeline, drain, ...; each round opens its own sockets, lets them warm
// up, and times the frames the pipeline's consumers served (or Drain took)
// by polling the counters every millisecond. Mpps and ns/op are the
// pipeline's (frames its consumers served), rx-Mpps what its receive loops
// took off the rings meanwhile, drain-Mpps the bare loop's, pct-of-drain
// Mpps over drain-Mpps. ring-drop-share is the pipeline's drops at its
// worker rings over the frames it received; kdrop-share and
// drain-kdrop-share are the kernel's drops (AF_XDP ring full, fill ring
// empty) over the frames that reached the sockets.
//
//	go test -run '^$' -bench AFXDPPipeline -benchtime 1000000x -count 5 ./bench
func BenchmarkAFXDPPipeline(b *testing.B) {
	for _, queues := range []int{1, 2} {
		for _, rx := range []source.RxMode{source.RxPoll, source.RxSpin} {
			b.Run(fmt.Sprintf("queues=%d/rx=%s", queues, rx), func(b *testing.B) {
				benchAFXDPPipeline(b, queues, rx)
			})
		}
	}
}

// BenchmarkAFXDPPinned is issue 28's comparison: the whole pipeline on one
// CPU against the bare receive loop on the same CPU, in interleaved rounds.
//
//   - pipeline: AF_XDP on the one queue of a veth lab's Host end (native
//     XDP), dissect, hash and steer to one fifo worker, on the CPU plan
//     that `xdphash run` makes when the kernel's receive work runs on
//     another CPU: the receive loop placed on the receiving CPU, with one
//     Go processor, so that it steps the worker itself (pipeline.PlanCPUs);
//   - bare: bareLoop, a goroutine pinned to the same CPU that takes frames
//     off the same kind of socket and gives them back to the fill ring, and
//     does nothing else.
//
// Both run under the XDP program the sub-benchmark's program names: plain
// (the redirect alone, --xdp-metadata=false) or metadata (the device-bound
// program that writes each frame's device metadata, the default of `xdphash
// run` on a native-mode device).
//
// The generator (pktgen's xdp mode, the simple profile, one thread) runs on
// the first allowed CPU, which also runs the queue's kernel receive work
// (its XDP_TX frames arrive on Host's queue 0 there, in softirq); the
// receivers run on the second. Each of pinnedRounds rounds runs every
// contender, in turn first, each on fresh sockets, and times
// b.N/pinnedRounds frames (timeFrames). Mpps and bare-Mpps are the medians
// over the rounds, pct-of-bare the median of the rounds' pipeline/bare
// ratios (min and max beside it), ns/op the pipeline's time per frame over
// all rounds. The generator's CPU is saturated, so the rates measure what
// the kernel delivers, less what each receiver costs it: kernel-ns and
// bare-kernel-ns are the medians of the softirq time on the generator's CPU
// per frame received (the receive work: the veth's NAPI poll, the XDP
// program, the copy into the UMEM, the wake-ups), and rx-cpu-ns and
// bare-rx-cpu-ns the receiving CPU's busy time per frame. The rounds are
// logged (-test.v). With XDPHASH_BENCH_XDPDRAIN naming a C receive loop
// built outside the tree (docs/afxdp.md has its interface and build), it
// runs as a third contender in every round (cRound), always under libxdp's
// own plain redirect program, and C-Mpps, pct-of-C, C-kernel-ns and
// C-rx-cpu-ns are its figures. Two variants of the bare loop tell the
// pipeline's costs apart, each run when its variable is set and reported
// as NAME-Mpps, NAME-pct-of-bare, NAME-kernel-ns, NAME-rx-cpu-ns and
// pct-of-NAME (the median of the rounds' pipeline/NAME ratios):
// XDPHASH_BENCH_TOUCH runs touchRound, reading the bytes of each frame the
// dissector reads (what reading the frames costs the kernel), and
// XDPHASH_BENCH_WORK runs workRound, dissecting and hashing a frame of its
// own for each frame (what the pipeline's work costs, without reading the
// frames).
//
//	go test -c -o /tmp/bench.test ./bench
//	cd bench && /tmp/bench.test -test.run '^$' -test.bench AFXDPPinned -test.benchtime 11000000x -test.v
func BenchmarkAFXDPPinned(b *testing.B) {
	for _, rx := range []source.RxMode{source.RxSpin, source.RxPoll} {
		for _, program := range []string{"plain", "metadata"} {
			b.Run("rx="+string(rx)+"/program="+program, func(b *testing.B) { benchAFXDPPinned(b, rx, program == "plain") })
		}
	}
}

// pinnedRounds is BenchmarkAFXDPPinned's rounds: odd, for a median.
const pinnedRounds = 11

func benchAFXDPPinned(b *testing.B, rx source.RxMode, plain bool) {
	cpus, err := kernel.AllowedCPUs()
	if err != nil {
		b.Fatal(err)
	}
	if len(cpus) < 2 {
		xdptest.Unavailable(b, "the generator and the receivers need a CPU each; this process may use %v", cpus)
	}
	genCPU, rxCPU := cpus[0], cpus[1]
	lab := xdptest.NewLab(b, vethlab.Config{Queues: 1})
	stop := startGenerator(b, lab, []int{genCPU})
	defer stop()

	cfg := source.AFXDPConfig{Iface: lab.Host, Mode: source.XDPNative, RxMode: rx, NoMetadata: plain}
	plan := pipeline.PlanCPUs(pipeline.CPUInput{
		Loops: 1, Workers: 1, Procs: 1, KernelFed: true, RxMode: rx,
		Allowed: []int{genCPU, rxCPU}, KernelCPUs: []int{genCPU},
	})
	if !slices.Equal(plan.PlaceCPUs, []int{rxCPU}) || !plan.LoopsStepWorkers {
		b.Fatalf("CPU plan %v: want the receive loop on CPU %d, stepping its worker", plan.Why, rxCPU)
	}
	perRound := max(1, uint64(b.N)/pinnedRounds)
	cpusOf := roundCPUs{gen: genCPU, rx: rxCPU}
	contenders := []func() afxdpRound{
		func() afxdpRound { return bareRound(b, cfg, cpusOf, perRound) },
		func() afxdpRound { return pipelineRound(b, cfg, 1, &plan, &cpusOf, perRound) },
	}
	cLoop, cIndex := os.Getenv("XDPHASH_BENCH_XDPDRAIN"), -1
	if cLoop != "" {
		cIndex = len(contenders)
		contenders = append(contenders, func() afxdpRound { return cRound(b, cLoop, lab.Host, cpusOf, rx, perRound) })
	}
	// The bare loop's variants that are asked for, each against the bare
	// loop: name and index in contenders.
	type variant struct {
		name  string
		index int
	}
	var variants []variant
	for _, v := range []struct {
		name, env string
		round     func() afxdpRound
	}{
		{"touch", "XDPHASH_BENCH_TOUCH", func() afxdpRound { return touchRound(b, cfg, cpusOf, perRound) }},
		{"work", "XDPHASH_BENCH_WORK", func() afxdpRound { return workRound(b, cfg, cpusOf, perRound) }},
	} {
		if os.Getenv(v.env) != "" {
			variants = append(variants, variant{v.name, len(contenders)})
			contenders = append(contenders, v.round)
		}
	}
	// Per contender (bare, pipeline, then C and the variants), the rounds'
	// figures.
	mpps, kernelNs, rxNs := make([][]float64, len(contenders)), make([][]float64, len(contenders)), make([][]float64, len(contenders))
	var ratio, cRatio []float64
	// Per variant, the rounds' ratios: the variant to bare, the pipeline
	// to the variant.
	variantRatio, pipeToVariant := make([][]float64, len(variants)), make([][]float64, len(variants))
	var pipeTotal afxdpRound
	b.ResetTimer()
	for round := range pinnedRounds {
		r := make([]afxdpRound, len(contenders))
		for k := range contenders {
			i := (round + k) % len(contenders) // each goes first in turn
			r[i] = contenders[i]()
		}
		for i, ri := range r {
			mpps[i] = append(mpps[i], ri.mpps())
			kernelNs[i] = append(kernelNs[i], ri.kernelNsPerFrame())
			rxNs[i] = append(rxNs[i], ri.rxNsPerFrame())
		}
		rb, rp := r[0], r[1]
		ratio = append(ratio, rp.mpps()/rb.mpps())
		pipeTotal.add(rp)
		b.Logf("round %d: bare %s; pipeline %s, ring drops %d: %.1f%%", round, rb, rp, rp.ringDrops, 100*rp.mpps()/rb.mpps())
		if cIndex >= 0 {
			rc := r[cIndex]
			cRatio = append(cRatio, rp.mpps()/rc.mpps())
			b.Logf("round %d: C %s: pipeline %.1f%% of it", round, rc, 100*rp.mpps()/rc.mpps())
		}
		for i, v := range variants {
			rv := r[v.index]
			variantRatio[i] = append(variantRatio[i], rv.mpps()/rb.mpps())
			pipeToVariant[i] = append(pipeToVariant[i], rp.mpps()/rv.mpps())
			b.Logf("round %d: %s %s: %.1f%% of bare; pipeline %.1f%% of it", round, v.name, rv, 100*rv.mpps()/rb.mpps(), 100*rp.mpps()/rv.mpps())
		}
	}
	b.StopTimer()
	b.ReportMetric(median(mpps[1]), "Mpps")
	b.ReportMetric(median(mpps[0]), "bare-Mpps")
	b.ReportMetric(100*median(ratio), "pct-of-bare")
	b.ReportMetric(100*slices.Min(ratio), "pct-min")
	b.ReportMetric(100*slices.Max(ratio), "pct-max")
	b.ReportMetric(median(kernelNs[1]), "kernel-ns")
	b.ReportMetric(median(kernelNs[0]), "bare-kernel-ns")
	b.ReportMetric(median(rxNs[1]), "rx-cpu-ns")
	b.ReportMetric(median(rxNs[0]), "bare-rx-cpu-ns")
	if cIndex >= 0 {
		b.ReportMetric(median(mpps[cIndex]), "C-Mpps")
		b.ReportMetric(100*median(cRatio), "pct-of-C")
		b.ReportMetric(median(kernelNs[cIndex]), "C-kernel-ns")
		b.ReportMetric(median(rxNs[cIndex]), "C-rx-cpu-ns")
	}
	for i, v := range variants {
		b.ReportMetric(median(mpps[v.index]), v.name+"-Mpps")
		b.ReportMetric(100*median(variantRatio[i]), v.name+"-pct-of-bare")
		b.ReportMetric(100*median(pipeToVariant[i]), "pct-of-"+v.name)
		b.ReportMetric(median(kernelNs[v.index]), v.name+"-kernel-ns")
		b.ReportMetric(median(rxNs[v.index]), v.name+"-rx-cpu-ns")
	}
	b.ReportMetric(float64(pipeTotal.ringDrops)/float64(max(1, pipeTotal.received)), "ring-drop-share")
	b.ReportMetric(float64(pipeTotal.elapsed.Nanoseconds())/float64(pipeTotal.frames), "ns/op")
}

// roundCPUs are the CPUs whose time a round reads: the generator's, which
// runs the kernel's receive work in softirq, and the receiver's.
type roundCPUs struct{ gen, rx int }

// bareRound times n frames through bareLoop on cpus.rx.
func bareRound(b *testing.B, cfg source.AFXDPConfig, cpus roundCPUs, n uint64) afxdpRound {
	return loopRound(b, cfg, cpus, n, nil)
}

// touchRound times n frames through bareLoop on cpus.rx, reading the bytes
// of each frame that the dissector reads of an Ethernet, IPv4 and TCP
// frame (its first and its 38th): what reading the frames costs, apart from
// the pipeline's work.
func touchRound(b *testing.B, cfg source.AFXDPConfig, cpus roundCPUs, n uint64) afxdpRound {
	var sum byte
	r := loopRound(b, cfg, cpus, n, func(batch *source.Batch) {
		for _, f := range batch.Frames {
			if len(f) >= 38 {
				sum += f[0] + f[37]
			}
		}
	})
	touchSum = sum
	return r
}

// touchSum keeps touchRound's reads from being compiled away.
var touchSum byte

// workRound times n frames through bareLoop on cpus.rx, dissecting and
// hashing for each frame a frame of its own (an Ethernet, IPv4 and TCP
// frame) instead of the frame: the pipeline's dissect and hash without
// reading the UMEM, which tells what the receiver's own work costs the
// kernel's CPU apart from reading the frames.
func workRound(b *testing.B, cfg source.AFXDPConfig, cpus roundCPUs, n uint64) afxdpRound {
	own := dissect.SampleFrame(dissect.ShapeEthIP)
	d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
	h := hash.NewKernel(benchKey)
	var keys [source.DefaultAFXDPBatch]dissect.FlowKeys
	var hashes [source.DefaultAFXDPBatch]uint32
	var l4 [source.DefaultAFXDPBatch]bool
	var sum uint32
	r := loopRound(b, cfg, cpus, n, func(batch *source.Batch) {
		m := min(len(batch.Frames), len(keys))
		for i := range m {
			d.DissectFrame(&keys[i], own)
		}
		h.HashBatch(keys[:m], hashes[:m], l4[:m])
		sum += hashes[0]
	})
	workSum = sum
	return r
}

// workSum keeps workRound's work from being compiled away.
var workSum uint32

// loopRound times n frames through bareLoop on cpus.rx, which calls each
// (nil: nothing) with every batch.
func loopRound(b *testing.B, cfg source.AFXDPConfig, cpus roundCPUs, n uint64, each func(*source.Batch)) afxdpRound {
	src := openRound(b, cfg)
	defer src.Close() // on b.Fatal; a second Close changes nothing
	q := src.Queues()[0]
	done := make(chan error, 1)
	go func() { done <- bareLoop(q, cpus.rx, each) }()
	r := timeFrames(b, n, &cpus, func() (uint64, uint64) {
		got := q.Stats().Frames
		return got, got
	})
	if err := errors.Join(src.Close(), <-done); err != nil {
		b.Fatal(err)
	}
	st := q.Stats()
	r.received, r.kernelDrops = st.Frames, st.KernelDrops()
	return r
}

// cRound times n frames through the C receive loop at path (run as
// "path IFACE CPU N MODE GENCPU", MODE spin or poll as rx: how it waits on
// an empty ring), which pins itself to cpus.rx, times n frames after its
// first and a warm-up as timeFrames does, and prints the frames and
// nanoseconds timed, every frame it took, its socket's rx_dropped,
// rx_ring_full and rx_fill_ring_empty_descs, and the /proc/stat ticks
// over the timed frames of softirq on GENCPU and busy time on CPU.
func cRound(b *testing.B, path, iface string, cpus roundCPUs, rx source.RxMode, n uint64) afxdpRound {
	ctx, cancel := context.WithTimeout(context.Background(), roundLimit)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, iface, strconv.Itoa(cpus.rx), strconv.FormatUint(n, 10), string(rx), strconv.Itoa(cpus.gen)).Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		b.Fatalf("C receive loop %s: %v: %s", path, err, ee.Stderr)
	} else if err != nil {
		b.Fatalf("C receive loop %s: %v", path, err)
	}
	var frames, ns, received, dropped, full, fillEmpty, softirq, busy uint64
	if _, err := fmt.Sscan(string(out), &frames, &ns, &received, &dropped, &full, &fillEmpty, &softirq, &busy); err != nil {
		b.Fatalf("C receive loop %s printed %q: %v", path, out, err)
	}
	const tick = time.Second / 100 // USER_HZ
	return afxdpRound{frames: frames, timedReceived: frames, elapsed: time.Duration(ns), received: received, kernelDrops: dropped + full,
		genSoftirq: time.Duration(softirq) * tick, rxBusy: time.Duration(busy) * tick}
}

// bareLoop is the bare receive loop on one CPU: it pins its thread to cpu,
// then takes batches off q (each Receive gives the previous batch's frames
// back to the fill ring) and does nothing with them but call each (when not
// nil), until q's source is closed. The thread stays locked, so that it ends
// with the goroutine and its affinity with it.
func bareLoop(q source.QueueSource, cpu int, each func(*source.Batch)) error {
	runtime.LockOSThread()
	if err := kernel.SetAffinity(cpu); err != nil {
		return err
	}
	b := source.NewBatch(source.DefaultAFXDPBatch)
	for {
		if err := q.Receive(b); err != nil {
			if errors.Is(err, source.ErrClosed) {
				return nil
			}
			return err
		}
		if each != nil {
			each(b)
		}
	}
}

const (
	// benchRounds is the rounds per contender; an even number, so that
	// each goes first as often as second.
	benchRounds = 4
	// benchWorkers is the pipeline's workers.
	benchWorkers = 2
	// warmUp is the time a round runs before the timing starts: long
	// enough for the rings and the workers' idle loops to settle.
	warmUp = 50 * time.Millisecond
	// roundLimit bounds a round, genLimit the generator.
	roundLimit = time.Minute
	genLimit   = 30 * time.Minute
)

// benchKey is the pipeline's SipHash key: any fixed key, so that every
// round partitions the flows alike.
var benchKey = hash.Key{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// afxdpRound is what one round of a contender measured.
type afxdpRound struct {
	frames        uint64        // frames timed: served by the consumers, or taken by Drain
	timedReceived uint64        // frames taken off the rings meanwhile
	elapsed       time.Duration // their time
	// Over the whole round: frames received off the rings, dropped by the
	// kernel before them, and dropped at the pipeline's worker rings.
	received, kernelDrops, ringDrops uint64
	// Over the timed frames (BenchmarkAFXDPPinned's rounds only): the
	// softirq time of the generator's CPU and the busy time of the
	// receiver's.
	genSoftirq, rxBusy time.Duration
	genBusy            time.Duration // the generator's CPU, all its busy time (Go contenders only)
}

// kernelNsPerFrame is the generator CPU's softirq time per frame received.
func (r afxdpRound) kernelNsPerFrame() float64 {
	return float64(r.genSoftirq.Nanoseconds()) / float64(max(1, r.timedReceived))
}

// rxNsPerFrame is the receiving CPU's busy time per frame received.
func (r afxdpRound) rxNsPerFrame() float64 {
	return float64(r.rxBusy.Nanoseconds()) / float64(max(1, r.timedReceived))
}

func (r afxdpRound) String() string {
	s := fmt.Sprintf("%.3f Mpps (kernel drops %.1f%%)", r.mpps(), 100*r.kernelDropShare())
	if r.genSoftirq > 0 || r.rxBusy > 0 {
		s += fmt.Sprintf(", kernel %.0f ns and receiver %.0f ns a frame", r.kernelNsPerFrame(), r.rxNsPerFrame())
		if r.genBusy > 0 {
			s += fmt.Sprintf(" (generator's CPU busy %.0f%%)", 100*r.genBusy.Seconds()/r.elapsed.Seconds())
		}
	}
	return s
}

func (r *afxdpRound) add(o afxdpRound) {
	r.frames += o.frames
	r.timedReceived += o.timedReceived
	r.elapsed += o.elapsed
	r.received += o.received
	r.kernelDrops += o.kernelDrops
	r.ringDrops += o.ringDrops
	r.genSoftirq += o.genSoftirq
	r.rxBusy += o.rxBusy
}

func (r afxdpRound) mpps() float64 { return float64(r.frames) / r.elapsed.Seconds() / 1e6 }

func (r afxdpRound) kernelDropShare() float64 {
	return float64(r.kernelDrops) / float64(max(1, r.received+r.kernelDrops))
}

func benchAFXDPPipeline(b *testing.B, queues int, rx source.RxMode) {
	lab := xdptest.NewLab(b, vethlab.Config{Queues: queues})
	cpus, err := kernel.AllowedCPUs()
	if err != nil {
		b.Fatal(err)
	}
	if len(cpus) < queues {
		xdptest.Unavailable(b, "%d queues need a generator thread on each of %d CPUs; this process may use %v", queues, queues, cpus)
	}
	stop := startGenerator(b, lab, cpus[:queues])
	defer stop()

	cfg := source.AFXDPConfig{Iface: lab.Host, Mode: source.XDPNative, RxMode: rx}
	perRound := max(1, uint64(b.N)/benchRounds)
	pipe2 := func(b *testing.B, cfg source.AFXDPConfig, n uint64) afxdpRound {
		return pipelineRound(b, cfg, benchWorkers, nil, nil, n)
	}
	contenders := [2]func(*testing.B, source.AFXDPConfig, uint64) afxdpRound{drainRound, pipe2}
	var drain, pipe afxdpRound
	totals := [2]*afxdpRound{&drain, &pipe}
	b.ResetTimer()
	for round := range benchRounds {
		for k := range 2 {
			c := (round + k) % 2 // drain first in even rounds
			totals[c].add(contenders[c](b, cfg, perRound))
		}
	}
	b.StopTimer()
	b.ReportMetric(pipe.mpps(), "Mpps")
	b.ReportMetric(float64(pipe.elapsed.Nanoseconds())/float64(pipe.frames), "ns/op")
	b.ReportMetric(float64(pipe.timedReceived)/pipe.elapsed.Seconds()/1e6, "rx-Mpps")
	b.ReportMetric(drain.mpps(), "drain-Mpps")
	b.ReportMetric(100*pipe.mpps()/drain.mpps(), "pct-of-drain")
	b.ReportMetric(float64(pipe.ringDrops)/float64(max(1, pipe.received)), "ring-drop-share")
	b.ReportMetric(pipe.kernelDropShare(), "kdrop-share")
	b.ReportMetric(drain.kernelDropShare(), "drain-kdrop-share")
}

// startGenerator sends the simple profile from lab's Peer end with the XDP
// live-frames generator, a thread pinned to each of cpus, until the returned
// function is called (or genLimit passes).
func startGenerator(tb testing.TB, lab *vethlab.Lab, cpus []int) (stop func()) {
	tb.Helper()
	p, err := pktgen.Builtin("simple")
	if err != nil {
		tb.Fatal(err)
	}
	s, err := pktgen.NewSchedule(p, pktgen.MACs{Dst: lab.HostMAC})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := pktgen.Run(ctx, s, pktgen.Config{
			Iface: lab.Peer, Enter: lab.InPeer, Mode: pktgen.ModeXDP,
			Threads: len(cpus), CPUs: cpus, Duration: genLimit,
		})
		done <- err
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			tb.Error(err)
		}
	}
}

// openRound opens the AF_XDP source of a round.
func openRound(b *testing.B, cfg source.AFXDPConfig) source.Source {
	src, err := source.OpenAFXDP(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// drainRound times n frames through source.Drain.
func drainRound(b *testing.B, cfg source.AFXDPConfig, n uint64) afxdpRound {
	src := openRound(b, cfg)
	defer src.Close() // on b.Fatal; a second Close changes nothing
	done := make(chan error, 1)
	go func() {
		_, err := source.Drain(src, math.MaxUint64, time.Now().Add(roundLimit))
		done <- err
	}()
	r := timeFrames(b, n, nil, func() (uint64, uint64) {
		var got uint64
		for _, q := range src.Queues() {
			got += q.Stats().Frames
		}
		return got, got
	})
	if err := errors.Join(src.Close(), <-done); err != nil {
		b.Fatal(err)
	}
	for _, q := range src.Queues() {
		st := q.Stats()
		r.received += st.Frames
		r.kernelDrops += st.KernelDrops()
	}
	return r
}

// pipelineRound times n frames through the engine with workers fifo
// workers, on plan (nil: the engine's own), reading the times of cpus (nil:
// none).
func pipelineRound(b *testing.B, cfg source.AFXDPConfig, workers int, plan *pipeline.CPUPlan, cpus *roundCPUs, n uint64) afxdpRound {
	src := openRound(b, cfg)
	defer src.Close() // on b.Fatal; a second Close changes nothing
	if plan != nil && plan.Procs > 0 {
		// As `xdphash run` does: the plan was made for this many
		// processors, and with more the loop and its worker's goroutine
		// take turns on the receiving CPU through the kernel's scheduler.
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(plan.Procs))
	}
	mk, err := queues.ConsumerConfig{}.New("fifo")
	if err != nil {
		b.Fatal(err)
	}
	var served atomic.Uint64
	e, err := pipeline.NewEngine(pipeline.EngineConfig{
		Source:      src,
		Steering:    hash.SteerConfig{Workers: workers, Key: benchKey},
		Flags:       dissect.DefaultFlags,
		Gates:       dissect.AllGates,
		Plan:        plan,
		NewConsumer: func(int) queues.Consumer { return countingConsumer{mk(), &served} },
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), roundLimit)
	defer cancel()
	done := xdptest.Go(func() (*runstats.RunStats, error) { return e.Run(ctx) })
	// The counters as the bare loop's round reads them: no Engine.Stats,
	// which allocates and takes the workers' locks.
	r := timeFrames(b, n, cpus, func() (uint64, uint64) {
		var received uint64
		for _, q := range src.Queues() {
			received += q.Stats().Frames
		}
		return served.Load(), received
	})
	cancel()
	res := <-done
	if err := errors.Join(res.Err, src.Close()); err != nil {
		b.Fatal(err)
	}
	acc := res.Value.Accounting
	r.received = acc.Received
	for _, n := range acc.KernelDrops {
		r.kernelDrops += n
	}
	for _, n := range acc.Dropped {
		r.ringDrops += n
	}
	return r
}

// countingConsumer is a consumer that also adds what it serves to served,
// for a round to read while the engine runs.
type countingConsumer struct {
	queues.Consumer
	served *atomic.Uint64
}

func (c countingConsumer) Dequeue(now int64, budget queues.Budget, out []queues.Record) []queues.Record {
	n := len(out)
	out = c.Consumer.Dequeue(now, budget, out)
	c.served.Add(uint64(len(out) - n))
	return out
}

// timeFrames waits for the first frame and warmUp, then times n more frames
// by count, polling it every millisecond, and reads the times of cpus (nil:
// none) over them. count returns the frames done (the contender's output)
// and received (taken off the rings) so far.
func timeFrames(b *testing.B, n uint64, cpus *roundCPUs, count func() (done, received uint64)) afxdpRound {
	deadline := time.Now().Add(roundLimit)
	for d, _ := count(); d == 0; d, _ = count() {
		if time.Now().After(deadline) {
			b.Fatalf("no frame in %s: is the generator running?", roundLimit)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(warmUp)
	gen0, rx0 := cpuTimes(b, cpus)
	d0, r0 := count()
	t0 := time.Now()
	for {
		time.Sleep(time.Millisecond)
		d, r := count()
		t := time.Now()
		if d-d0 >= n {
			gen1, rx1 := cpuTimes(b, cpus)
			return afxdpRound{frames: d - d0, timedReceived: r - r0, elapsed: t.Sub(t0),
				genSoftirq: gen1.Softirq - gen0.Softirq, rxBusy: rx1.Busy - rx0.Busy, genBusy: gen1.Busy - gen0.Busy}
		}
		if t.After(deadline) {
			b.Fatalf("%d of %d frames in %s", d-d0, n, roundLimit)
		}
	}
}

// cpuTimes reads the times of cpus' generator and receiving CPUs (zero for
// nil).
func cpuTimes(b *testing.B, cpus *roundCPUs) (gen, rx kernel.CPUTime) {
	if cpus == nil {
		return gen, rx
	}
	var err1, err2 error
	gen, err1 = kernel.CPUTimeOf(cpus.gen)
	rx, err2 = kernel.CPUTimeOf(cpus.rx)
	if err := errors.Join(err1, err2); err != nil {
		b.Fatal(err)
	}
	return gen, rx
}
