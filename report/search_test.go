package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/runstats"
)

// searchRecord is a search of three trials: the generator's maximum (lost
// to the AF_XDP ring), the floor, and 48 kfps, the NDR's lower bound below a
// failure at 52 kfps that the worker ring broke first.
func searchRecord() *runstats.SearchReport {
	trial := func(rate float64, max bool, sent, lost uint64, drops map[string]uint64, pass ...bool) runstats.SearchTrial {
		return runstats.SearchTrial{Rate: rate, Max: max, DurationNs: int64(time.Second), ElapsedNs: int64(time.Second),
			Sent: sent, Bytes: 400 * sent, Achieved: float64(sent), Sustained: true, Lost: lost, LossRatio: float64(lost) / float64(sent),
			Pass: pass, Drops: drops, CPU: runstats.SearchCPU{GeneratorNs: int64(sent) * 300, PipelineNs: int64(sent) * 900, SoftirqNs: int64(sent) * 200, Pipeline: "process", Valid: true}}
	}
	return &runstats.SearchReport{
		SchemaVersion: runstats.SearchSchemaVersion, Lab: "veth", Profile: "datacenter",
		Floor: 1000, Max: 900000, Width: 0.1, TrialNs: int64(time.Second), BudgetNs: int64(time.Minute), SpentNs: int64(10 * time.Second),
		Goals: []runstats.SearchGoal{{Name: "NDR", Status: "found", Lower: 48000, LowerTrial: 2, Upper: 52000, UpperTrial: 3}},
		Trials: []runstats.SearchTrial{
			trial(900000, true, 900000, 300000, map[string]uint64{"kernel/rx_ring_full": 300000}, false),
			trial(1000, false, 1000, 0, nil, true),
			trial(48000, false, 48000, 0, nil, true),
			trial(52000, false, 52000, 700, map[string]uint64{"ring/full": 600, "kernel/rx_dropped": 100}, false),
		},
		StatsTrial: 2,
	}
}

func TestSearchSection(t *testing.T) {
	st := simulatedRun(t, 10, 1, 1, 50*time.Millisecond)
	st.Search = searchRecord()
	var text bytes.Buffer
	if err := WriteText(&text, st); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	// The goal's row: the rate sent at its lower bound, the bracket, its
	// width, the bits per second of its frames, its CPU per frame and
	// what broke first one step up, largest first.
	for _, want := range []string{
		"generator maximum 900000 fps", "[48000, 52000)", "7.7%", "154 M (400 B/frame)",
		"ring/full 600, kernel/rx_dropped 100", "the statistics below are trial 2's",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q:\n%s", want, out)
		}
	}
	if goal := row(out, "NDR"); len(goal) < 15 || goal[11] != "300" || goal[12] != "900" || goal[14] != "200" {
		t.Errorf("NDR row %q: want CPU 300, 900 (process), 200 ns per frame", goal)
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, st); err != nil {
		t.Fatal(err)
	}
	if h := html.String(); !strings.Contains(h, "Rate search: loss ratio") || !strings.Contains(h, "<h2>Rate search</h2>") || !strings.Contains(h, "[48000, 52000)") {
		t.Error("the HTML report lacks the search's chart or tables")
	}
	var js bytes.Buffer
	m := Compute(st)
	if err := m.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"stats_trial": 2`) {
		t.Errorf("the measures JSON lacks the search (%v)", err)
	}
}

func TestReadRefusesBadSearch(t *testing.T) {
	for name, spoil := range map[string]func(*runstats.SearchReport){
		"version":         func(s *runstats.SearchReport) { s.SchemaVersion = 99 },
		"stats trial":     func(s *runstats.SearchReport) { s.StatsTrial = 4 },
		"goal's trial":    func(s *runstats.SearchReport) { s.Goals[0].UpperTrial = 9 },
		"verdicts":        func(s *runstats.SearchReport) { s.Trials[1].Pass = nil },
		"lost above sent": func(s *runstats.SearchReport) { s.Trials[1].Lost = 2000 },
	} {
		st := simulatedRun(t, 10, 1, 1, 50*time.Millisecond)
		st.Search = searchRecord()
		b, _ := json.Marshal(st)
		if _, err := Read(bytes.NewReader(b)); err != nil {
			t.Fatalf("the good search: %v", err)
		}
		spoil(st.Search)
		b, _ = json.Marshal(st)
		if _, err := Read(bytes.NewReader(b)); !errors.Is(err, ErrRun) {
			t.Errorf("%s: Read took it (%v)", name, err)
		}
	}
}
