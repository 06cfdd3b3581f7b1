package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// TestEngineZeroAllocs proves that a receive loop's batch and a worker's poll
// allocate nothing in steady state, live and virtual, at "max" and at a
// limited rate.
func TestEngineZeroAllocs(t *testing.T) {
	for _, tt := range []struct {
		name      string
		virtual   bool
		rate      queues.Rate
		flowLimit int
	}{
		{name: "live max"},
		{name: "live rate flow limit", rate: queues.Rate{BitsPerSec: 1e9}, flowLimit: 4096},
		{name: "virtual rate", virtual: true, rate: queues.Rate{PacketsPerSec: 1e6}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := syntheticSource(t, "default", source.SyntheticConfig{})
			e, err := NewEngine(EngineConfig{
				Source:      src,
				Steering:    hash.SteerConfig{Workers: 2, Key: testKey},
				Flags:       dissect.DefaultFlags,
				Gates:       dissect.AllGates,
				ServiceRate: tt.rate,
				FlowLimit:   tt.flowLimit,
				Virtual:     tt.virtual,
				Window:      time.Hour, // a window's end allocates its snapshot
			})
			if err != nil {
				t.Fatal(err)
			}
			r := e.recv[0]
			iteration := func() {
				if err := r.src.Receive(r.batch); err != nil {
					t.Fatal(err)
				}
				r.process(r.batch)
				for _, w := range e.workers {
					w.now = e.clock()
					w.poll()
					w.serve(w.now)
				}
			}
			for range 100 { // warm up: consumer storage, dissector state
				iteration()
			}
			if n := testing.AllocsPerRun(1000, iteration); n != 0 {
				t.Errorf("%.2f allocations per batch, want 0", n)
			}
			if e.workers[0].taken+e.workers[1].taken == 0 {
				t.Error("the workers took nothing")
			}
		})
	}
}

// BenchmarkPipeline measures the in-memory pipeline end to end: a synthetic
// source, dissect, hash and steer on each receive queue's loop, 2 workers
// feeding fifo at "max". It reports the frames processed per second (Mpps)
// and the share dropped at the rings. On the wall clock (clock=wall) a ring
// drops when its worker falls behind, as the kernel's backlog does; on the
// virtual clock the rings are lossless (a receive loop waits for room), so
// the rate is the pipeline's capacity.
func BenchmarkPipeline(b *testing.B) {
	for _, profile := range []string{"default", "ipv4-tcp"} {
		for _, queues := range []int{1, 2} {
			for _, virtual := range []bool{false, true} {
				clock := "wall"
				if virtual {
					clock = "virtual"
				}
				b.Run(fmt.Sprintf("%s/queues=%d/clock=%s", profile, queues, clock), func(b *testing.B) {
					benchPipeline(b, profile, queues, virtual, "fifo")
				})
			}
		}
	}
}

