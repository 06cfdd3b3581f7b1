package report

import (
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/xdphash/xdphash/runstats"
)

// maxSearchTrials and maxSearchGoals bound a search section Read takes.
const (
	maxSearchTrials = 1 << 16
	maxSearchGoals  = 64
)

// checkSearch refuses a search section whose parts do not fit together.
func checkSearch(s *runstats.SearchReport) error {
	if s == nil {
		return nil
	}
	switch {
	case s.SchemaVersion != runstats.SearchSchemaVersion:
		return fmt.Errorf("search section version %d, want %d", s.SchemaVersion, runstats.SearchSchemaVersion)
	case len(s.Trials) > maxSearchTrials || len(s.Goals) > maxSearchGoals:
		return fmt.Errorf("search of %d trials and %d goals, want at most %d and %d", len(s.Trials), len(s.Goals), maxSearchTrials, maxSearchGoals)
	case s.StatsTrial < -1 || s.StatsTrial >= len(s.Trials):
		return fmt.Errorf("search statistics of trial %d of %d", s.StatsTrial, len(s.Trials))
	}
	for i, t := range s.Trials {
		if len(t.Pass) != len(s.Goals) || t.Lost > t.Sent {
			return fmt.Errorf("search trial %d: %d verdicts for %d goals, %d lost of %d sent", i, len(t.Pass), len(s.Goals), t.Lost, t.Sent)
		}
	}
	for _, g := range s.Goals {
		for _, i := range []int{g.LowerTrial, g.UpperTrial} {
			if i < -1 || i >= len(s.Trials) {
				return fmt.Errorf("search goal %s: trial %d of %d", g.Name, i, len(s.Trials))
			}
		}
	}
	return nil
}

// searchView is what the text and the HTML page show of a search, as
// cells.
type searchView struct {
	GoalHeader, TrialHeader []string
	Summary                 string
	Goals                   [][]string
	Trials                  [][]string
	Notes                   []string
}

var searchGoalHeader = []string{"goal", "status", "rate (fps sent)", "bracket (fps asked)", "width", "L2 bit/s", "loss ratio", "CPU ns/frame: generator", "pipeline", "softirq", "drops one step up (what broke first)"}

var searchTrialHeader = []string{"trial", "asked (fps)", "sent (fps)", "sustained", "sent", "lost", "loss ratio", "pass", "drops by stage"}

