package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/metrics"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// TestServeLiveRun scrapes /metrics during a live run of the real pipeline,
// fq_codel with ECN served below the offered load so that CoDel marks: the
// CE marks and the per-worker flow Jain indexes move while the run goes on,
// and once it has ended the scrape equals the final statistics, the ones
// `xdphash run --out` writes.
func TestServeLiveRun(t *testing.T) {
	frames, err := xdptest.Templates("default")
	if err != nil {
		t.Fatal(err)
	}
	const pps, count = 100_000, 150_000
	src, err := source.NewSynthetic(frames, source.SyntheticConfig{
		Count: count, FlowOffset: xdptest.FlowPortOffset, Name: "live",
		Replay: source.Replay{Mode: source.ReplayRate, PPS: pps}, Clock: source.WallClock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	e, err := pipeline.NewEngine(pipeline.EngineConfig{
		Source:   src,
		Steering: hash.SteerConfig{Workers: 2, Key: hash.Key{1, 2, 3}},
		Flags:    dissect.DefaultFlags, Gates: dissect.AllGates,
		Consumer: "fq_codel", ConsumerConfig: queues.ConsumerConfig{ECN: true},
		// A fifth of what each worker is offered: the queues stand, CoDel marks.
		ServiceRate: queues.Rate{PacketsPerSec: pps / 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := metrics.Serve(ctx, "127.0.0.1:0", e.Stats)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		st  *runstats.RunStats
		err error
	}
	ran := make(chan result, 1)
	go func() {
		st, err := e.Run(ctx)
		ran <- result{st, err}
	}()

	// While it runs: marks and a flow Jain index on both workers. Nothing
	// signals "CoDel has marked", so the test scrapes until it sees them or
	// the run ends.
	live := false
	var r result
	for done := false; !done && !live; {
		select {
		case r = <-ran:
			done = true
		default:
		}
		if done {
			break
		}
		fams := scrape(t, addr)
		live = true
		for w := range 2 {
			ce := value(fams, "xdphash_consumer_ce_marks_total", "worker", strconv.Itoa(w))
			jain := value(fams, "xdphash_fairness_jain", "scope", fmt.Sprintf("flows_worker_%d", w))
			live = live && ce > 0 && jain > 0
		}
	}
	if !live {
		t.Error("the run ended before a scrape showed CE marks and a flow Jain index on every worker")
	}
	if r.st == nil {
		r = <-ran
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	// After it, once the last snapshot taken during the run has aged
	// (SnapshotMaxAge), the scrape says what the final statistics say.
	var mismatch []string
	for deadline := time.Now().Add(10 * metrics.SnapshotMaxAge); ; {
		fams := scrape(t, addr)
		mismatch = mismatch[:0]
		for w, wr := range r.st.Workers {
			label := strconv.Itoa(w)
			if got, want := value(fams, "xdphash_consumer_ce_marks_total", "worker", label), float64(wr.Consumer.CEMarks); got != want || want == 0 {
				mismatch = append(mismatch, fmt.Sprintf("worker %d: %v CE marks scraped, %v in the final statistics (want equal, above 0)", w, got, want))
			}
			if got, want := value(fams, "xdphash_fairness_jain", "scope", "flows_worker_"+label), wr.Consumer.Flows.Jain; got != want || want == 0 {
				mismatch = append(mismatch, fmt.Sprintf("worker %d: flow Jain %v scraped, %v in the final statistics (want equal, above 0)", w, got, want))
			}
			if got, want := value(fams, "xdphash_consumer_served_total", "worker", label), float64(wr.Consumer.Dequeued); got != want {
				mismatch = append(mismatch, fmt.Sprintf("worker %d: %v served scraped, %v in the final statistics", w, got, want))
			}
		}
		if len(mismatch) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, m := range mismatch {
		t.Error(m)
	}
}

// scrape gets /metrics and parses it with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %v, status %d", err, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the sample of family name whose label key has value v, -1 when
// there is none.
func value(fams map[string]*dto.MetricFamily, name, key, v string) float64 {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != key || l.GetValue() != v {
				continue
			}
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	return -1
}

// BenchmarkPipelineUnderScrapes is the in-memory pipeline (the default
// templates over 2 queues, 2 workers, fifo at "max", wall clock) while
// scrapers goroutines scrape /metrics as fast as they can: what a storm of
// scrapers takes from the run. server=bounded is Serve; server=unbounded
// answers every scrape at once with a snapshot of its own, the server that
// Serve's bound is measured against. Mpps is the frames received per second of the run;
// scrapes/s the scrapes answered (200 or 503). The scrapers run on the same
// processors: part of the loss is theirs, whatever the server does.
func BenchmarkPipelineUnderScrapes(b *testing.B) {
	for _, v := range []struct {
		scrapers int
		server   string
	}{{0, "bounded"}, {200, "bounded"}, {200, "unbounded"}} {
		scrapers := v.scrapers
		b.Run(fmt.Sprintf("scrapers=%d/server=%s", scrapers, v.server), func(b *testing.B) {
			frames, err := xdptest.Templates("default")
			if err != nil {
				b.Fatal(err)
			}
			src, err := source.NewSynthetic(frames, source.SyntheticConfig{Queues: 2, Count: uint64(b.N), FlowOffset: xdptest.FlowPortOffset})
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			e, err := pipeline.NewEngine(pipeline.EngineConfig{
				Source: src, Steering: hash.SteerConfig{Workers: 2, Key: hash.Key{1}},
				Flags: dissect.DefaultFlags, Gates: dissect.AllGates,
			})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var addr string
			if v.server == "bounded" {
				if addr, err = metrics.Serve(ctx, "127.0.0.1:0", e.Stats); err != nil {
					b.Fatal(err)
				}
			} else {
				addr = serveUnbounded(b, e.Stats)
			}
			stop := make(chan struct{})
			var scrapes atomic.Uint64
			var wg sync.WaitGroup
			// The scrapers' own transport, closed at the end: no connection
			// of theirs outlives the benchmark (TestMain checks).
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			for range scrapers {
				wg.Go(func() {
					client := &http.Client{Timeout: 10 * time.Second, Transport: tr}
					for {
						select {
						case <-stop:
							return
						default:
						}
						resp, err := client.Get("http://" + addr + "/metrics")
						if err != nil {
							continue
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						scrapes.Add(1)
					}
				})
			}
			b.ResetTimer()
			start := time.Now()
			st, err := e.Run(context.Background())
			elapsed := time.Since(start)
			b.StopTimer()
			close(stop)
			wg.Wait()
			tr.CloseIdleConnections()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Accounting.Received)/elapsed.Seconds()/1e6, "Mpps")
			b.ReportMetric(float64(scrapes.Load())/elapsed.Seconds(), "scrapes/s")
		})
	}
}

// serveUnbounded serves /metrics with no limit on scrapes in flight and a
// snapshot per scrape, until the benchmark ends.
func serveUnbounded(b *testing.B, snapshot func() *runstats.RunStats) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(metrics.NewCollector(snapshot))
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}
