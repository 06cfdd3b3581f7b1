//go:build linux

package main

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunIface runs xdphash run on the host end of a veth pair of its own
// while the peer end, in the lab's namespace, sends the corpus's base frames:
// every frame sent is received and accounted for, and the XDP program is
// gone when the run ends.
func TestRunIface(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	out := filepath.Join(t.TempDir(), "run.json")
	// The run logs its "run" line (with --verbose) once every socket is in
	// the program's map: frames sent after it are all the run's.
	var stderr xdptest.Output
	running := stderr.Seen("msg=run ")
	done := make(chan int, 1)
	go func() {
		root := newRootCmd()
		root.SetOut(io.Discard)
		root.SetErr(&stderr)
		done <- run(root, []string{"run", "--verbose", "--iface", lab.Host, "--duration", "2s",
			"--workers", "2", "--hash-key", kunitKey, "--rx-mode", "poll", "--out", out})
	}()
	select {
	case <-running:
	case code := <-done:
		t.Fatalf("xdphash run ended (exit %d) before it received\nstderr: %s", code, &stderr)
	case <-time.After(10 * time.Second):
		t.Fatalf("xdphash run not receiving after 10 s\nstderr: %s", &stderr)
	}
	if xdptest.XDPAttached(t, lab.Host) == "" {
		t.Errorf("xdphash run is receiving, but no XDP program is attached to %s", lab.Host)
	}
	var frames [][]byte
	for range 10 {
		for _, f := range corpus.Bases() {
			frames = append(frames, f.Data)
		}
	}
	xdptest.Send(t, lab, frames)
	sent := len(frames)
	code := <-done
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, &stderr)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	var kernelDrops uint64
	for _, n := range st.Accounting.KernelDrops {
		kernelDrops += n
	}
	if st.Accounting.Received+kernelDrops != uint64(sent) || !st.Accounting.Balanced {
		t.Errorf("sent %d, received %d, kernel drops %d: %+v", sent, st.Accounting.Received, kernelDrops, st.Accounting)
	}
	if len(st.Queues) != 2 || st.Config.Source != "afxdp:"+lab.Host || st.Config.RxMode != "poll" {
		t.Errorf("queues %d, config %+v", len(st.Queues), st.Config)
	}
	if xdptest.XDPAttached(t, lab.Host) != "" {
		t.Errorf("an XDP program is still attached to %s", lab.Host)
	}
}
