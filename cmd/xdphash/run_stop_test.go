package main

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunStopOnEOF drives a run that has no end of its own (a synthetic
// source without --count or --duration) with --stop-on-eof: once it runs,
// its standard input is closed, and the run must end as asked: exit 0, not
// an interrupt's 130, with its report written and balanced.
func TestRunStopOnEOF(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	in, feed := io.Pipe()
	var stderr xdptest.Output
	root := newRootCmd()
	root.SetIn(in)
	root.SetErr(&stderr)
	root.SetOut(io.Discard)
	done := make(chan int, 1)
	go func() {
		done <- run(root, []string{"run", "--synthetic", "datacenter", "--workers", "2",
			"--metrics-addr", "127.0.0.1:0", "--stop-on-eof", "--out", out})
	}()
	// The metrics are served just before the engine starts.
	select {
	case <-stderr.Seen("serving metrics"):
	case code := <-done:
		t.Fatalf("the run ended with %d before it ran:\n%s", code, stderr.String())
	}
	if _, err := feed.Write([]byte("anything\n")); err != nil {
		t.Fatal(err)
	}
	feed.Close()
	bound := time.NewTimer(time.Minute)
	defer bound.Stop()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("the run ended with exit status %d at the end of its input, want %d:\n%s", code, exitOK, stderr.String())
		}
	case <-bound.C:
		t.Fatal("the run still runs a minute after its input ended")
	}
	// How many frames the run took before its input ended depends on the
	// machine's load (none, at times, under CI): the statistics must be
	// written and balance whatever it took.
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	if !st.Accounting.Balanced || st.Config.Source != "synthetic:datacenter" {
		t.Errorf("the run's statistics: source %q, accounting %+v: want synthetic:datacenter, balanced", st.Config.Source, st.Accounting)
	}
}
