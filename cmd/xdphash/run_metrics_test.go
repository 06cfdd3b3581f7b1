package main

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestRunServesMetrics scrapes /metrics while `xdphash run` runs and checks that
// the counters move and parse as Prometheus text.
func TestRunServesMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	done := make(chan int, 1)
	go func() {
		_, _, code := runXdphash(t, nil, "run", "--synthetic", "datacenter", "--duration", "3s", "--replay", "200kpps",
			"--metrics-addr", ":"+strconv.Itoa(port))
		done <- code
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
	var rx float64
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) && rx == 0 {
		time.Sleep(200 * time.Millisecond)
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("parse /metrics: %v", err)
		}
		for _, name := range []string{"xdphash_rx_packets_total", "xdphash_worker_packets_total", "xdphash_dissect_total", "xdphash_drops_total"} {
			if families[name] == nil {
				t.Fatalf("/metrics lacks %s", name)
			}
		}
		for _, m := range families["xdphash_rx_packets_total"].GetMetric() {
			rx += m.GetCounter().GetValue()
		}
	}
	if rx == 0 {
		t.Error("xdphash_rx_packets_total never moved during the run")
	}
	if code := <-done; code != exitOK {
		t.Errorf("run exited %d", code)
	}
	if _, err := http.Get(url); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("metrics still served after the run: %v", err)
	}
}
