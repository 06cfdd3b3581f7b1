package metrics_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"

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
	// After it: the scrape says what the final statistics say.
	fams := scrape(t, addr)
	for w, wr := range r.st.Workers {
		label := strconv.Itoa(w)
		if got, want := value(fams, "xdphash_consumer_ce_marks_total", "worker", label), float64(wr.Consumer.CEMarks); got != want || want == 0 {
			t.Errorf("worker %d: %v CE marks scraped, %v in the final statistics (want equal, above 0)", w, got, want)
		}
		if got, want := value(fams, "xdphash_fairness_jain", "scope", "flows_worker_"+label), wr.Consumer.Flows.Jain; got != want || want == 0 {
			t.Errorf("worker %d: flow Jain %v scraped, %v in the final statistics (want equal, above 0)", w, got, want)
		}
		if got, want := value(fams, "xdphash_consumer_served_total", "worker", label), float64(wr.Consumer.Dequeued); got != want {
			t.Errorf("worker %d: %v served scraped, %v in the final statistics", w, got, want)
		}
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