func newSearchView(s *runstats.SearchReport) searchView {
	v := searchView{GoalHeader: searchGoalHeader, TrialHeader: searchTrialHeader}
	budget := time.Duration(s.BudgetNs).Round(time.Second)
	v.Summary = fmt.Sprintf("rate search, lab %s, profile %s: %d trials of %s in %s of a %s budget; generator maximum %s fps; floor %s fps, width goal %.1f%%",
		cmp.Or(s.Lab, "?"), cmp.Or(s.Profile, "?"), len(s.Trials), time.Duration(s.TrialNs), time.Duration(s.SpentNs).Round(time.Second), budget,
		fps(s.Max), fps(s.Floor), 100*s.Width)
	if s.Interrupted {
		v.Summary += "; INTERRUPTED: the trials so far"
	}
	if s.Error != "" {
		v.Notes = append(v.Notes, "the search ended early: "+s.Error)
	}
	trial := func(i int) *runstats.SearchTrial {
		if i < 0 || i >= len(s.Trials) {
			return nil
		}
		return &s.Trials[i]
	}
	for _, g := range s.Goals {
		row := []string{g.Name, g.Status, "-", bracket(g), "-", "-", "-", "-", "-", "-", "-"}
		if lo := trial(g.LowerTrial); lo != nil {
			row[2] = fps(lo.Achieved)
			if lo.ElapsedNs > 0 {
				row[5] = si(8*float64(lo.Bytes)/time.Duration(lo.ElapsedNs).Seconds()) + fmt.Sprintf(" (%.0f B/frame)", meanFrame(lo))
			}
			row[6] = fmt.Sprintf("%.4f%%", 100*lo.LossRatio)
			if lo.CPU.Valid && lo.Sent > 0 {
				n := float64(lo.Sent)
				row[7], row[8], row[9] = fmt.Sprintf("%.0f", float64(lo.CPU.GeneratorNs)/n), fmt.Sprintf("%.0f (%s)", float64(lo.CPU.PipelineNs)/n, lo.CPU.Pipeline), fmt.Sprintf("%.0f", float64(lo.CPU.SoftirqNs)/n)
			}
		}
		if g.LowerTrial >= 0 && g.UpperTrial >= 0 {
			row[4] = fmt.Sprintf("%.1f%%", 100*(g.Upper-g.Lower)/g.Upper)
		}
		if up := trial(g.UpperTrial); up != nil {
			row[10] = topDrops(up, 3)
			if !up.Sustained {
				row[10] = "the generator: sent " + fps(up.Achieved) + " of " + fps(up.Rate) + "; " + row[10]
			}
		}
		v.Goals = append(v.Goals, row)
	}
	for i, t := range s.Trials {
		asked := fps(t.Rate)
		if t.Max {
			asked = "max"
		}
		var pass []string
		for j, p := range t.Pass {
			if j < len(s.Goals) && p {
				pass = append(pass, s.Goals[j].Name)
			}
		}
		sust := "yes"
		switch {
		case t.Interrupted:
			sust = "interrupted"
		case !t.Sustained:
			sust = "NO"
		}
		v.Trials = append(v.Trials, []string{fmt.Sprint(i), asked, fps(t.Achieved), sust, fmt.Sprint(t.Sent), fmt.Sprint(t.Lost),
			fmt.Sprintf("%.4f%%", 100*t.LossRatio), cmp.Or(strings.Join(pass, " "), "-"), topDrops(&t, 4)})
	}
	v.Notes = append(v.Notes, "a trial's loss is every frame sent that no consumer served or holds: drops at every stage, and frames counted nowhere (unaccounted); a trial whose generator fell short of the rate asked is no pass. CPU per frame sent, from /proc: the generator's threads, the pipeline (process: xdphash less the generator; guest: the virtio lab's QEMU), the softirqs of every CPU.")
	return v
}

func meanFrame(t *runstats.SearchTrial) float64 {
	if t.Sent == 0 {
		return 0
	}
	return float64(t.Bytes) / float64(t.Sent)
}

// bracket is "[lower, upper)" as far as its ends were found.
func bracket(g runstats.SearchGoal) string {
	lo, hi := "-", "-"
	if g.LowerTrial >= 0 {
		lo = fps(g.Lower)
	}
	if g.UpperTrial >= 0 {
		hi = fps(g.Upper)
	}
	return "[" + lo + ", " + hi + ")"
}

// fps writes a rate to the frame: a search measures no finer.
func fps(v float64) string { return fmt.Sprintf("%.0f", v) }

// si writes v with an SI prefix, 3 significant digits.
func si(v float64) string {
	for _, p := range []struct {
		s string
		m float64
	}{{"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if v >= p.m {
			return fmt.Sprintf("%.3g %s", v/p.m, p.s)
		}
	}
	return fmt.Sprintf("%.3g ", v)
}

