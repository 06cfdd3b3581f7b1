package queues

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/pipeline"
)

// TestEngineZeroAllocs proves that a receive loop's batch and a worker's poll
// allocate nothing in steady state, live and virtual, at "max" and at a
// limited rate.
func TestEngineZeroAllocs(t *testing.T) {
	for _, tt := range []struct {
		name      string
		virtual   bool
		rate      Rate
		flowLimit int
	}{
		{name: "live max"},
		{name: "live rate flow limit", rate: Rate{BitsPerSec: 1e9}, flowLimit: 4096},
		{name: "virtual rate", virtual: true, rate: Rate{PacketsPerSec: 1e6}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := syntheticSource(t, "default", pipeline.SyntheticConfig{})
			e, err := NewEngine(EngineConfig{
				Source:      src,
				Steering:    SteerConfig{Workers: 2, Key: testKey},
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
					benchPipeline(b, profile, queues, virtual, nil)
				})
			}
		}
	}
}

// benchPipeline runs b.N frames of a synthetic profile over queues receive
// queues into 2 workers with consumer (nil: fifo) and reports Mpps and the
// share dropped.
func benchPipeline(b *testing.B, profile string, queues int, virtual bool, consumer ConsumerFactory) {
	src := syntheticSource(b, profile, pipeline.SyntheticConfig{Queues: queues, Count: uint64(b.N)})
	e, err := NewEngine(EngineConfig{
		Source:   src,
		Steering: SteerConfig{Workers: 2, Key: testKey},
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
