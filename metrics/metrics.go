package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/fairness"
	"github.com/xdphash/xdphash/runstats"
)

// Errors of this package.
var (
	// ErrAddress reports a --metrics-addr that is not host:port or :port.
	ErrAddress = errors.New("invalid metrics address")
)

// shutdownTimeout bounds how long Serve's server waits for scrapes in
// flight once its context is done.
const shutdownTimeout = time.Second

// MaxScrapesInFlight is how many scrapes Serve answers at once; scrapeTimeout
// bounds each request and connection.
const (
	MaxScrapesInFlight = 4
	scrapeTimeout      = 5 * time.Second
)

var (
	rxPackets     = prometheus.NewDesc("xdphash_rx_packets_total", "Frames taken off the receive queue.", []string{"queue"}, nil)
	rxBytes       = prometheus.NewDesc("xdphash_rx_bytes_total", "Wire bytes of the frames taken off the receive queue.", []string{"queue"}, nil)
	workerPackets = prometheus.NewDesc("xdphash_worker_packets_total", "Records the worker took off its rings.", []string{"worker"}, nil)
	workerBytes   = prometheus.NewDesc("xdphash_worker_bytes_total", "Wire bytes of the records the worker took off its rings.", []string{"worker"}, nil)
	served        = prometheus.NewDesc("xdphash_consumer_served_total", "Records the worker's consumer served.", []string{"worker"}, nil)
	backlog       = prometheus.NewDesc("xdphash_consumer_backlog", "Records the worker's consumer holds.", []string{"worker"}, nil)
	ceMarks       = prometheus.NewDesc("xdphash_consumer_ce_marks_total", "Packets the worker's consumer marked CE.", []string{"worker"}, nil)
	// The kernel's drops are per receive queue of an interface; the
	// engine's stages (ring, worker, consumer) have "" for both.
	drops     = prometheus.NewDesc("xdphash_drops_total", "Packets dropped, by stage (kernel, replay, ring, worker, consumer) and reason; the kernel's by interface and receive queue, a capture replay's by receive queue.", []string{"stage", "reason", "interface", "queue"}, nil)
	dissected = prometheus.NewDesc("xdphash_dissect_total", "Frames dissected, by fast-path shape and the path that dissected them.", []string{"shape", "path"}, nil)
	jain      = prometheus.NewDesc("xdphash_fairness_jain", "Jain's fairness index of the load over the scope (1 is even).", []string{"scope"}, nil)
)

// Collector is a prometheus.Collector over run statistics snapshots. A
// snapshot is taken at most once per SnapshotMaxAge: scrapes that come while
// one is being taken wait for it, and scrapes soon after reuse it, so that a
// storm of scrapers costs the run no more than one scraper does (a snapshot
// holds each worker's lock while it reads the worker's consumer).
type Collector struct {
	snapshot func() *runstats.RunStats

	mu      sync.Mutex
	pending *sharedSnapshot // the snapshot being taken, nil when none
	last    *sharedSnapshot // the last one taken
	lastAt  time.Time
	joined  func() // called when a scrape waits for pending (tests)
}

// SnapshotMaxAge is how long a Collector serves a snapshot it took.
const SnapshotMaxAge = 100 * time.Millisecond

// sharedSnapshot is one call of the snapshot function and its result.
type sharedSnapshot struct {
	done chan struct{}
	st   *runstats.RunStats
}

// current takes a snapshot, or waits for the one being taken.
func (c *Collector) current() *runstats.RunStats {
	c.mu.Lock()
	if c.last != nil && time.Since(c.lastAt) < SnapshotMaxAge {
		st := c.last.st
		c.mu.Unlock()
		return st
	}
	if p := c.pending; p != nil {
		c.mu.Unlock()
		if c.joined != nil {
			c.joined()
		}
		<-p.done
		return p.st
	}
	p := &sharedSnapshot{done: make(chan struct{})}
	c.pending = p
	c.mu.Unlock()
	p.st = c.snapshot()
	c.mu.Lock()
	c.pending, c.last, c.lastAt = nil, p, time.Now()
	c.mu.Unlock()
	close(p.done)
	return p.st
}

// NewCollector returns a collector of the snapshots snapshot returns; it is
// called from the scraping goroutine, so it must be safe to call from any.
func NewCollector(snapshot func() *runstats.RunStats) *Collector {
	return &Collector{snapshot: snapshot}
}

// Describe sends the descriptors of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{rxPackets, rxBytes, workerPackets, workerBytes, served, backlog, ceMarks, drops, dissected, jain, hashSource, deviceCheck} {
		ch <- d
	}
}

