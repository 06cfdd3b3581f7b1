package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/xdphash/xdphash/fairness"
)

// chartW and chartH are a chart's size; at 96 CSS pixels per inch a chart
// is 960×360 pixels.
const (
	chartW = 10 * vg.Inch
	chartH = 3.75 * vg.Inch
)

// A chart is one figure of the HTML page: its SVG, or a note saying why
// there is none.
type chart struct {
	Title string
	SVG   template.HTML
	Note  string
}

// barColor fills measured loads; idealColor draws the reference a measure
// is judged by (the even share, the expectation).
var (
	barColor   = color.RGBA{R: 90, G: 155, B: 212, A: 0xff}
	idealColor = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
)

// svg renders p as an inline SVG element: vgsvg writes a standalone file,
// whose XML prolog an HTML page must not carry.
func svg(p *plot.Plot) (template.HTML, error) {
	c := vgsvg.New(chartW, chartH)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("render chart %q: %w", p.Title.Text, err)
	}
	s := b.Bytes()
	if i := bytes.Index(s, []byte("<svg")); i > 0 {
		s = s[i:]
	}
	return template.HTML(s), nil // gonum's own output, not user data
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// loadChart is the share of bytes per bin against the even share.
func loadChart(title, bin string, s *Spread) (chart, error) {
	ch := chart{Title: title}
	if len(s.Packets) == 0 || s.MaxMean == 0 {
		ch.Note = "no traffic"
		return ch, nil
	}
	load := s.Bytes
	unit := "bytes"
	if load == nil {
		load, unit = s.Packets, "packets"
	}
	shares := fairness.Shares(load)
	p := newPlot(title, bin, "share of "+unit+" (%)")
	vals := make(plotter.Values, len(shares))
	names := make([]string, len(shares))
	for i, v := range shares {
		vals[i], names[i] = 100*v, strconv.Itoa(i)
	}
	bars, err := plotter.NewBarChart(vals, barWidth(len(vals)))
	if err != nil {
		return ch, fmt.Errorf("plot %s: %w", title, err)
	}
	bars.Color = barColor
	bars.LineStyle.Width = 0
	ideal := plotter.NewFunction(func(float64) float64 { return 100 / float64(len(shares)) })
	ideal.Color, ideal.Width, ideal.Dashes = idealColor, vg.Points(1.5), []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(bars, ideal)
	p.Legend.Add(unit, bars)
	p.Legend.Add(fmt.Sprintf("even share (%.1f%%)", 100/float64(len(shares))), ideal)
	p.NominalX(names...)
	fitBars(p, len(vals), slices.Max(vals))
	ch.SVG, err = svg(p)
	return ch, err
}

// fitBars shows n bars whole, from 0 to a third above the tallest, which
// leaves the legend room above them.
func fitBars(p *plot.Plot, n int, top float64) {
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = 0, max(top, 1e-9)*1.35
}

// barWidth fits n bars in a chart.
func barWidth(n int) vg.Length {
	return max(min(chartW*0.8/vg.Length(max(n, 1))*0.7, vg.Points(40)), vg.Points(1))
}

