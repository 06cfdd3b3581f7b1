package main

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunServesMetrics scrapes /metrics while `xdphash run` runs fq_codel with
// ECN below the offered load: the CE marks and each worker's flow Jain index
// move during the run, every family parses as Prometheus text, the numbers
// never exceed the final run JSON's, and the server is gone after the run.
func TestRunServesMetrics(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	stderr := &watchedBuffer{found: make(chan string, 1), re: regexp.MustCompile(`url=(http://\S+/metrics)`)}
	done := make(chan int, 1)
	go func() {
		root := newRootCmd()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(stderr)
		done <- run(root, []string{"run", "--synthetic", "datacenter", "--count", "150000", "--replay", "100kpps",
			"--consumer", "fq_codel", "--ecn", "--service-rate", "10kpps", "--hash-key", kunitKey,
			"--metrics-addr", "127.0.0.1:0", "--out", out})
	}()
	var url string
	select {
	case url = <-stderr.found:
	case code := <-done:
		t.Fatalf("run exited %d before it served metrics:\n%s", code, stderr)
	}

	// Nothing signals "CoDel has marked": scrape until the run ends.
	var last map[string]*dto.MetricFamily
	live := false
	for ended := false; !ended; {
		fams, err := scrapeMetrics(url)
		if err != nil {
			// The server goes only when the run ends.
			code := <-done
			done <- code
			ended = true
			continue
		}
		last = fams
		ok := true
		for w := range 2 {
			ok = ok && metricValue(fams, "xdphash_consumer_ce_marks_total", "worker", strconv.Itoa(w)) > 0 &&
				metricValue(fams, "xdphash_fairness_jain", "scope", fmt.Sprintf("flows_worker_%d", w)) > 0
		}
		if ok {
			live = true
			break
		}
	}
	if !live {
		t.Error("no scrape during the run showed CE marks and a flow Jain index on every worker")
	}
	if code := <-done; code != exitOK {
		t.Fatalf("run exited %d:\n%s", code, stderr)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	for w, wr := range st.Workers {
		if got := metricValue(last, "xdphash_consumer_ce_marks_total", "worker", strconv.Itoa(w)); got > float64(wr.Consumer.CEMarks) {
			t.Errorf("worker %d: %v CE marks scraped during the run, more than the %d at its end", w, got, wr.Consumer.CEMarks)
		}
	}
	if _, err := http.Get(url); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("metrics still served after the run: %v", err)
	}
}

// watchedBuffer is a buffer that sends the first submatch of re, once, when
// a write makes the text match.
type watchedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	re    *regexp.Regexp
	found chan string
	sent  bool
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if m := w.re.FindSubmatch(w.buf.Bytes()); m != nil && !w.sent {
		w.sent = true
		w.found <- string(m[1])
	}
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// scrapeMetrics gets url and parses it as Prometheus text.
func scrapeMetrics(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// metricValue is the sample of family name whose label key has value v, -1
// when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name, key, v string) float64 {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == key && l.GetValue() == v {
				if m.Counter != nil {
					return m.Counter.GetValue()
				}
				return m.Gauge.GetValue()
			}
		}
	}
	return -1
}
