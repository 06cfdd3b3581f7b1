package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/xdphash/xdphash/runstats"
)

// WriteHTML writes the report of st as one self-contained HTML page: the
// verdicts, the charts (load per queue and per worker against the even
// share, imbalance against balls into bins, the per-flow share distribution,
// queue depth and drops over time) as inline SVG, and the tables of
// WriteText. The page loads nothing from anywhere.
func WriteHTML(w io.Writer, st *runstats.RunStats) error {
	return WritePage(w, st, Page{})
}

// Page is what a report page shows beyond the run's statistics: the facts,
// sections and checks of the command that made the run (xdphash soak's
// generator and checks), its outcome, and what it counted before the run
// saw the frames.
type Page struct {
	Title string   // "xdphash report" when empty
	Facts []string // lines under the title
	// Status is the command's outcome in one word of its vocabulary
	// (PASS, FAIL, SKIP, INTERRUPTED), StatusDetail what it means; shown
	// first when set.
	Status, StatusDetail string
	// Upstream, when set, is what was sent and dropped before the run:
	// the loss summary is then of the frames sent.
	Upstream *Upstream
	Sections []Section
	Checks   []Check
}

// Section is a table of the command that made the run, such as a
// generator's threads.
type Section struct {
	Heading string
	Header  []string
	Rows    [][]string
	Lines   []string // below the table
}

// Check is one verdict of the command that made the run.
type Check struct {
	Verdict string // PASS, FAIL or SKIP
	Name    string
	Detail  string
}

// WritePage writes the report of st with p's title, facts and checks.
func WritePage(w io.Writer, st *runstats.RunStats, p Page) error {
	m := p.measures(st)
	return m.writeHTML(w, p)
}

// measures are the measures of st, with the loss of the frames p's command
// sent where it knows them.
func (p *Page) measures(st *runstats.RunStats) Measures {
	m := Compute(st)
	if p.Upstream != nil {
		m.Loss = computeLoss(st, p.Upstream)
	}
	return m
}

// WriteHTML writes m as one self-contained HTML page.
func (m *Measures) WriteHTML(w io.Writer) error { return m.writeHTML(w, Page{}) }

func (m *Measures) writeHTML(w io.Writer, p Page) error {
	cs, err := charts(m)
	if err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	if p.Title == "" {
		p.Title = "xdphash report"
	}
	if err := page.Execute(w, struct {
		M      *Measures
		P      Page
		Charts []chart
	}{m, p, cs}); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}