// imbalanceChart sets each measured max/mean beside its balls-into-bins
// expectation.
func imbalanceChart(m *Measures) (chart, error) {
	title := "Imbalance: measured max/mean against balls into bins"
	ch := chart{Title: title}
	spreads := []struct {
		name string
		s    *Spread
	}{
		{"receive queues (bytes)", &m.Queues},
		{"workers (bytes)", &m.Workers},
		{"flows per worker", &m.WorkerFlows},
	}
	// Bars of max/mean − 1: the busiest bin's excess over the mean, which
	// a scale from 0 to max/mean would flatten.
	var measured, expected plotter.Values
	var names []string
	for _, sp := range spreads {
		if len(sp.s.Packets) == 0 || sp.s.MaxMean == 0 {
			continue
		}
		measured = append(measured, 100*(sp.s.MaxMean-1))
		expected = append(expected, 100*(sp.s.ExpectedMaxMean-1))
		names = append(names, fmt.Sprintf("%s, %d bins", sp.name, len(sp.s.Packets)))
	}
	if len(names) == 0 {
		ch.Note = "no traffic"
		return ch, nil
	}
	p := newPlot(title, "", "busiest bin above the mean (%)")
	w := vg.Points(40)
	mb, err := plotter.NewBarChart(measured, w)
	if err != nil {
		return ch, fmt.Errorf("plot %s: %w", title, err)
	}
	eb, err := plotter.NewBarChart(expected, w)
	if err != nil {
		return ch, fmt.Errorf("plot %s: %w", title, err)
	}
	mb.Color, mb.Offset, mb.LineStyle.Width = barColor, -w/2, 0
	eb.Color, eb.Offset, eb.LineStyle.Width = idealColor, w/2, 0
	p.Add(mb, eb)
	p.Legend.Add("measured", mb)
	if m.Flows > 0 {
		p.Legend.Add(fmt.Sprintf("expected from hashing %d equal flows", m.Flows), eb)
	} else {
		p.Legend.Add("expected: n/a, no flows counted", eb)
	}
	p.NominalX(names...)
	fitBars(p, len(names), max(slices.Max(measured), slices.Max(expected)))
	ch.SVG, err = svg(p)
	return ch, err
}

// sharesChart is each worker's per-flow (per-slot) share distribution,
// largest first, on a log scale, against each one's fair share.
func sharesChart(m *Measures) (chart, error) {
	title := "Per-flow share distribution inside each worker's consumer"
	ch := chart{Title: title}
	p := newPlot(title, "flow slot rank (largest first)", "share of the worker's bytes (%)")
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	lines, top, with := 0, 0.0, 0
	for i, c := range m.Consumers {
		if len(c.Shares) == 0 {
			continue
		}
		if with++; lines == maxChartLines {
			continue
		}
		var xys plotter.XYs
		for r := range thinned(len(c.Shares)) {
			// A log scale takes only positive values (a file may hold others).
			if y := 100 * c.Shares[r]; y > 0 && !math.IsInf(y, 0) {
				xys = append(xys, plotter.XY{X: float64(r + 1), Y: y})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return ch, fmt.Errorf("plot %s: %w", title, err)
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("worker %d (%d slots)", c.Worker, c.Served), l)
		if c.FairShare > 0 && !math.IsInf(c.FairShare, 0) {
			fair := plotter.NewFunction(func(float64) float64 { return 100 * c.FairShare })
			fair.Color, fair.Dashes = plotutil.Color(i), []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(fair)
			p.Legend.Add(fmt.Sprintf("worker %d fair share", c.Worker), fair)
		}
		lines++
		for _, xy := range xys {
			top = max(top, xy.Y)
		}
	}
	if lines == 0 {
		ch.Note = "no flow shares: the consumer does not report them, or served nothing"
		return ch, nil
	}
	p.Y.Max = top * 8 // room for the legend, a decade and more above the lines
	ch.Note = shownNote(lines, with)
	var err error
	ch.SVG, err = svg(p)
	return ch, err
}

// A chart draws what a page can show, whatever the run: at most
// maxChartPoints points per line (a chart is 960 pixels wide) and
// maxChartLines lines, the first workers', with a note saying how many.
const (
	maxChartPoints = 960
	maxChartLines  = 16
)

// thinned yields at most maxChartPoints of the indexes 0 to n-1, evenly
// spaced, the first and the last among them.
func thinned(n int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		step := max(1, (n+maxChartPoints-2)/(maxChartPoints-1))
		for i := 0; i < n; i += step {
			if !yield(i) {
				return
			}
		}
		if (n-1)%step != 0 {
			yield(n - 1)
		}
	}
}

// shownNote says that a chart shows only lines of its total, "" when it
// shows them all.
func shownNote(lines, total int) string {
	if lines >= total {
		return ""
	}
	return fmt.Sprintf("the first %d of %d workers shown", lines, total)
}

