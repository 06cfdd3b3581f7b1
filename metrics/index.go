package metrics

import (
	"net/http"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// indexPage is what / serves: the exporters' convention of a page that
// names the program and links its metrics.
const indexPage = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>xdphash exporter</title></head>
<body>
<h1>xdphash</h1>
<p>The run's counters: receive queues, workers, drops by stage, dissector shapes, fairness.</p>
<p><a href="/metrics">Metrics</a></p>
</body>
</html>
`

func serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(indexPage))
}

// newBuildInfo is xdphash_build_info: 1, labelled with the module version,
// the commit and the Go version the binary was built with, as Prometheus
// exporters' <name>_build_info are ("" where the build did not record them).
func newBuildInfo() prometheus.Collector {
	version, revision := "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "xdphash_build_info",
		Help:        "A metric with a constant '1' value labelled by the version, revision and Go version xdphash was built from.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}