// topDrops is a trial's n largest drops by stage, "stage n, ...".
func topDrops(t *runstats.SearchTrial, n int) string {
	keys := slices.SortedFunc(maps.Keys(t.Drops), func(a, b string) int {
		return cmp.Or(cmp.Compare(t.Drops[b], t.Drops[a]), cmp.Compare(a, b))
	})
	var parts []string
	for _, k := range keys {
		if t.Drops[k] == 0 {
			continue
		}
		if len(parts) == n {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", k, t.Drops[k]))
	}
	return cmp.Or(strings.Join(parts, ", "), "none")
}

// WriteSearch writes a rate search's record as WriteText's search section
// does: the goals' brackets, then every trial.
func WriteSearch(w io.Writer, s *runstats.SearchReport) error {
	ew := &errWriter{w: w}
	writeSearch(ew, s)
	return ew.err
}

// writeSearchText writes the search section of the text report.
func (m *Measures) writeSearchText(ew *errWriter) {
	if m.Search == nil {
		return
	}
	writeSearch(ew, m.Search)
	ew.printf("\nthe statistics below are trial %d's\n\n", m.Search.StatsTrial)
}

func writeSearch(ew *errWriter, s *runstats.SearchReport) {
	v := newSearchView(s)
	ew.printf("%s\n", v.Summary)
	for _, rows := range []struct {
		header []string
		rows   [][]string
	}{{searchGoalHeader, v.Goals}, {searchTrialHeader, v.Trials}} {
		tw := ew.table()
		row := func(cells []string) {
			args := make([]any, len(cells))
			for i, c := range cells {
				args[i] = c
			}
			cellf(tw, strings.Repeat("%s\t", len(cells))+"\n", args...)
		}
		row(rows.header)
		for _, r := range rows.rows {
			row(r)
		}
		ew.flush(tw)
		ew.printf("\n")
	}
	for _, n := range v.Notes {
		ew.printf("note: %s\n", n)
	}
}

// searchChart plots each trial's loss ratio against its rate, one marker
// for the trials the generator sustained and another for those it did not,
// with a line at each goal's loss ratio.
func searchChart(s *runstats.SearchReport) (chart, error) {
	const title = "Rate search: loss ratio of each trial against its rate"
	ch := chart{Title: title}
	var ok, short plotter.XYs
	for _, t := range s.Trials {
		if t.Interrupted || t.Rate <= 0 {
			continue
		}
		xy := plotter.XY{X: t.Rate, Y: 100 * t.LossRatio}
		if t.Sustained {
			ok = append(ok, xy)
		} else {
			short = append(short, xy)
		}
	}
	if len(ok)+len(short) == 0 {
		ch.Note = "no trial finished"
		return ch, nil
	}
	p := newPlot("rate asked (frames per second, log scale)", "loss ratio (%)")
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	for i, set := range []struct {
		xys   plotter.XYs
		label string
		shape draw.GlyphDrawer
	}{{ok, "trial", draw.CircleGlyph{}}, {short, "trial the generator did not sustain", draw.CrossGlyph{}}} {
		if len(set.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.xys)
		if err != nil {
			return ch, fmt.Errorf("plot %s: %w", title, err)
		}
		sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = set.shape, vg.Points(4)
		sc.GlyphStyle.Color = []color.Color{barColor, color.RGBA{R: 0xcc, A: 0xff}}[i]
		p.Add(sc)
		p.Legend.Add(set.label, sc)
	}
	for i, g := range s.Goals {
		r := 100 * g.LossRatio
		l := plotter.NewFunction(func(float64) float64 { return r })
		l.Color, l.Width, l.Dashes = plotutil.Color(i+2), vg.Points(1), []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(l)
		label := g.Name + " loss ratio"
		if g.LowerTrial >= 0 {
			label += ": " + fps(g.Lower) + " fps"
		}
		p.Legend.Add(label, l)
	}
	// Room on the log axis so that no trial sits on its edge, and above for
	// the legend.
	p.X.Min, p.X.Max = p.X.Min/1.5, p.X.Max*1.5
	p.Y.Min = 0
	p.Y.Max = max(p.Y.Max, 1) * 1.6
	var err error
	ch.SVG, err = svg(p)
	return ch, err
}

// The HTML page's search section, executed with the search record.
var _ = template.Must(page.New("search").Funcs(template.FuncMap{"searchView": newSearchView}).Parse(`{{with searchView .}}<h2>Rate search</h2>
<p>{{.Summary}}.</p>
<table><tr>{{range .GoalHeader}}<th>{{.}}</th>{{end}}</tr>
{{range .Goals}}<tr>{{range .}}<td class="l">{{.}}</td>{{end}}</tr>
{{end}}</table>
<h3>Trials</h3>
<table><tr>{{range .TrialHeader}}<th>{{.}}</th>{{end}}</tr>
{{range .Trials}}<tr>{{range .}}<td class="l">{{.}}</td>{{end}}</tr>
{{end}}</table>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{end}}`))
