package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunCompareStatic replays the elephants profile at 85% mean load with
// --compare static and the hold: the JSON carries both runs over the same
// frames, the rebalanced run drops less, balances closer to the bound and
// reorders nothing, and the text puts both side by side.
func TestRunCompareStatic(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	stdout, stderr, code := runXdphash(t, nil, "run", "--synthetic", "elephants", "--count", "300000", "--virtual-clock",
		"--replay", "1Mpps", "--workers", "4", "--service-rate", "294118pps", "--consumer", "fq", "--ring-size", "256",
		"--steer", "reta", "--rebalance=20ms", "--rebalance-hold", "--compare", "static", "--hash-key", kunitKey, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	if st.SchemaVersion != runstats.SchemaVersion || st.Steering == nil || st.Steering.Compare == nil || st.Steering.Compare.Static == nil {
		t.Fatalf("no comparison in the run JSON (schema %d)", st.SchemaVersion)
	}
	static := st.Steering.Compare.Static
	if static.Accounting.Received != st.Accounting.Received || static.Steering.Rebalance != nil || st.Steering.Rebalance == nil {
		t.Errorf("static run: received %d of %d, rebalance %+v", static.Accounting.Received, st.Accounting.Received, static.Steering.Rebalance)
	}
	if st.Accounting.Total() >= static.Accounting.Total() {
		t.Errorf("drops: rebalanced %d, static %d", st.Accounting.Total(), static.Accounting.Total())
	}
	if st.Steering.Balance.MaxMean >= static.Steering.Balance.MaxMean {
		t.Errorf("max/mean: rebalanced %.3f, static %.3f", st.Steering.Balance.MaxMean, static.Steering.Balance.MaxMean)
	}
	if h := st.Steering.Rebalance.Hold; h == nil || h.Buckets != st.Steering.Rebalance.Moves || st.Steering.Reorder.Reordered != 0 {
		t.Errorf("hold %+v for %d moves, reorder %+v: want a hold per move and nothing reordered", h, st.Steering.Rebalance.Moves, st.Steering.Reorder)
	}
	for _, want := range []string{"static ", "rebalanced ", "buckets moved/s", "balanced table for the whole run", "hold: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
}

// TestRunRebalanceFlags refuses what it would ignore.
func TestRunRebalanceFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--rebalance"},
		{"--steer", "reta", "--reta-size", "256"},
		{"--steer", "reta", "--rebalance=10us"},
		{"--steer", "reta", "--rebalance", "--compare", "static"}, // not virtual
		{"--steer", "reta", "--compare", "static", "--virtual-clock"},
		{"--steer", "reta", "--rebalance", "--rebalance-threshold", "0.9"},
		{"--steer", "reta", "--rebalance-hold"}, // a static table moves nothing to hold
	} {
		_, stderr, code := runXdphash(t, nil, append([]string{"run", "--synthetic", "elephants", "--count", "100"}, args...)...)
		if code == 0 {
			t.Errorf("%v: accepted", args)
		} else if !strings.Contains(stderr, "--") {
			t.Errorf("%v: error names no flag: %s", args, stderr)
		}
	}
	for _, args := range [][]string{
		{"--pcap", "-", "--virtual-clock", "--steer", "reta", "--rebalance", "--compare", "static"},
	} {
		_, stderr, code := runXdphash(t, nil, append([]string{"run"}, args...)...)
		if code == 0 {
			t.Errorf("%v: accepted", args)
		} else if !strings.Contains(stderr, "--") {
			t.Errorf("%v: error names no flag: %s", args, stderr)
		}
	}
}