// lossColours name the loss bar's colours of each stage (CSS div.stageN).
var lossColours = []string{"red", "orange", "purple", "grey"}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":      func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"f3":       func(v float64) string { return fmt.Sprintf("%.3f", v) },
	"f4":       func(v float64) string { return fmt.Sprintf("%.4f", v) },
	"sojourn":  sojourn,
	"dur":      func(ns int64) string { return time.Duration(ns).Round(time.Millisecond).String() },
	"sum":      sum[string],
	"sumDrops": sumDrops,
	"drops":    dropList,
	"hostPort": hostPort,
	"proto":    protoName,
	"lpct":     pctText,
	"grouped":  grouped,
	"lower":    strings.ToLower,
	"colour":   func(i int) string { return lossColours[min(i, len(lossColours)-1)] },
	"mul100":   func(v float64) float64 { return 100 * v },
	"at": func(x []uint64, i int) uint64 {
		if i < len(x) {
			return x[i]
		}
		return 0
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.P.Title}}</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; } h3 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #eef; }
td.l, th.l { text-align: left; }
p.verdict { background: #f6f6e8; border-left: 4px solid #cc9; padding: 0.4em 0.8em; }
td.PASS { background: #dfd; } td.FAIL { background: #fdd; } td.SKIP { background: #ffd; }
p.status { font-size: 1.1em; padding: 0.4em 0.8em; border-left: 6px solid #888; }
p.PASS { background: #dfd; } p.FAIL, p.INTERRUPTED { background: #fdd; border-color: #c33; } p.SKIP { background: #ffd; }
section.loss { background: #fff4e0; border: 1px solid #e0b070; padding: 0.2em 1em 0.6em; margin: 1em 0; }
section.loss p.headline { font-size: 1.15em; font-weight: bold; }
div.lossbar { display: flex; width: 100%; max-width: 60em; height: 1.2em; border: 1px solid #999; background: #6c6; }
div.lossbar div { height: 100%; }
div.stage0 { background: #d33; } div.stage1 { background: #f80; } div.stage2 { background: #a3c; } div.stage3 { background: #888; }
td.pre { text-align: left; white-space: pre-wrap; font-family: monospace; font-size: 0.9em; }
p.note { font-size: 0.9em; color: #555; }
figure { margin: 1em 0; } figcaption { font-weight: bold; }
</style>
</head>
<body>
<h1>{{.P.Title}}</h1>
{{with .P.Status}}<p class="status {{.}}" id="status"><b>{{.}}</b>{{with $.P.StatusDetail}}: {{.}}{{end}}</p>{{end}}
{{with .M.Loss}}<section class="loss" id="loss"><h2>Loss</h2>
<p class="headline">{{.Headline}}</p>
<div class="lossbar" title="{{.Headline}}">{{range $i, $s := .Stages}}{{if .Frames}}<div class="stage{{$i}}" style="width: {{printf "%.3f" (mul100 .Share)}}%" title="{{.Stage}}: {{lpct .Share}} of the frames lost ({{grouped .Frames}})"></div>{{end}}{{end}}</div>
<p class="note">The bar is every frame {{if eq .OfferedBy "sent"}}sent{{else if eq .OfferedBy "replayed"}}the capture replay offered{{else}}the receive queues saw{{end}}: green arrived{{range $i, $s := .Stages}}{{if .Frames}}, {{colour $i}} lost in the {{.Stage}} stage{{end}}{{end}}.</p>
{{if .Queues}}<table><tr><th>queue</th><th>frames offered</th><th>lost</th><th>share</th><th class="l">reasons</th></tr>
{{range .Queues}}<tr><td>{{.Queue}}</td><td>{{grouped .Offered}}</td><td>{{grouped .Lost}}</td><td>{{lpct .Share}}</td><td class="l">{{range $i, $r := .Reasons}}{{if $i}}, {{end}}{{$r.Reason}} {{lpct $r.Share}}{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Workers}}<table><tr><th>worker</th><th>frames steered to it</th><th>lost</th><th>share</th><th class="l">reasons</th></tr>
{{range .Workers}}<tr><td>{{.Worker}}</td><td>{{grouped .Offered}}</td><td>{{grouped .Lost}}</td><td>{{lpct .Share}}</td><td class="l">{{range $i, $r := .Reasons}}{{if $i}}, {{end}}{{$r.Reason}} {{lpct $r.Share}}{{end}}</td></tr>
{{end}}</table>{{end}}
{{with .ReasonRows}}<table><tr><th>stage/reason</th><th>frames</th><th>share of all</th><th class="l">what it means</th></tr>
{{range .}}<tr><td class="l">{{.Reason}}</td><td>{{grouped .Frames}}</td><td>{{lpct .Share}}</td><td class="l">{{.Meaning}}</td></tr>
{{end}}</table>{{end}}{{with .FillRingNote}}<p class="note">{{.}}</p>{{end}}</section>{{end}}
{{with .M.Run}}<p>Started {{.Started.Format "2006-01-02 15:04:05 MST"}}, ran {{dur .DurationNs}}{{with .Host}}{{if .Kernel}} on {{.CPUModel}} ({{.CPUs}} CPUs), Linux {{.Kernel}}, {{.Go}}{{end}}{{end}}.</p>
<p>Source <b>{{.Source}}</b>, hash <b>{{.Hash}}</b>, steering <b>{{.Steer}}</b>, consumer <b>{{.Consumer}}</b>{{if .ServiceRate}} served at <b>{{.ServiceRate}}</b>{{end}}.</p>{{end}}
{{range .P.Facts}}<p>{{.}}</p>
{{end}}{{if .P.Checks}}<h2>Checks</h2>
<table><tr><th>verdict</th><th>check</th><th>detail</th></tr>
{{range .P.Checks}}<tr><td class="{{.Verdict}}">{{.Verdict}}</td><td class="l">{{.Name}}</td><td class="pre">{{.Detail}}</td></tr>
{{end}}</table>{{end}}
{{if .M.Search}}{{template "search" .M.Search}}{{end}}
{{range .P.Sections}}<h2>{{.Heading}}</h2>
{{if .Header}}<table><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}{{range .Lines}}<p>{{.}}</p>
{{end}}{{end}}
<p>{{if .M.Flows}}{{.M.Flows}} flows{{else}}flows n/a (the consumer counts none){{end}}; received {{.M.Received}}, processed {{.M.Processed}}, unserved {{.M.Unserved}}, dropped {{sumDrops .M.Drops false}} after receive{{if not .M.Balanced}} (accounting does not balance){{end}}; {{sumDrops .M.Drops true}} dropped by the kernel before it.</p>
<h2>Receive queues</h2>
{{template "spread" .M.Queues}}
<h2>Workers</h2>
{{template "spread" .M.Workers}}
{{if .M.Flows}}<p>Flows per worker: Jain {{f4 .M.WorkerFlows.Jain}} (expected {{f4 .M.WorkerFlows.ExpectedJain}}), max/mean {{f3 .M.WorkerFlows.MaxMean}} (expected {{f3 .M.WorkerFlows.ExpectedMaxMean}}).</p>{{end}}
{{range .M.Notes}}<p class="verdict">Note: {{.}}</p>
{{end}}
{{if .M.Steering}}{{template "steering" .M.Steering}}{{end}}
<h2>Charts</h2>
{{range .Charts}}<h3 id="{{.ID}}">{{.Title}}</h3>
<figure>{{if .SVG}}{{.SVG}}{{with .Note}}<p class="note">{{.}}</p>{{end}}{{else}}<p>{{.Note}}</p>{{end}}</figure>
{{end}}

<h2>Load per receive queue</h2>
<table><tr><th>queue</th><th>packets</th><th>bytes</th></tr>
{{range $i, $p := .M.Queues.Packets}}<tr><td>{{$i}}</td><td>{{$p}}</td><td>{{at $.M.Queues.Bytes $i}}</td></tr>
{{end}}</table>

<h2>Load per worker</h2>
<table><tr><th>worker</th><th>packets</th><th>bytes</th><th>flows</th><th>drops</th><th>max backlog</th></tr>
{{range $i, $c := .M.Consumers}}<tr><td>{{$c.Worker}}</td><td>{{at $.M.Workers.Packets $i}}</td><td>{{at $.M.Workers.Bytes $i}}</td><td>{{$c.Flows}}</td><td>{{sum $c.Drops}}</td><td>{{$c.MaxBacklog}}</td></tr>
{{end}}</table>

<h2>Flows inside each worker's consumer</h2>
<table><tr><th>worker</th><th>flows</th><th>slots used</th><th>reachable</th><th>collisions</th><th>expected</th><th>Jain</th><th>max share</th><th>fair share</th><th>consumer drops</th><th>CE marks</th><th>sojourn p50</th><th>p99</th><th>max</th></tr>
{{range .M.Consumers}}<tr><td>{{.Worker}}</td><td>{{.Flows}}</td><td>{{.Buckets}}/{{.Slots}}</td><td>{{.ReachableSlots}}</td><td>{{.Collisions}}</td><td>{{printf "%.1f" .ExpectedCollisions}}</td><td>{{f4 .Jain}}</td><td>{{pct .MaxShare}}</td><td>{{pct .FairShare}}</td><td class="l">{{drops .Drops "consumer/"}}</td><td>{{.CEMarks}}</td><td>{{sojourn .SojournNs "p50"}}</td><td>{{sojourn .SojournNs "p99"}}</td><td>{{sojourn .SojournNs "max"}}</td></tr>
{{end}}</table>

{{range .M.Consumers}}{{if .Top}}<h2>Top flows of worker {{.Worker}}</h2>
<table><tr><th>bytes</th><th>± bytes</th><th>packets</th><th>proto</th><th>source</th><th>destination</th><th>hash</th></tr>
{{range .Top}}<tr><td>{{.Bytes}}</td><td>{{.ErrorBytes}}</td><td>{{.Packets}}</td><td>{{proto .Proto}}</td><td class="l">{{hostPort .Src .SPort}}</td><td class="l">{{hostPort .Dst .DPort}}</td><td>{{printf "%08x" .Hash}}</td></tr>
{{end}}</table>
<p class="note">± bytes: how much the heavy-hitter sketch (SpaceSaving) may overstate a flow's bytes; a flow's true bytes lie between bytes − (± bytes) and bytes.</p>{{end}}{{end}}
</body>
</html>
{{define "spread"}}{{if .Flows}}<p>Jain {{f4 .Jain}} (expected {{f4 .ExpectedJain}} for {{.Flows}} flows), max/mean {{f3 .MaxMean}} (expected {{f3 .ExpectedMaxMean}}).</p>{{else}}<p>Jain {{f4 .Jain}} (expected n/a: no flows counted), max/mean {{f3 .MaxMean}} (expected n/a).</p>{{end}}
<p class="verdict">{{.Verdict}}</p>{{end}}
`))
