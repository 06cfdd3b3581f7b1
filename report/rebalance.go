package report

import (
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/runstats"
)

// SteeringMeasures are a --steer reta run's table measures: the run, and
// with --compare static the static replay of the same traffic, side by side.
type SteeringMeasures struct {
	RETASize int           `json:"reta_size"`
	Runs     []SteeringRun `json:"runs"` // the static run first when there is one
	// BalancedTable is the table that would have balanced the run, and
	// Ethtool the `ethtool -X IF weight ...` line that writes it, "" when
	// ethtool's weighted fill cannot (a worker's buckets are not one
	// contiguous run).
	BalancedTable []uint16 `json:"balanced_table"`
	Ethtool       string   `json:"ethtool,omitempty"`
	// Weights is the `ethtool -X IF weight ...` line that balances the
	// run's load best of all the tables ethtool weights can write (see
	// BestWeights), and WeightsMaxMean its max/mean.
	Weights        string  `json:"weights,omitempty"`
	WeightsMaxMean float64 `json:"weights_max_mean,omitempty"`
}

// SteeringRun is one run's table measures.
type SteeringRun struct {
	Name string `json:"name"` // "static" or "rebalanced"
	// MaxMean is the workers' max/mean over the run, Bound the best any
	// one table could do (the heaviest bucket).
	MaxMean float64 `json:"max_mean"`
	Bound   float64 `json:"bound"`
	// Drops and sojourn percentiles (ns) per worker.
	Drops     []uint64           `json:"drops"`
	SojournNs []map[string]int64 `json:"sojourn_ns"`
	// Moves is the buckets moved, MovesPerSec their share of the table per
	// second, Reordered the packets served out of order in their flow.
	Moves       uint64  `json:"moves"`
	MovesPerSec float64 `json:"moves_per_sec"`
	FlowsMoved  uint64  `json:"flows_moved"` // flows in flight in the moved buckets
	Reordered   uint64  `json:"reordered"`
	ReorderOK   bool    `json:"reorder_exact"`
	// Imbalance is max/mean of the packets each worker served in each
	// window of Timeline; IntervalMoves the buckets moved per interval.
	WindowNs      int64     `json:"window_ns"`
	Imbalance     []float64 `json:"imbalance"`
	IntervalNs    int64     `json:"interval_ns,omitempty"`
	IntervalMoves []int     `json:"interval_moves,omitempty"`
	// Hold says what the hold of moved buckets' packets did, when the run
	// held them (--rebalance-hold).
	Hold string `json:"hold,omitempty"`
}

// computeSteering is nil for a run without a RETA.
func computeSteering(st *runstats.RunStats) *SteeringMeasures {
	sr := st.Steering
	if sr == nil {
		return nil
	}
	sm := &SteeringMeasures{RETASize: sr.RETASize, BalancedTable: sr.Balance.Table, Ethtool: EthtoolWeights(sr.Balance.Table, len(st.Workers), "IF")}
	sm.Weights, sm.WeightsMaxMean = WeightsLine(st, "IF")
	if sr.Compare != nil && sr.Compare.Static != nil && sr.Compare.Static.Steering != nil {
		sm.Runs = append(sm.Runs, steeringRun("static", sr.Compare.Static))
	}
	name := "static"
	if sr.Rebalance != nil {
		name = "rebalanced"
	}
	sm.Runs = append(sm.Runs, steeringRun(name, st))
	return sm
}

