package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"
	"time"

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
	ID    string // the heading's anchor
	SVG   template.HTML
	Note  string
}

// barColor fills measured loads; idealColor draws the reference a measure
// is judged by (the even share, the expectation).
var (
	barColor   = color.RGBA{R: 90, G: 155, B: 212, A: 0xff}
	idealColor = color.RGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
)

// svg renders p as an inline SVG element, with the hover titles of hs:
// vgsvg writes a standalone file, whose XML prolog an HTML page must not
// carry.
func svg(p *plot.Plot, hs ...*hover) (template.HTML, error) {
	c := vgsvg.New(chartW, chartH)
	for _, h := range hs {
		p.Add(h) // last: it draws nothing, it records where the points landed
	}
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("render chart %q: %w", p.Title.Text, err)
	}
	s := b.Bytes()
	if i := bytes.Index(s, []byte("<svg")); i > 0 {
		s = s[i:]
	}
	end := bytes.LastIndex(s, []byte("</svg>"))
	if end < 0 {
		return "", fmt.Errorf("render chart %q: no </svg> in gonum's output", p.Title.Text)
	}
	var out bytes.Buffer
	out.Write(s[:end])
	for _, h := range hs {
		h.writeSVG(&out)
	}
	out.Write(s[end:])
	return template.HTML(out.String()), nil // gonum's own output and escaped titles, not user data
}

// newPlot is a chart with axes x and y; its title is the page's heading
// above it, not part of the drawing.
func newPlot(x, y string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// hover gives a chart's points, or bars, SVG <title> elements, which a
// browser shows as a tooltip over them: gonum draws none. Added to a plot
// last, it draws nothing: it records where its points landed, and svg
// writes a transparent target with the title over each.
type hover struct {
	pts   []hoverPoint
	marks []hoverMark
}

// hoverPoint is a data point and its title; a bar of width w (offset off
// from x) spans from 0 to y, a point of w 0 is a dot.
type hoverPoint struct {
	x, y   float64
	w, off vg.Length
	text   string
}

// hoverMark is a target in SVG coordinates (points from the top left).
type hoverMark struct {
	x, y, w, h float64
	dot        bool
	text       string
}

// maxHoverPoints bounds the targets of one line: one every few pixels is
// as many as a pointer can tell apart.
const maxHoverPoints = 120

func (h *hover) add(x, y float64, text string) {
	h.pts = append(h.pts, hoverPoint{x: x, y: y, text: text})
}

func (h *hover) addBar(x, y float64, w, off vg.Length, text string) {
	h.pts = append(h.pts, hoverPoint{x: x, y: y, w: w, off: off, text: text})
}

// Plot records the targets' places in c (plot.Plotter).
func (h *hover) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	top := chartH.Points()
	h.marks = h.marks[:0]
	for _, pt := range h.pts {
		x, y := tx(pt.x)+pt.off, ty(pt.y)
		if pt.w == 0 {
			h.marks = append(h.marks, hoverMark{x: x.Points(), y: top - y.Points(), dot: true, text: pt.text})
			continue
		}
		y0 := max(ty(0), c.Min.Y)
		h.marks = append(h.marks, hoverMark{x: (x - pt.w/2).Points(), y: top - y.Points(), w: pt.w.Points(), h: (y - y0).Points(), text: pt.text})
	}
}

func (h *hover) writeSVG(b *bytes.Buffer) {
	for _, m := range h.marks {
		t := html.EscapeString(m.text)
		if m.dot {
			fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#000\" fill-opacity=\"0\"><title>%s</title></circle>\n", m.x, m.y, t)
			continue
		}
		fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#000\" fill-opacity=\"0\"><title>%s</title></rect>\n", m.x, m.y, m.w, max(m.h, 1), t)
	}
}

// barLabels writes each bar's value above it, as the hover does.
func barLabels(vals plotter.Values, off vg.Length, format func(float64) string) (*plotter.Labels, error) {
	xys := make(plotter.XYs, len(vals))
	labels := make([]string, len(vals))
	for i, v := range vals {
		xys[i] = plotter.XY{X: float64(i), Y: v}
		labels[i] = format(v)
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
		l.TextStyle[i].Font.Size = vg.Points(9)
	}
	l.Offset = vg.Point{X: off, Y: vg.Points(3)}
	return l, nil
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
	p := newPlot(bin, "share of "+unit+" (%)")
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
	labels, err := barLabels(vals, 0, func(v float64) string { return fmt.Sprintf("%.1f%%", v) })
	if err != nil {
		return ch, fmt.Errorf("plot %s: %w", title, err)
	}
	hv := &hover{}
	for i, v := range vals {
		hv.addBar(float64(i), v, barWidth(len(vals)), 0, fmt.Sprintf("%s %d: %.2f%% of the %s (%s %s)", bin, i, v, unit, grouped(load[i]), unit))
	}
	p.Add(bars, ideal)
	if len(vals) <= maxLabelledBars {
		p.Add(labels)
	}
	p.Legend.Add(unit, bars)
	p.Legend.Add(fmt.Sprintf("even share (%.1f%%)", 100/float64(len(shares))), ideal)
	p.NominalX(names...)
	fitBars(p, len(vals), slices.Max(vals))
	ch.SVG, err = svg(p, hv)
	return ch, err
}