// Collect sends the metrics of one snapshot.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.current()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	var qBytes, wBytes []uint64
	for _, q := range st.Queues {
		label := strconv.Itoa(q.Queue)
		counter(rxPackets, q.Stats.Frames, label)
		counter(rxBytes, q.Stats.Bytes, label)
		qBytes = append(qBytes, q.Stats.Bytes)
	}
	for _, w := range st.Workers {
		label := strconv.Itoa(w.Worker)
		counter(workerPackets, w.Packets, label)
		counter(workerBytes, w.Bytes, label)
		counter(served, w.Consumer.Dequeued, label)
		gauge(backlog, float64(w.Consumer.Backlog), label)
		counter(ceMarks, w.Consumer.CEMarks, label)
		wBytes = append(wBytes, w.Bytes)
		// Jain's index over no flows is undefined, not 0 ("perfectly
		// unfair"): a consumer that counts none (fifo) has no series.
		if w.Consumer.Flows.Active > 0 {
			gauge(jain, w.Consumer.Flows.Jain, "flows_worker_"+label)
		}
	}
	gauge(jain, fairness.Jain(qBytes), "queues")
	gauge(jain, fairness.Jain(wBytes), "workers")
	for key, n := range st.Accounting.Dropped {
		stage, reason := key.Split()
		counter(drops, n, stage, reason, "", "")
	}
	iface := sourceInterface(st.Config.Source)
	// Each stage before the receive loops has series where the source has
	// it: the kernel's for AF_XDP, a capture replay's for a file, none for
	// synthetic traffic.
	replay := strings.HasPrefix(st.Config.Source, "pcap:")
	for _, q := range st.Queues {
		label := strconv.Itoa(q.Queue)
		switch {
		case replay:
			counter(drops, q.Stats.ReplayRingFull, "replay", "ring_full", "", label)
			counter(drops, q.Stats.Unreceived, "replay", "unreceived", "", label)
			continue
		case iface == "":
			continue
		}
		counter(drops, q.Stats.RxDropped, "kernel", "rx_dropped", iface, label)
		counter(drops, q.Stats.RxInvalidDescs, "kernel", "rx_invalid_descs", iface, label)
		counter(drops, q.Stats.RxRingFull, "kernel", "rx_ring_full", iface, label)
		counter(drops, q.Stats.RxLeftOnRing, "kernel", "rx_left_on_ring", iface, label)
	}
	for s := range dissect.NumShapes {
		sc := st.Shapes.Shape[s]
		counter(dissected, sc.Fast, s.String(), "fast")
		counter(dissected, sc.Slow, s.String(), "slow")
	}
	counter(dissected, st.Shapes.Other, "other", "slow")
	collectDevice(st, counter)
}

// sourceInterface is the interface of a run's source ("afxdp:IFACE"), ""
// for a capture or synthetic traffic.
func sourceInterface(source string) string {
	if iface, ok := strings.CutPrefix(source, "afxdp:"); ok {
		return iface
	}
	return ""
}

// DefaultAddr is the address the help and the docs give --metrics-addr:
// every interface, as exporters listen, on xdphash's port, outside the
// exporters' range 9100-9999 (all of it allocated, 9100 to node_exporter,
// which runs on most hosts xdphash would) and outside Linux's ephemeral
// ports (32768-60999), so that no exporter and no outgoing connection holds it.
const DefaultAddr = ":19100"

// Serve serves the metrics of snapshot on http://addr/metrics, with an index
// page on /, until ctx is done, and returns the address it listens on (with
// the port chosen when addr's is 0). An address without a host listens on
// every interface, as Go's net.Listen does: ":19100" is 0.0.0.0:19100 and
// [::]:19100; give "127.0.0.1:19100" for the loopback only.
func Serve(ctx context.Context, addr string, snapshot func() *runstats.RunStats) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("serve metrics: %w %q: %w (hint: give host:port or :port)", ErrAddress, addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("serve metrics: listen on %s: %w", addr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(snapshot), newBuildInfo(),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", serveIndex)
	// Scrapers beyond MaxScrapesInFlight get 503 at once, and no request
	// or connection holds the server longer than the timeouts: a storm of
	// scrapers takes a bounded share of the machine from the run.
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		MaxRequestsInFlight: MaxScrapesInFlight,
		Timeout:             scrapeTimeout,
	}))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: scrapeTimeout,
		ReadTimeout:       scrapeTimeout,
		WriteTimeout:      2 * scrapeTimeout,
		IdleTimeout:       4 * scrapeTimeout,
		MaxHeaderBytes:    8 << 10,
	}
	go func() { _ = srv.Serve(ln) }() // ends with ErrServerClosed at Shutdown
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	return ln.Addr().String(), nil
}
