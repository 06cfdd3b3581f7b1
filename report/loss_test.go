package report

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/runstats"
)

// lossRun is summaryRun with the kernel's drops of a loaded machine: queue
// 0 lost 1,000,000 frames (rx_ring_full 600,000, rx_dropped 400,000) of
// 4,000,011 it saw; queue 3 none.
func lossRun() *runstats.RunStats {
	st := summaryRun()
	st.Queues[0].Stats.RxRingFull = 600_000
	st.Queues[0].Stats.RxDropped = 400_000
	st.Queues[0].Stats.FillRingEmpty = 400_000
	st.Queues[0].Drops = map[runstats.DropReason]uint64{runstats.DropRingFull: 5, runstats.DropFlowLimit: 0}
	st.Queues[1].Drops = map[runstats.DropReason]uint64{runstats.DropRingFull: 0, runstats.DropFlowLimit: 7}
	st.Account()
	return st
}

// TestLossLeadsEveryReport: the text report and the HTML page open with the
// loss as a share of what was offered, by stage with its reasons, per queue
// and per worker, each reason with its meaning; with what a soak sent, the
// share is of the frames sent, the veth's drops a stage of their own.
func TestLossLeadsEveryReport(t *testing.T) {
	st := lossRun()
	// Offered: 3,000,000 + 2,000 received + 1,000,000 kernel drops.
	const headline = "24.99% of the frames the receive queues saw (received + the kernel's drops) lost (1,000,015 of 4,002,000): kernel 24.99% (rx_ring_full 14.99%, rx_dropped 10.00%), worker rings <0.01% (worker/flow_limit <0.01%, ring/full <0.01%), consumers <0.01% (consumer/overlimit <0.01%)"
	var text bytes.Buffer
	if err := WriteText(&text, st); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(text.String(), "\n")
	if !strings.HasPrefix(first, "loss: "+headline) {
		t.Errorf("the text report starts\n%s\nwant\nloss: %s", first, headline)
	}
	for _, want := range []string{
		"  queue 0: 25.00% of 4,000,000 frames lost: kernel 25.00% (rx_ring_full 15.00%, rx_dropped 10.00%), worker rings <0.01% (ring/full <0.01%)\n",
		"  queue 3: 0.35% of 2,000 frames lost: kernel 0.00%, worker rings 0.35% (worker/flow_limit 0.35%)\n",
		"  worker 0: <0.01% of 2,000,000 frames steered to it lost (ring/full <0.01%, consumer/overlimit <0.01%)\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{
		"kernel/rx_ring_full 600,000 14.99% " + DropMeaning("kernel/rx_ring_full"),
		"unserved 3 <0.01% " + DropMeaning("unserved"),
		"kernel/fill_ring_empty: 400,000 times, " + DropMeaning("kernel/fill_ring_empty"),
	} {
		if r := row(text.String(), want); r == nil {
			t.Errorf("the text report has no row %q:\n%s", want, text.String())
		}
	}

	var page bytes.Buffer
	if err := WritePage(&page, st, Page{Upstream: &Upstream{Sent: 4_100_000, Drops: map[string]uint64{"veth/tx_dropped": 98_000}}}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	const sent = "26.78% of sent frames lost (1,098,015 of 4,100,000): veth 2.39% (tx_dropped 2.39%), kernel 24.39%"
	loss, charts := strings.Index(html, sent), strings.Index(html, "<h2>Receive queues</h2>")
	if loss < 0 || charts < 0 || loss > charts {
		t.Errorf("the page does not lead with %q (at %d, the first table at %d)", sent, loss, charts)
	}
	for _, want := range []string{
		"<td class=\"l\">veth/tx_dropped</td><td>98,000</td><td>2.39%</td><td class=\"l\">" + template.HTMLEscapeString(DropMeaning("veth/tx_dropped")),
		"<td>0</td><td>4,000,000</td><td>1,000,005</td><td>25.00%</td>",
		`<div class="stage1" style="width: 24.390%"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestLossOfOldRun: a run.json without the queues' ring drops gives the
// kernel's losses per queue, and says nothing of the rings per queue.
func TestLossOfOldRun(t *testing.T) {
	st := lossRun()
	for i := range st.Queues {
		st.Queues[i].Drops = nil
	}
	l := computeLoss(st, nil)
	if got, want := l.Queues[0].Line(), "queue 0: 25.00% of 4,000,000 frames lost: kernel 25.00% (rx_ring_full 15.00%, rx_dropped 10.00%)"; got != want {
		t.Errorf("queue line %q, want %q", got, want)
	}
}

// TestLossUnaccounted: frames sent that no stage counts are said to be
// missing, not silently left out of the shares.
func TestLossUnaccounted(t *testing.T) {
	st := lossRun()
	l := computeLoss(st, &Upstream{Sent: 4_002_010})
	if l.Unaccounted != 10 || !strings.Contains(l.Headline(), "; 10 frames unaccounted for") {
		t.Errorf("unaccounted %d, headline %q", l.Unaccounted, l.Headline())
	}
	if l := computeLoss(st, nil); l.Unaccounted != 0 {
		t.Errorf("the receive queues' own count leaves %d unaccounted", l.Unaccounted)
	}
}

// TestEveryDropReasonHasAMeaning: every drop reason the code can emit has a
// one-line meaning in dropMeanings: each runstats.DropReason constant and
// conversion anywhere in the module, each kernel reason Account counts, and
// each "stage/reason" string a soak passes as its upstream drops.
func TestEveryDropReasonHasAMeaning(t *testing.T) {
	names := map[string]string{} // name -> where it was found
	st := runstats.RunStats{Queues: make([]runstats.QueueReport, 1)}
	st.Account()
	for r := range st.Accounting.KernelDrops {
		names["kernel/"+r] = "runstats.RunStats.Account"
	}
	for r := range st.Accounting.ReplayDrops {
		names["replay/"+r] = "runstats.RunStats.Account"
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	upstream := regexp.MustCompile(`^(veth|guest|tap)/[a-z_]+$`)
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec: // const X DropReason = "stage/reason"
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "DropReason" {
					for _, v := range n.Values {
						if lit, ok := v.(*ast.BasicLit); ok {
							s, _ := strconv.Unquote(lit.Value)
							names[s] = fset.Position(lit.Pos()).String()
						}
					}
				}
			case *ast.CallExpr: // DropReason("stage/reason")
				fun := n.Fun
				if sel, ok := fun.(*ast.SelectorExpr); ok {
					fun = sel.Sel
				}
				if id, ok := fun.(*ast.Ident); ok && id.Name == "DropReason" && len(n.Args) == 1 {
					if lit, ok := n.Args[0].(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(lit.Value)
						names[s] = fset.Position(lit.Pos()).String()
					}
				}
			case *ast.BasicLit: // a soak's upstream drops
				if s, err := strconv.Unquote(n.Value); err == nil && upstream.MatchString(s) && !strings.HasSuffix(path, filepath.Join("report", "reasons.go")) {
					names[s] = fset.Position(n.Pos()).String()
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"ring/full", "consumer/codel", "kernel/rx_ring_full", "kernel/rx_left_on_ring", "replay/ring_full"} {
		if _, ok := names[must]; !ok {
			t.Fatalf("the scan missed %s: it finds %v", must, names)
		}
	}
	for name, where := range names {
		if DropMeaning(name) == "" {
			t.Errorf("drop reason %q (%s) has no meaning in dropMeanings", name, where)
		}
	}
}

// TestChartsHeadingsHoverLabels: every chart has a heading of its own right
// above it, the throughput charts show frames per second per queue and per
// worker with the window's length, the drops are one panel per stage, and
// every chart carries hover titles; the bar charts label their bars.
func TestChartsHeadingsHoverLabels(t *testing.T) {
	st := simulatedRun(t, 300, 2, 4, time.Second)
	for k := range st.Windows {
		st.Windows[k].QueueKernelDrops = []uint64{1_600_000, 0, 0, 0}
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, st); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	figures := strings.Split(page, "<figure>")[1:]
	if len(figures) != numCharts {
		t.Fatalf("%d figures, want %d", len(figures), numCharts)
	}
	before := strings.Split(page, "<figure>")
	for i, f := range figures {
		head := before[i][strings.LastIndex(before[i], "\n<h3")+1:]
		if !strings.HasPrefix(head, "<h3 id=") {
			t.Errorf("figure %d has no heading of its own right above it: %.80q", i, head)
		}
		svgPart, _, _ := strings.Cut(f, "</figure>")
		if strings.Contains(svgPart, "<svg") && !strings.Contains(svgPart, "<title>") {
			t.Errorf("figure %d (%s) has no hover titles", i, head)
		}
	}
	for _, want := range []string{
		`<h3 id="throughput-queues">Throughput per receive queue: frames received per second (windows of 100ms)</h3>`,
		`<h3 id="throughput-workers">Throughput per worker: frames served per second (windows of 100ms)</h3>`,
		`<h3 id="drops-kernel">Kernel drops per receive queue, before the receive loops (windows of 100ms)</h3>`,
		`<h3 id="drops-workers">Worker drops per worker, after the receive loops (rings, flow limit, consumer) (windows of 100ms)</h3>`,
		// 1.6 M drops in a 100 ms window: 16 M per second.
		"<title>queue 0 at 0.00 s: 16,000,000 frames/s</title>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Throughput: queue q's frames received in window 0, per second.
	w0 := st.Windows[0]
	want := "<title>queue 1 at 0.00 s: " + grouped(w0.QueuePackets[1]*10) + " frames/s</title>"
	if !strings.Contains(page, want) {
		t.Errorf("the throughput chart lacks %q", want)
	}
	// The axes write counts as the text does: "10,000,000".
	_, kernel, _ := strings.Cut(page, `id="drops-kernel"`)
	kernel, _, _ = strings.Cut(kernel, "</figure>")
	if !strings.Contains(kernel, ",000,000</text>") {
		t.Error("the kernel's drops axis does not group its digits")
	}
	// The workers' drops panel has a scale of its own: its legend and
	// values are not the kernel's.
	_, workers, _ := strings.Cut(page, `id="drops-workers"`)
	workers, _, _ = strings.Cut(workers, "</figure>")
	if strings.Contains(workers, "16,000,000") || !strings.Contains(workers, "worker 0 at") {
		t.Error("the workers' drops panel shares the kernel's scale or lacks the workers")
	}
	// Bars: the load per queue has each bar's share written above it.
	_, load, _ := strings.Cut(page, "Load per receive queue</h3>")
	load, _, _ = strings.Cut(load, "</figure>")
	shares := Compute(st).Queues
	for q := range shares.Bytes {
		label := strconv.FormatFloat(100*float64(shares.Bytes[q])/float64(sumU(shares.Bytes)), 'f', 1, 64) + "%"
		if !strings.Contains(load, ">"+label+"</text>") {
			t.Errorf("queue %d's bar is not labelled %s", q, label)
		}
	}
}

func sumU(v []uint64) uint64 {
	var n uint64
	for _, x := range v {
		n += x
	}
	return n
}

// TestTextPage: the text form of a command's page carries its status, its
// sections and its checks.
func TestTextPage(t *testing.T) {
	st := lossRun()
	var b bytes.Buffer
	err := WriteTextPage(&b, st, Page{
		Title: "xdphash soak", Status: "INTERRUPTED", StatusDetail: "after 17s of 1m0s",
		Sections: []Section{{Heading: "Generator", Header: []string{"thread", "frames"}, Rows: [][]string{{"0", "1,000"}}, Lines: []string{"total 1,000"}}},
		Checks:   []Check{{Verdict: "SKIP", Name: "memory", Detail: "too few samples"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"xdphash soak\nstatus: INTERRUPTED: after 17s of 1m0s\n", "\ngenerator\n", "thread  frames", "total 1,000", "\nchecks\nSKIP  memory\n      too few samples\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text page lacks %q:\n%s", want, text)
		}
	}
}

// TestChartOfCountsTheRunLacks: a run.json whose windows do not count the
// kernel's drops per queue gets a note under that chart's heading, not an
// empty plot.
func TestChartOfCountsTheRunLacks(t *testing.T) {
	st := simulatedRun(t, 30, 2, 2, 300*time.Millisecond)
	for k := range st.Windows {
		st.Windows[k].QueueKernelDrops = nil
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, st); err != nil {
		t.Fatal(err)
	}
	_, kernel, _ := strings.Cut(b.String(), `id="drops-kernel"`)
	kernel, _, _ = strings.Cut(kernel, "</figure>")
	if strings.Contains(kernel, "<svg") || !strings.Contains(kernel, "the run&#39;s windows do not count these") {
		t.Errorf("the kernel's drops chart of a run without them: %.300s", kernel)
	}
}