func steeringRun(name string, st *runstats.RunStats) SteeringRun {
	sr := st.Steering
	r := SteeringRun{Name: name, MaxMean: sr.Balance.MaxMean, Bound: sr.Balance.Bound, Reordered: sr.Reorder.Reordered,
		ReorderOK: sr.Reorder.Exact, WindowNs: st.Config.WindowNs}
	for _, w := range st.Workers {
		var n uint64
		for _, d := range w.Drops {
			n += d
		}
		for _, d := range w.Consumer.Drops {
			n += d
		}
		r.Drops = append(r.Drops, n)
		r.SojournNs = append(r.SojournNs, w.Consumer.SojournNs)
	}
	for _, win := range st.Windows {
		var most, sum uint64
		for _, n := range win.WorkerPackets {
			most, sum = max(most, n), sum+n
		}
		v := 0.0
		if sum > 0 {
			v = float64(most) * float64(len(win.WorkerPackets)) / float64(sum)
		}
		r.Imbalance = append(r.Imbalance, v)
	}
	if rb := sr.Rebalance; rb != nil {
		r.Moves, r.IntervalNs, r.FlowsMoved = rb.Moves, rb.IntervalNs, rb.FlowsMoved
		if st.DurationNs > 0 {
			r.MovesPerSec = float64(rb.Moves) / float64(sr.RETASize) / (float64(st.DurationNs) / 1e9)
		}
		for _, iv := range rb.Intervals {
			r.IntervalMoves = append(r.IntervalMoves, iv.Moves)
		}
		r.Hold = HoldText(rb.Hold)
	}
	return r
}

// HoldText is a sentence on what the hold of moved buckets' packets did;
// empty without a hold.
func HoldText(h *runstats.HoldReport) string {
	if h == nil {
		return ""
	}
	var mean time.Duration
	if h.Held > 0 {
		mean = time.Duration(h.WaitNs / int64(h.Held))
	}
	t := fmt.Sprintf("the hold kept %d packets of %d moved buckets on their new worker until the old one had finished the bucket's earlier packets: mean wait %s, longest %s, at most %d at once on a worker",
		h.Held, h.Buckets, mean, time.Duration(h.MaxWaitNs), h.MaxHeld)
	if h.Overflow > 0 {
		t += fmt.Sprintf("; %d packets were not held for lack of room", h.Overflow)
	}
	if h.AtEnd > 0 {
		t += fmt.Sprintf("; %d were still held when the run ended", h.AtEnd)
	}
	return t
}

// writeSteeringText writes the table measures as terminal tables.
func (m *Measures) writeSteeringText(ew *errWriter) {
	sm := m.Steering
	if sm == nil {
		return
	}
	ew.printf("\nindirection table (%d buckets)\n", sm.RETASize)
	tw := ew.table()
	cellf(tw, "run\tmax/mean\tbound\tdrops per worker\tsojourn p50\tp95\tp99 per worker\tbuckets moved\tof the table/s\tflows moved\treordered\t\n")
	for _, r := range sm.Runs {
		var drops, p50, p95, p99 []string
		for w := range r.Drops {
			drops = append(drops, fmt.Sprint(r.Drops[w]))
			p50 = append(p50, sojourn(r.SojournNs[w], "p50"))
			p95 = append(p95, sojourn(r.SojournNs[w], "p95"))
			p99 = append(p99, sojourn(r.SojournNs[w], "p99"))
		}
		cellf(tw, "%s\t%.3f\t%.3f\t%s\t%s\t%s\t%s\t%d\t%.2f%%\t%d\t%d\t\n", r.Name, r.MaxMean, r.Bound, strings.Join(drops, " "),
			strings.Join(p50, " "), strings.Join(p95, " "), strings.Join(p99, " "), r.Moves, 100*r.MovesPerSec, r.FlowsMoved, r.Reordered)
	}
	ew.flush(tw)
	for _, r := range sm.Runs {
		if r.Hold != "" {
			ew.printf("  %s: %s\n", r.Name, r.Hold)
		}
	}
	if sm.Ethtool != "" {
		ew.printf("  the table that balances the run: %s\n", sm.Ethtool)
	} else {
		ew.printf("  the table that balances the run is not an ethtool -X line: see steering.balance.balanced_table in the run JSON\n")
	}
	if sm.Weights != "" {
		ew.printf("  the best ethtool weights can do: %s (max/mean %.3f)\n", sm.Weights, sm.WeightsMaxMean)
	}
}

