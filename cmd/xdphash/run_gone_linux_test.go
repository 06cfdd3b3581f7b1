//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestRunIfaceDeleted deletes the interface under xdphash run (without
// --duration, in each receive mode): the run must say so, end, and exit
// non-zero, rather than report a balanced run or wait for a signal.
func TestRunIfaceDeleted(t *testing.T) {
	for _, mode := range []string{"poll", "spin"} {
		t.Run(mode, func(t *testing.T) {
			lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
			done := startIfaceRun(t, "run", "--iface", lab.Host, "--workers", "1", "--hash-key", kunitKey, "--rx-mode", mode)
			if err := lab.Close(); err != nil {
				t.Fatal(err)
			}
			bound := time.NewTimer(time.Minute)
			defer bound.Stop()
			select {
			case r := <-done:
				if r.code == exitOK || !strings.Contains(r.stderr, "interface is gone") {
					t.Errorf("exit %d, stderr:\n%s\nwant a failure that says the interface is gone", r.code, r.stderr)
				}
			case <-bound.C:
				t.Fatal("the run still runs a minute after its interface was deleted")
			}
		})
	}
}