// timelineChart plots one value per worker and window over time.
func timelineChart(m *Measures, title, y string, value func(w *Window, worker int) (float64, bool), extra *series) (chart, error) {
	ch := chart{Title: title}
	if len(m.Timeline) == 0 {
		ch.Note = "the run has no windows"
		return ch, nil
	}
	p := newPlot(title, "time (s)", y)
	if extra != nil {
		var xys plotter.XYs
		for k := range thinned(len(m.Timeline)) {
			w := &m.Timeline[k]
			xys = append(xys, plotter.XY{X: float64(w.StartNs) / 1e9, Y: extra.value(w)})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return ch, fmt.Errorf("plot %s: %w", title, err)
		}
		l.Color, l.Width, l.Dashes = plotutil.Color(len(m.Consumers)), vg.Points(1.5), []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(extra.label, l)
	}
	shown := min(len(m.Consumers), maxChartLines)
	ch.Note = shownNote(shown, len(m.Consumers))
	for wi := range shown {
		var xys plotter.XYs
		for k := range thinned(len(m.Timeline)) {
			w := &m.Timeline[k]
			if v, ok := value(w, wi); ok {
				xys = append(xys, plotter.XY{X: float64(w.StartNs) / 1e9, Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return ch, fmt.Errorf("plot %s: %w", title, err)
		}
		l.Color, l.Width = plotutil.Color(wi), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("worker %d", m.Consumers[wi].Worker), l)
	}
	p.Y.Min = 0
	if p.Y.Max > 0 {
		p.Y.Max *= 1.3 // room for the legend
	}
	var err error
	ch.SVG, err = svg(p)
	return ch, err
}

// series is one more line of a timeline chart.
type series struct {
	label string
	value func(w *Window) float64
}

// charts draws every chart of the HTML page, in order.
func charts(m *Measures) ([]chart, error) {
	backlog := func(w *Window, i int) (float64, bool) {
		if i < len(w.WorkerBacklog) {
			return float64(w.WorkerBacklog[i]), true
		}
		return 0, false
	}
	drops := func(w *Window, i int) (float64, bool) {
		if i < len(w.WorkerDrops) {
			return float64(w.WorkerDrops[i]), true
		}
		return 0, false
	}
	draw := []func() (chart, error){
		func() (chart, error) { return loadChart("Load per receive queue", "receive queue", &m.Queues) },
		func() (chart, error) { return loadChart("Load per worker", "worker", &m.Workers) },
		func() (chart, error) { return imbalanceChart(m) },
		func() (chart, error) { return sharesChart(m) },
		func() (chart, error) {
			const title = "Consumer queue depth at each window's end"
			if !anyBacklog(m) {
				return chart{Title: title, Note: "Every consumer was empty at every window's end (so every sojourn time is 0): " +
					"served at " + serviceRate(m) + ", a worker empties its consumer as it feeds it, and no queue forms. " +
					"A --service-rate below the offered load models a CPU that falls behind."}, nil
			}
			return timelineChart(m, title, "packets queued", backlog, nil)
		},
		func() (chart, error) {
			kernel := &series{label: "kernel, before the receive loops", value: func(w *Window) float64 { return float64(w.KernelDrops) }}
			return timelineChart(m, "Drops per window, all stages (by worker after the receive loops)", "packets dropped", drops, kernel)
		},
	}
	if m.Search != nil {
		draw = append([]func() (chart, error){func() (chart, error) { return searchChart(m.Search) }}, draw...)
	}
	out := make([]chart, 0, len(draw))
	for _, d := range draw {
		c, err := d()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sc, err := steeringCharts(m)
	return append(out, sc...), err
}

// anyBacklog reports whether a consumer held a packet at a window's end.
func anyBacklog(m *Measures) bool {
	for _, w := range m.Timeline {
		for _, b := range w.WorkerBacklog {
			if b > 0 {
				return true
			}
		}
	}
	return false
}

// serviceRate names the workers' service rate.
func serviceRate(m *Measures) string {
	if m.Run.ServiceRate == "" {
		return "max"
	}
	return m.Run.ServiceRate
}
