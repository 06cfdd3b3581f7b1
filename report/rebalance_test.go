package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/runstats"
)

// retaRun is the simulated run with a RETA steering report by hand: two
// windows whose workers served 30/10 and 20/20 packets.
func retaRun(tb testing.TB, rebalanced bool) *runstats.RunStats {
	tb.Helper()
	st := simulatedRun(tb, 50, 2, 1, 200*time.Millisecond)
	st.Config.Steer = "reta"
	st.Windows = st.Windows[:2]
	st.Windows[0].WorkerPackets = []uint64{30, 10}
	st.Windows[1].WorkerPackets = []uint64{20, 20}
	st.Steering = &runstats.SteeringReport{
		RETASize: 4, Initial: []uint16{0, 1, 0, 1}, Final: []uint16{0, 1, 1, 1},
		Balance: runstats.Balance{MaxMean: 1.25, Bound: 1.1, Table: []uint16{0, 0, 1, 1}},
		Reorder: runstats.ReorderReport{Reordered: 7, Exact: true},
	}
	if rebalanced {
		st.Steering.Rebalance = &runstats.RebalanceReport{IntervalNs: 1e8, Moves: 1, Tables: 1,
			Intervals: []runstats.IntervalReport{{Moves: 1}, {Moves: 0}},
			Hold:      &runstats.HoldReport{Buckets: 1, Held: 4, MaxHeld: 4, WaitNs: 6e6, MaxWaitNs: 2e6}}
	}
	return st
}

func TestSteeringMeasures(t *testing.T) {
	st := retaRun(t, true)
	st.Steering.Compare = &runstats.Comparison{Static: retaRun(t, false)}
	m := Compute(st)
	sm := m.Steering
	if sm == nil || len(sm.Runs) != 2 || sm.Runs[0].Name != "static" || sm.Runs[1].Name != "rebalanced" {
		t.Fatalf("steering measures %+v", sm)
	}
	r := sm.Runs[1]
	if len(r.Imbalance) != 2 || r.Imbalance[0] != 1.5 || r.Imbalance[1] != 1 {
		t.Errorf("imbalance %v, want [1.5 1]", r.Imbalance)
	}
	// 1 bucket of 4 over 0.2 s.
	if r.Moves != 1 || r.MovesPerSec != 1.25 || r.Reordered != 7 || len(r.IntervalMoves) != 2 {
		t.Errorf("rebalanced run %+v", r)
	}
	if sm.Ethtool != "ethtool -X IF weight 1 1" {
		t.Errorf("ethtool line %q", sm.Ethtool)
	}
	var text bytes.Buffer
	if err := m.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	const hold = "the hold kept 4 packets of 1 moved buckets on their new worker until the old one had finished the bucket's earlier packets: mean wait 1.5ms, longest 2ms, at most 4 at once on a worker"
	if sm.Runs[0].Hold != "" || r.Hold != hold {
		t.Errorf("hold: static %q, rebalanced %q, want none and %q", sm.Runs[0].Hold, r.Hold, hold)
	}
	for _, want := range []string{"indirection table (4 buckets)", "static ", "rebalanced ", "ethtool -X IF weight 1 1", "rebalanced: " + hold} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var html bytes.Buffer
	if err := m.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	want := numCharts + 2
	if strings.Contains(html.String(), "Every consumer was empty") {
		want-- // the depth chart of a run without a queue is a note
	}
	if n := strings.Count(html.String(), "<svg"); n != want {
		t.Errorf("%d <svg> elements, want %d", n, want)
	}
	for _, f := range strings.Split(html.String(), "<figure>")[1:] {
		f, _, _ = strings.Cut(f, "</figure>")
		if strings.Contains(f, "<svg") && !strings.Contains(f, "<title>") {
			t.Errorf("a chart has no hover titles: %.200s", f)
		}
	}
	if !strings.Contains(html.String(), "Indirection table (4 buckets)") {
		t.Error("the page has no indirection table section")
	}
	if !strings.Contains(html.String(), "mean wait 1.5ms, longest 2ms") {
		t.Error("the page does not say what the hold did")
	}
}

func TestEthtoolWeights(t *testing.T) {
	for _, tc := range []struct {
		table []uint16
		want  string
	}{
		{[]uint16{0, 0, 0, 1}, "ethtool -X IF weight 3 1"},
		{[]uint16{0, 1, 0, 1}, "ethtool -X IF equal 2"}, // the round robin
		{[]uint16{0, 0, 1, 1}, "ethtool -X IF weight 1 1"},
		{[]uint16{0, 1, 1, 0}, ""},
		{[]uint16{0, 0, 0, 0, 0, 0, 1, 1}, "ethtool -X IF weight 3 1"},
	} {
		if got := EthtoolWeights(tc.table, 2, "IF"); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.table, got, tc.want)
		}
	}
}

func TestBestWeights(t *testing.T) {
	for _, tc := range []struct {
		name    string
		load    []uint64
		workers int
		want    []int
		maxMean float64
	}{
		{"even", []uint64{1, 1, 1, 1}, 2, []int{1, 1}, 1},
		{"heavy first", []uint64{6, 1, 1, 1, 1, 1, 1}, 2, []int{1, 6}, 1.0},
		{"heavy bucket bound", []uint64{9, 1, 1, 1}, 2, []int{1, 3}, 1.5},
		{"more workers than buckets", []uint64{2, 2}, 4, []int{1, 1, 0, 0}, 2},
	} {
		got, mm := BestWeights(tc.load, tc.workers)
		if !slices.Equal(got, tc.want) || math.Abs(mm-tc.maxMean) > 1e-9 {
			t.Errorf("%s: %v, %.3f; want %v, %.3f", tc.name, got, mm, tc.want, tc.maxMean)
		}
	}
}