// steeringCharts are the charts of a RETA run: worker imbalance over time
// for each run, and the buckets moved per interval.
func steeringCharts(m *Measures) ([]chart, error) {
	sm := m.Steering
	if sm == nil {
		return nil, nil
	}
	title := "Worker imbalance over time (max/mean of the packets served per window)"
	p := newPlot("time (s)", "max/mean")
	hv := &hover{}
	for i, r := range sm.Runs {
		var xys plotter.XYs
		for k, v := range r.Imbalance {
			if v > 0 {
				xys = append(xys, plotter.XY{X: float64(int64(k)*r.WindowNs) / 1e9, Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", title, err)
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(r.Name, l)
		for k := range sparse(len(xys)) {
			hv.add(xys[k].X, xys[k].Y, fmt.Sprintf("%s at %.2f s: max/mean %.3f", r.Name, xys[k].X, xys[k].Y))
		}
	}
	p.Y.Min = 1
	p.Y.Max = max(p.Y.Max*1.15, 1.1)
	imb, err := svg(p, hv)
	if err != nil {
		return nil, err
	}
	out := []chart{{Title: title, SVG: imb}}
	last := sm.Runs[len(sm.Runs)-1]
	title = "Buckets moved per interval"
	if len(last.IntervalMoves) == 0 {
		return append(out, chart{Title: title, Note: "the table was not rebalanced"}), nil
	}
	p = newPlot("interval", "buckets moved")
	vals := make(plotter.Values, len(last.IntervalMoves))
	for i, n := range last.IntervalMoves {
		vals[i] = float64(n)
	}
	b, err := plotter.NewBarChart(vals, barWidth(len(vals)))
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", title, err)
	}
	b.Color, b.LineStyle.Width = barColor, 0
	p.Add(b)
	hv = &hover{}
	for i, v := range vals {
		hv.addBar(float64(i), v, barWidth(len(vals)), 0, fmt.Sprintf("interval %d: %d buckets moved", i, last.IntervalMoves[i]))
	}
	if len(vals) <= maxLabelledBars {
		labels, err := barLabels(vals, 0, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) })
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", title, err)
		}
		p.Add(labels)
	}
	mv, err := svg(p, hv)
	if err != nil {
		return nil, err
	}
	return append(out, chart{Title: title, SVG: mv}), nil
}

// steeringPage is the HTML section of a RETA run, added to the page's
// template set as "steering".
const steeringPage = `<h2>Indirection table ({{.RETASize}} buckets)</h2>
<table><tr><th>run</th><th>max/mean</th><th>bound</th><th>worker</th><th>drops</th><th>sojourn p50</th><th>p95</th><th>p99</th><th>buckets moved</th><th>of the table per s</th><th>flows moved</th><th>reordered</th></tr>
{{range $r := .Runs}}{{range $w, $d := $r.Drops}}<tr>{{if eq $w 0}}<td class="l" rowspan="{{len $r.Drops}}">{{$r.Name}}</td><td rowspan="{{len $r.Drops}}">{{f3 $r.MaxMean}}</td><td rowspan="{{len $r.Drops}}">{{f3 $r.Bound}}</td>{{end}}<td>{{$w}}</td><td>{{$d}}</td><td>{{sojourn (index $r.SojournNs $w) "p50"}}</td><td>{{sojourn (index $r.SojournNs $w) "p95"}}</td><td>{{sojourn (index $r.SojournNs $w) "p99"}}</td>{{if eq $w 0}}<td rowspan="{{len $r.Drops}}">{{$r.Moves}}</td><td rowspan="{{len $r.Drops}}">{{pct $r.MovesPerSec}}</td><td rowspan="{{len $r.Drops}}">{{$r.FlowsMoved}}</td><td rowspan="{{len $r.Drops}}">{{$r.Reordered}}</td>{{end}}</tr>
{{end}}{{end}}</table>
{{range .Runs}}{{if .Hold}}<p>{{.Name}}: {{.Hold}}.</p>{{end}}{{end}}
<p>{{if .Ethtool}}The table that balances the run: <code>{{.Ethtool}}</code>{{else}}The table that balances the run is not an ethtool -X line; the run JSON lists it (<code>steering.balance.balanced_table</code>).{{end}}</p>
{{if .Weights}}<p>The best ethtool weights can do: <code>{{.Weights}}</code> (max/mean {{f3 .WeightsMaxMean}}).</p>{{end}}
`