// maxLabelledBars is the most bars a chart labels with their values: more
// and the labels overlap (the hover titles still give each).
const maxLabelledBars = 32

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
	p := newPlot("", "busiest bin above the mean (%)")
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
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", v) }
	ml, err := barLabels(measured, -w/2, pct)
	if err != nil {
		return ch, fmt.Errorf("plot %s: %w", title, err)
	}
	el, err := barLabels(expected, w/2, pct)
	if err != nil {
		return ch, fmt.Errorf("plot %s: %w", title, err)
	}
	hv := &hover{}
	for i := range names {
		hv.addBar(float64(i), measured[i], w, -w/2, fmt.Sprintf("%s: measured max/mean %.3f (busiest bin %.1f%% above the mean)", names[i], 1+measured[i]/100, measured[i]))
		hv.addBar(float64(i), expected[i], w, w/2, fmt.Sprintf("%s: expected max/mean %.3f", names[i], 1+expected[i]/100))
	}
	p.Add(mb, eb, ml, el)
	p.Legend.Add("measured", mb)
	if m.Flows > 0 {
		p.Legend.Add(fmt.Sprintf("expected from hashing %d equal flows", m.Flows), eb)
	} else {
		p.Legend.Add("expected: n/a, no flows counted", eb)
	}
	p.NominalX(names...)
	fitBars(p, len(names), max(slices.Max(measured), slices.Max(expected)))
	ch.SVG, err = svg(p, hv)
	return ch, err
}