// benchPipeline runs b.N frames of a synthetic profile over queues receive
// queues into 2 workers with consumer (nil: fifo) and reports Mpps and the
// share dropped.
func benchPipeline(b *testing.B, profile string, queues int, virtual bool, consumer string) {
	src := syntheticSource(b, profile, source.SyntheticConfig{Queues: queues, Count: uint64(b.N)})
	e, err := NewEngine(EngineConfig{
		Source:   src,
		Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		Flags:    dissect.DefaultFlags,
		Gates:    dissect.AllGates,
		Consumer: consumer,
		Virtual:  virtual,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	st, err := e.Run(context.Background())
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	acc := st.Accounting
	b.ReportMetric(float64(acc.Processed)/elapsed.Seconds()/1e6, "Mpps")
	b.ReportMetric(float64(dropTotal(acc))/float64(acc.Received), "drop-share")
}

// BenchmarkPipelineConsumers is BenchmarkPipeline (the default synthetic
// profile, 2 workers served at "max") with each consumer behind the
// workers: what fq and fq_codel cost the whole pipeline against fifo. With
// 2 receive queues the two receive loops keep both processors of a 2-core
// machine busy, and every nanosecond a worker spends is taken from them;
// with 1, the workers share the processor the receive loop leaves them. On
// the virtual clock the rings are lossless, so Mpps is the pipeline's
// capacity; on the wall clock the rings drop when a worker falls behind.
func BenchmarkPipelineConsumers(b *testing.B) {
	for _, clock := range []string{"virtual", "wall"} {
		for _, queues := range []int{2, 1} {
			for _, name := range []string{"fifo", "fq", "fq_codel"} {
				b.Run(fmt.Sprintf("%s/queues=%d/%s", clock, queues, name), func(b *testing.B) {
					benchPipeline(b, "default", queues, clock == "virtual", name)
				})
			}
		}
	}
}

// feedRecorder is a fifo without limit that keeps all it was fed, for
// BenchmarkConsumerOnPipeline.
type feedRecorder struct {
	recs   []queues.Record
	served int
}

func (c *feedRecorder) Enqueue(recs []queues.Record, _ int64) { c.recs = append(c.recs, recs...) }

func (c *feedRecorder) Dequeue(_ int64, b queues.Budget, out []queues.Record) []queues.Record {
	n := len(c.recs) - c.served
	if b.Packets > 0 {
		n = min(n, b.Packets)
	}
	out = append(out, c.recs[c.served:c.served+n]...)
	c.served += n
	return out
}

func (c *feedRecorder) Backlog() int { return len(c.recs) - c.served }

func (c *feedRecorder) Stats() runstats.ConsumerStats {
	return runstats.ConsumerStats{Enqueued: uint64(len(c.recs)), Dequeued: uint64(c.served)}
}

func (c *feedRecorder) Report() runstats.ConsumerReport {
	return runstats.ConsumerReport{ConsumerStats: c.Stats()}
}

// pipelineRecords runs n frames of the default synthetic profile through
// the in-memory pipeline of BenchmarkPipelineConsumers and returns the
// records worker 0 was fed, in order.
func pipelineRecords(tb testing.TB, n int) []queues.Record {
	rec := &feedRecorder{}
	e, err := NewEngine(EngineConfig{
		Source:   syntheticSource(tb, "default", source.SyntheticConfig{Queues: 2, Count: uint64(n)}),
		Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		Flags:    dissect.DefaultFlags,
		Gates:    dissect.AllGates,
		NewConsumer: func(w int) queues.Consumer {
			if w == 0 {
				return rec
			}
			return &feedRecorder{}
		},
		Virtual: true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := e.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return rec.recs
}

// BenchmarkConsumerOnPipeline is each consumer alone, as a worker of
// BenchmarkPipelineConsumers runs it at "max": fed the records that worker
// gets (the default synthetic profile, with its few one-flow frames among
// thousands of flows) in chunks of feedChunk, and served to empty after
// each. Its ns/packet against fifo's is what the consumer adds to the
// pipeline's time per packet (ns/op is per packet), without the noise of the pipeline's
// goroutines sharing two processors.
func BenchmarkConsumerOnPipeline(b *testing.B) {
	recs := pipelineRecords(b, 1<<19)
	for _, name := range []string{"fifo", "fq", "fq_codel"} {
		b.Run(name, func(b *testing.B) {
			mk, err := queues.ConsumerConfig{}.New(name)
			if err != nil {
				b.Fatal(err)
			}
			c := mk()
			out := make([]queues.Record, 0, serveChunk)
			b.ReportAllocs()
			b.ResetTimer()
			for i, n := 0, 0; n < b.N; i++ {
				off := (i * feedChunk) % (len(recs) - feedChunk)
				chunk := recs[off : off+feedChunk]
				now := chunk[len(chunk)-1].Arrival
				c.Enqueue(chunk, now)
				out = c.Dequeue(now, queues.Budget{Packets: serveChunk}, out[:0])
				n += feedChunk
			}
		})
	}
}
