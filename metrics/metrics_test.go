package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/runstats"
)

// sampleStats is a run of two queues and two workers.
func sampleStats() *runstats.RunStats {
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion,
		Config:        runstats.RunConfig{Source: "afxdp:veth0"},
		Queues: []runstats.QueueReport{
			{Queue: 0, Stats: runstats.QueueStats{Frames: 30, Bytes: 3000, RxRingFull: 7}},
			{Queue: 1, Stats: runstats.QueueStats{Frames: 10, Bytes: 1000, RxDropped: 5}},
		},
		Workers: []runstats.WorkerReport{
			{Worker: 0, Packets: 20, Bytes: 2000, Consumer: runstats.ConsumerReport{
				ConsumerStats: runstats.ConsumerStats{Dequeued: 18, Backlog: 2, CEMarks: 1},
				Flows:         runstats.FlowReport{Active: 4, Jain: 0.5},
			}},
			{Worker: 1, Packets: 20, Bytes: 2000},
		},
		Accounting: runstats.Accounting{
			Dropped:     map[runstats.DropReason]uint64{runstats.DropCodel: 4, runstats.DropRingFull: 2},
			KernelDrops: map[string]uint64{"rx_ring_full": 7, "rx_dropped": 5},
		},
	}
	st.Shapes.Shape[dissect.ShapeVLAN].Fast = 11
	st.Shapes.Other = 3
	return st
}

// TestServe scrapes /metrics over HTTP and parses it with the Prometheus
// text parser.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, ":0", sampleStats)
	if err != nil {
		t.Fatal(err)
	}
	// Go's convention: no host is every interface.
	if host, _, _ := net.SplitHostPort(addr); host != "::" && host != "0.0.0.0" {
		t.Errorf("an address without a host listens on %s, want every interface", addr)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %v, status %d", err, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	tests := []struct {
		name   string
		labels string // "k=v,k=v", sorted by name
		want   float64
	}{
		{"xdphash_rx_packets_total", "queue=0", 30},
		{"xdphash_rx_bytes_total", "queue=1", 1000},
		{"xdphash_worker_packets_total", "worker=1", 20},
		{"xdphash_worker_bytes_total", "worker=0", 2000},
		{"xdphash_consumer_served_total", "worker=0", 18},
		{"xdphash_consumer_backlog", "worker=0", 2},
		{"xdphash_consumer_ce_marks_total", "worker=0", 1},
		{"xdphash_drops_total", "interface=,queue=,reason=codel,stage=consumer", 4},
		{"xdphash_drops_total", "interface=,queue=,reason=full,stage=ring", 2},
		// The kernel's drops by interface and queue.
		{"xdphash_drops_total", "interface=veth0,queue=0,reason=rx_ring_full,stage=kernel", 7},
		{"xdphash_drops_total", "interface=veth0,queue=1,reason=rx_ring_full,stage=kernel", 0},
		{"xdphash_drops_total", "interface=veth0,queue=1,reason=rx_dropped,stage=kernel", 5},
		{"xdphash_dissect_total", "path=fast,shape=vlan", 11},
		{"xdphash_dissect_total", "path=slow,shape=other", 3},
		// Bytes 3000 and 1000: 4000² / (2·(3000² + 1000²)) = 0.8.
		{"xdphash_fairness_jain", "scope=queues", 0.8},
		{"xdphash_fairness_jain", "scope=workers", 1},
		{"xdphash_fairness_jain", "scope=flows_worker_0", 0.5},
	}
	// value finds the sample of family name whose labels print as labels.
	value := func(name, labels string) (float64, bool) {
		for _, m := range families[name].GetMetric() {
			var parts []string
			for _, l := range m.GetLabel() {
				parts = append(parts, fmt.Sprintf("%s=%s", l.GetName(), l.GetValue()))
			}
			if strings.Join(parts, ",") != labels {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			}
		}
		return 0, false
	}
	for _, tt := range tests {
		got, ok := value(tt.name, tt.labels)
		if !ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s{%s} = %v (found %v), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	// The exporter conventions: build info, the Go runtime's and the
	// process's collectors.
	bi := families["xdphash_build_info"]
	if m := bi.GetMetric(); len(m) != 1 || m[0].GetGauge().GetValue() != 1 {
		t.Errorf("xdphash_build_info: %v", bi)
	} else {
		var names []string
		for _, l := range m[0].GetLabel() {
			names = append(names, l.GetName())
		}
		if strings.Join(names, ",") != "goversion,revision,version" {
			t.Errorf("xdphash_build_info labels %v, want goversion, revision, version", names)
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds"} {
		if _, ok := families[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	// Worker 1's consumer counted no flows: no flows series, rather than 0.
	if _, ok := value("xdphash_fairness_jain", "scope=flows_worker_1"); ok {
		t.Error("xdphash_fairness_jain{scope=flows_worker_1} for a consumer that counted no flows")
	}
	for name, f := range families {
		if strings.HasSuffix(name, "_total") != (f.GetType().String() == "COUNTER") {
			t.Errorf("%s is a %v", name, f.GetType())
		}
	}

	// The index page links /metrics; other paths are not found.
	index, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(index.Body)
	index.Body.Close()
	if index.StatusCode != http.StatusOK || !strings.Contains(string(page), `<a href="/metrics">`) || !strings.HasPrefix(index.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /: status %d, %s: %s", index.StatusCode, index.Header.Get("Content-Type"), page)
	}
	if nf, err := http.Get("http://" + addr + "/nosuch"); err != nil || nf.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nosuch: %v %v, want 404", nf, err)
	} else {
		nf.Body.Close()
	}

	cancel()
	// Serve signals nothing when its server has shut down: polled, for 5 s
	// at most.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still serving after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeAddress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, addr := range []string{"9100", "localhost"} {
		if _, err := Serve(ctx, addr, sampleStats); !errors.Is(err, ErrAddress) {
			t.Errorf("Serve(%q): %v, want ErrAddress", addr, err)
		}
	}
	a, err := Serve(ctx, "127.0.0.1:0", sampleStats)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Serve(ctx, a, sampleStats); err == nil {
		t.Errorf("a second server on %s: no error", a)
	}
}