// sharesChart is each worker's per-flow (per-slot) share distribution,
// largest first, on a log scale, against each one's fair share.
func sharesChart(m *Measures) (chart, error) {
	title := "Per-flow share distribution inside each worker's consumer"
	ch := chart{Title: title}
	p := newPlot("flow slot rank (largest first)", "share of the worker's bytes (%)")
	hv := &hover{}
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
		for k := range sparse(len(xys)) {
			hv.add(xys[k].X, xys[k].Y, fmt.Sprintf("worker %d, slot rank %.0f: %.3g%% of its bytes", c.Worker, xys[k].X, xys[k].Y))
		}
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
	ch.SVG, err = svg(p, hv)
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

// sparse yields at most maxHoverPoints of the indexes 0 to n-1, evenly
// spaced, the last among them.
func sparse(n int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		step := max(1, (n+maxHoverPoints-1)/maxHoverPoints)
		for i := (n - 1) % step; i < n; i += step {
			if !yield(i) {
				return
			}
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

// line is one line of a timeline chart: its legend and its value in a
// window (k is the window's index), false where it has none.
type line struct {
	label string
	value func(k int, w *Window) (float64, bool)
}

// timelineChart plots lines over the run's windows, the first
// maxChartLines of them, each point with a hover title of its value in
// unit.
func timelineChart(m *Measures, title, y, unit string, lines []line, total int) (chart, error) {
	ch := chart{Title: title}
	if len(m.Timeline) == 0 {
		ch.Note = "the run has no windows"
		return ch, nil
	}
	p := newPlot("time (s)", y)
	hv := &hover{}
	shown := min(len(lines), maxChartLines)
	ch.Note = shownNote(shown, total)
	drawn := 0
	for i, ln := range lines[:shown] {
		var xys plotter.XYs
		for k := range thinned(len(m.Timeline)) {
			w := &m.Timeline[k]
			if v, ok := ln.value(k, w); ok {
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
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(ln.label, l)
		for k := range sparse(len(xys)) {
			hv.add(xys[k].X, xys[k].Y, fmt.Sprintf("%s at %.2f s: %s %s", ln.label, xys[k].X, grouped(uint64(math.Round(xys[k].Y))), unit))
		}
		drawn++
	}
	if drawn == 0 {
		return chart{Title: title, Note: "the run's windows do not count these (a run.json from before they did)"}, nil
	}
	p.Y.Min = 0
	p.Y.Tick.Marker = groupedTicks{}
	if p.Y.Max > 0 {
		p.Y.Max *= 1.3 // room for the legend
	}
	var err error
	ch.SVG, err = svg(p, hv)
	return ch, err
}

// groupedTicks are gonum's default ticks with whole numbers written in
// groups of three digits ("800,000"), as the report writes counts.
type groupedTicks struct{}

// Ticks returns the ticks of an axis from lo to hi (plot.Ticker).
func (groupedTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ts {
		if t.Label != "" && t.Value >= 0 && t.Value == math.Trunc(t.Value) && t.Value < math.MaxInt64 {
			ts[i].Label = grouped(uint64(t.Value))
		}
	}
	return ts
}

// windowSeconds is the length of window k in seconds: the run's window,
// the last one cut at the run's end.
func windowSeconds(m *Measures, k int) float64 {
	ns := m.Run.WindowNs
	if k == len(m.Timeline)-1 && m.Run.DurationNs > m.Timeline[k].StartNs {
		ns = min(ns, m.Run.DurationNs-m.Timeline[k].StartNs)
	}
	return float64(ns) / 1e9
}

// perSecond is a line of counts per window, as a rate; of(w) is the
// counts of every bin in window w, i the bin.
func perSecond(m *Measures, label string, i int, of func(w *Window) []uint64) line {
	return line{label: label, value: func(k int, w *Window) (float64, bool) {
		v, secs := of(w), windowSeconds(m, k)
		if i >= len(v) || secs <= 0 {
			return 0, false
		}
		return float64(v[i]) / secs, true
	}}
}

// windowText is "windows of 100ms", the length each point of a timeline
// covers.
func windowText(m *Measures) string {
	return "windows of " + time.Duration(m.Run.WindowNs).String()
}

// rateCharts are the timelines of rates per window: frames received per
// receive queue, served per worker, and the drops, one panel per stage
// (the kernel's, per queue, are often a thousand times the workers', which
// one scale would flatten to zero).
func rateCharts(m *Measures) []func() (chart, error) {
	queues := func(of func(w *Window) []uint64) []line {
		ls := make([]line, len(m.Queues.Packets))
		for q := range ls {
			ls[q] = perSecond(m, fmt.Sprintf("queue %d", q), q, of)
		}
		return ls
	}
	workers := func(of func(w *Window) []uint64) []line {
		ls := make([]line, len(m.Consumers))
		for i, c := range m.Consumers {
			ls[i] = perSecond(m, fmt.Sprintf("worker %d", c.Worker), i, of)
		}
		return ls
	}
	noWindow := func(title string) (chart, bool) {
		if m.Run.WindowNs <= 0 && len(m.Timeline) > 0 {
			return chart{Title: title, Note: "the run does not say how long its windows were"}, true
		}
		return chart{}, false
	}
	rate := func(id, title, y string, ls []line, total int) func() (chart, error) {
		return func() (chart, error) {
			title := title + " (" + windowText(m) + ")"
			c, ok := noWindow(title)
			if !ok {
				var err error
				if c, err = timelineChart(m, title, y, "frames/s", ls, total); err != nil {
					return c, err
				}
			}
			c.ID = id
			return c, nil
		}
	}
	return []func() (chart, error){
		rate("throughput-queues", "Throughput per receive queue: frames received per second", "frames/s",
			queues(func(w *Window) []uint64 { return w.QueuePackets }), len(m.Queues.Packets)),
		rate("throughput-workers", "Throughput per worker: frames served per second", "frames/s",
			workers(func(w *Window) []uint64 { return w.WorkerPackets }), len(m.Consumers)),
		rate("drops-kernel", "Kernel drops per receive queue, before the receive loops", "frames dropped/s",
			queues(func(w *Window) []uint64 { return w.QueueKernelDrops }), len(m.Queues.Packets)),
		rate("drops-workers", "Worker drops per worker, after the receive loops (rings, flow limit, consumer)", "frames dropped/s",
			workers(func(w *Window) []uint64 { return w.WorkerDrops }), len(m.Consumers)),
	}
}

// charts draws every chart of the HTML page, in order.
func charts(m *Measures) ([]chart, error) {
	draw := []func() (chart, error){
		func() (chart, error) { return loadChart("Load per receive queue", "receive queue", &m.Queues) },
		func() (chart, error) { return loadChart("Load per worker", "worker", &m.Workers) },
		func() (chart, error) { return imbalanceChart(m) },
		func() (chart, error) { return sharesChart(m) },
	}
	draw = append(draw, rateCharts(m)...)
	draw = append(draw, func() (chart, error) {
		title := "Consumer queue depth at each window's end"
		if !anyBacklog(m) {
			return chart{Title: title, Note: "Every consumer was empty at every window's end (so every sojourn time is 0): " +
				"served at " + serviceRate(m) + ", a worker empties its consumer as it feeds it, and no queue forms. " +
				"A --service-rate below the offered load models a CPU that falls behind."}, nil
		}
		ls := make([]line, len(m.Consumers))
		for i, c := range m.Consumers {
			ls[i] = line{label: fmt.Sprintf("worker %d", c.Worker), value: func(_ int, w *Window) (float64, bool) {
				if i < len(w.WorkerBacklog) {
					return float64(w.WorkerBacklog[i]), true
				}
				return 0, false
			}}
		}
		return timelineChart(m, title+" ("+windowText(m)+")", "packets queued", "packets", ls, len(m.Consumers))
	})
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
	out = append(out, sc...)
	for i := range out {
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("chart-%d", i+1)
		}
	}
	return out, err
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
