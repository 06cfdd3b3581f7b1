package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
	"github.com/xdphash/xdphash/soak"
)

// TestSoakUsage checks the flags that are refused before anything is set up.
func TestSoakUsage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"zero duration", []string{"soak", "--duration", "0s"}, "--duration 0s: want a positive duration"},
		{"unknown mode", []string{"soak", "--mode", "kernel"}, "kernel"},
		{"bad rate", []string{"soak", "--rate", "fast"}, "--rate: parse rate \"fast\": want max or a packet rate"},
		{"bit rate", []string{"soak", "--rate", "1Gbit"}, "--rate: parse rate \"1Gbit\": want max or a packet rate"},
		{"arguments", []string{"soak", "extra"}, "extra"},
		{"queues 0", []string{"soak", "--queues", "0"}, "--queues 0: want 1 to 64"},
		{"queues 5000", []string{"soak", "--queues", "5000"}, "--queues 5000: want 1 to 64"},
		{"workers 0", []string{"soak", "--workers", "0"}, "--workers 0: want 1 to 1024"},
		{"ring size 0", []string{"soak", "--ring-size", "0"}, "--ring-size 0: want 1 to"},
		{"threads -1", []string{"soak", "--threads", "-1"}, "--threads -1: want 1 to 64"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runXdphash(t, nil, tt.args...)
			if code != exitFailure || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitFailure, tt.wantErr)
			}
		})
	}
}

// TestSoakOutChecked: an output directory that cannot be made fails the soak
// at once, before the lab or the generator, and leaves nothing.
func TestSoakOutChecked(t *testing.T) {
	dir := "/proc/xdphash-no-such-dir"
	_, stderr, code := runXdphash(t, nil, "soak", "--duration", "1h", "--out", dir)
	if code != exitFailure || !strings.Contains(stderr, "check output directory "+dir) {
		t.Errorf("exit %d, stderr:\n%s\nwant the output directory's error", code, stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s exists", dir)
	}
	out := filepath.Join(t.TempDir(), "made")
	o := soakOptions{out: out}
	undo, err := o.claimOut()
	if err != nil {
		t.Fatal(err)
	}
	undo()
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an output directory checked and left empty is still there: %v", err)
	}
}

// TestSoakOutNotReused: a soak never writes into a directory that holds
// another run's reports: a given --out with a run.json is refused before the
// lab, and two soaks without --out in the same second get two directories.
func TestSoakOutNotReused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, soak.FileRun), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runXdphash(t, nil, "soak", "--duration", "1h", "--out", dir)
	if code != exitFailure || !strings.Contains(stderr, "holds another run's files") {
		t.Errorf("exit %d, stderr:\n%s\nwant the directory refused", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, soak.FileRun)); string(b) != "{}" {
		t.Errorf("the earlier run.json holds %q", b)
	}
	t.Chdir(t.TempDir())
	var a, b soakOptions
	undoA, err := a.claimOut()
	if err != nil {
		t.Fatal(err)
	}
	defer undoA()
	undoB, err := b.claimOut()
	if err != nil {
		t.Fatal(err)
	}
	defer undoB()
	if a.out == b.out {
		t.Errorf("two soaks share %s", a.out)
	}
}

// TestSoakExit: the soak's exit status for each outcome.
func TestSoakExit(t *testing.T) {
	pass, fail, skip := soak.Check{Pass: true}, soak.Check{}, soak.Check{Skipped: true}
	for _, tt := range []struct {
		name        string
		checks      []soak.Check
		interrupted bool
		want        int
	}{
		{"all pass", []soak.Check{pass, pass}, false, exitOK},
		{"one fails", []soak.Check{pass, fail, skip}, false, exitDivergence},
		{"one skipped", []soak.Check{pass, skip}, false, exitSkipped},
		{"interrupted", []soak.Check{pass}, true, exitInterrupted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := soakExit(&soak.Result{Checks: tt.checks}, tt.interrupted)
			code := exitOK
			var ee *exitError
			if errors.As(err, &ee) {
				code = ee.code
			}
			if code != tt.want {
				t.Errorf("exit %d (%v), want %d", code, err, tt.want)
			}
		})
	}
}

// TestSoakSummary: the soak's terminal summary opens with the status of an
// interrupted soak and then the loss of the frames sent, before the tables,
// the generator and the checks.
func TestSoakSummary(t *testing.T) {
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion, DurationNs: int64(17 * time.Second),
		Config:  runstats.RunConfig{Source: "afxdp:test", Hash: "kernel", Steer: "rps", Consumer: "fq_codel", Workers: 1},
		Queues:  []runstats.QueueReport{{Queue: 0, Stats: runstats.QueueStats{Frames: 700, RxDropped: 300}, Steered: []uint64{700}}},
		Workers: []runstats.WorkerReport{{Worker: 0, CPU: -1, Packets: 700, Drops: map[runstats.DropReason]uint64{runstats.DropRingFull: 0, runstats.DropFlowLimit: 0}}},
	}
	st.Workers[0].Consumer.Enqueued, st.Workers[0].Consumer.Dequeued = 700, 700
	st.Account()
	r := &soak.Result{Stats: st, Lab: soak.LabVeth, Duration: time.Minute, Interrupted: true,
		Generator: pktgen.Report{Frames: 1000, Elapsed: 17 * time.Second},
		Checks:    []soak.Check{{Name: "accounting", Pass: true, Detail: "ok"}}}
	var b strings.Builder
	if err := writeSoakSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "status: INTERRUPTED: the soak was interrupted after 17s of its 1m0s: the checks cover the run so far (1 of 1 checks passed, 0 failed, 0 skipped)\n\n" +
		"loss: 30.00% of sent frames lost (300 of 1,000): veth 0.00%, kernel 30.00% (rx_dropped 30.00%), worker rings 0.00%, consumers 0.00%\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("the summary starts\n%s\nwant\n%s", out[:min(len(out), 400)], want)
	}
	if i, j := strings.Index(out, "generator:"), strings.Index(out, "PASS  accounting"); i < 0 || j < i {
		t.Errorf("no generator line before the checks:\n%s", out)
	}
}