func init() { template.Must(page.New("steering").Parse(steeringPage)) }

// EthtoolWeights is the ethtool line that writes table on device iface:
// `ethtool -X IF equal N` for the round robin, `ethtool -X IF weight ...`
// for contiguous runs (weights reduced by their common divisor, which fills
// the same table); "" when ethtool can write neither.
func EthtoolWeights(table []uint16, workers int, iface string) string {
	if workers < 1 {
		return ""
	}
	if rr, err := hash.NewRETA(len(table), workers, nil); err == nil && slices.Equal(rr.AppendEntries(nil), table) {
		return fmt.Sprintf("ethtool -X %s equal %d", iface, workers)
	}
	weights, ok := hash.WeightsOf(table, workers)
	if !ok {
		return ""
	}
	g := 0
	for _, w := range weights {
		g = gcd(g, w)
	}
	ws := make([]string, workers)
	for i, n := range weights {
		ws[i] = strconv.Itoa(n / g)
	}
	return fmt.Sprintf("ethtool -X %s weight %s", iface, strings.Join(ws, " "))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// BestWeights returns the ethtool weights whose table balances load (per
// bucket, in table order) best over workers: ethtool gives each worker one
// contiguous run of entries, so that is the linear partition of the buckets
// into at most workers runs with the lightest heaviest run. It returns the
// weights (a run's length, reduced by their common divisor; 0 for a worker
// left without entries) and the heaviest run's max/mean, 0 without load.
func BestWeights(load []uint64, workers int) ([]int, float64) {
	var total, heaviest uint64
	for _, l := range load {
		total += l
		heaviest = max(heaviest, l)
	}
	if total == 0 || workers < 1 || len(load) == 0 {
		return nil, 0
	}
	// runs is the fewest runs none heavier than limit (each bucket fits).
	runs := func(limit uint64) int {
		n, sum := 1, uint64(0)
		for _, l := range load {
			if sum+l > limit {
				n, sum = n+1, 0
			}
			sum += l
		}
		return n
	}
	lo, hi := heaviest, total
	for lo < hi {
		mid := lo + (hi-lo)/2
		if runs(mid) <= workers {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	weights := make([]int, workers)
	w, sum := 0, uint64(0)
	for _, l := range load {
		if sum+l > lo {
			w, sum = w+1, 0
		}
		sum += l
		weights[w]++
	}
	g := 0
	for _, n := range weights {
		g = gcd(g, n)
	}
	for i := range weights {
		weights[i] /= g
	}
	return weights, float64(lo) * float64(workers) / float64(total)
}

// WeightsLine is the `ethtool -X iface weight ...` line of BestWeights over
// the run's per-bucket packets, and its max/mean; "" without load.
func WeightsLine(st *runstats.RunStats, iface string) (string, float64) {
	sr := st.Steering
	if sr == nil {
		return "", 0
	}
	load := make([]uint64, sr.RETASize)
	for _, row := range sr.BucketPackets {
		for b, n := range row {
			if b < len(load) {
				load[b] += n
			}
		}
	}
	weights, mm := BestWeights(load, len(st.Workers))
	if weights == nil {
		return "", 0
	}
	ws := make([]string, len(weights))
	for i, n := range weights {
		ws[i] = strconv.Itoa(n)
	}
	return fmt.Sprintf("ethtool -X %s weight %s", iface, strings.Join(ws, " ")), mm
}
