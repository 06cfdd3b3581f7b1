//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunIfaceRebalance runs xdphash run --steer reta --rebalance on the
// host end of a veth pair of its own while the peer sends the corpus's base
// frames (few flows over 4 workers: uneven, so tables change), holding
// moved buckets' packets: every frame sent is received and accounted for
// while the tables change.
func TestRunIfaceRebalance(t *testing.T) {
	lab, fd := labSender(t, 2)
	out := filepath.Join(t.TempDir(), "run.json")
	done := startIfaceRun(t, "run", "--iface", lab.Host, "--duration", "3s",
		"--workers", "4", "--hash-key", kunitKey, "--rx-mode", "poll", "--steer", "reta",
		"--rebalance=2ms", "--rebalance-dwell", "0", "--rebalance-threshold", "1", "--rebalance-hold", "--out", out)
	sent := 0
	for start := time.Now(); time.Since(start) < time.Second && sent < 200000; {
		for _, f := range corpus.Bases() {
			if err := unix.Sendto(fd, f.Data, 0, &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}); err == nil {
				sent++
			}
		}
	}
	st := finishIfaceRun(t, done, out, sent)
	sr := st.Steering
	if sr == nil || sr.Rebalance == nil || sr.Rebalance.Tables == 0 {
		t.Fatalf("no table changed while %d frames went through: %+v", sent, sr)
	}
	if h := sr.Rebalance.Hold; h == nil || h.Buckets != sr.Rebalance.Moves {
		t.Errorf("hold %+v for %d buckets moved: want one hold per move", h, sr.Rebalance.Moves)
	}
	// A bucket moved again before its old worker drained it lets its held
	// packets go (and makes the count inexact); otherwise nothing reorders.
	if h := sr.Rebalance.Hold; h != nil && h.Overflow == 0 && sr.Reorder.Exact && sr.Reorder.Reordered != 0 {
		t.Errorf("reordered %d packets with every moved bucket held: %+v", sr.Reorder.Reordered, sr.Reorder)
	}
	var bucketed uint64
	for _, row := range sr.BucketPackets {
		for _, n := range row {
			bucketed += n
		}
	}
	if bucketed != st.Accounting.Received {
		t.Errorf("buckets counted %d packets, received %d", bucketed, st.Accounting.Received)
	}
	t.Logf("sent %d frames; %d tables, %d buckets moved; hold %+v; reorder %+v", sent, sr.Rebalance.Tables, sr.Rebalance.Moves, *sr.Rebalance.Hold, sr.Reorder)
	if xdptest.XDPAttached(t, lab.Host) != "" {
		t.Errorf("an XDP program is still attached to %s", lab.Host)
	}
}

// labSender makes a lab veth pair with queues receive queues, removed when
// the test ends, and an AF_PACKET socket bound to the peer end in the lab's
// namespace, which sends and never receives.
func labSender(t *testing.T, queues int) (*vethlab.Lab, int) {
	t.Helper()
	lab := xdptest.NewLab(t, vethlab.Config{Queues: queues})
	fd := -1
	err := lab.InPeer(func() error {
		// Protocol 0: the socket sends and never receives.
		s, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open AF_PACKET socket: %w", err)
		}
		fd = s
		return unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex})
	})
	if fd >= 0 {
		t.Cleanup(func() { unix.Close(fd) })
	}
	if err != nil {
		t.Fatal(err)
	}
	return lab, fd
}

// ifaceRunResult is how an xdphash run on a lab veth ended.
type ifaceRunResult struct {
	stdout, stderr string
	code           int
}

// startIfaceRun starts xdphash with args on its own goroutine and returns
// once it logs its "run" line (with --verbose), which it does after every
// socket is in the XDP program's map: frames sent after it are all the
// run's. The channel gives the result when the run ends.
func startIfaceRun(t *testing.T, args ...string) <-chan ifaceRunResult {
	t.Helper()
	done := make(chan ifaceRunResult, 1)
	stderr := &xdptest.Output{}
	running := stderr.Seen("msg=run ")
	go func() {
		root := newRootCmd()
		var stdout strings.Builder
		root.SetOut(&stdout)
		root.SetErr(stderr)
		code := run(root, append([]string{"--verbose"}, args...))
		done <- ifaceRunResult{stdout.String(), stderr.String(), code}
	}()
	select {
	case <-running:
	case r := <-done:
		t.Fatalf("xdphash ended (exit %d) before it received\nstderr: %s", r.code, r.stderr)
	}
	return done
}

// finishIfaceRun waits for the run started by startIfaceRun and reads its
// statistics from out: it must have succeeded and accounted for every one
// of the sent frames, received or dropped by the kernel before the loops.
func finishIfaceRun(t *testing.T, done <-chan ifaceRunResult, out string, sent int) *runstats.RunStats {
	t.Helper()
	r := <-done
	if r.code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	var kernelDrops uint64
	for _, n := range st.Accounting.KernelDrops {
		kernelDrops += n
	}
	if st.Accounting.Received+kernelDrops != uint64(sent) || !st.Accounting.Balanced {
		t.Errorf("sent %d, received %d, kernel drops %d: %+v", sent, st.Accounting.Received, kernelDrops, st.Accounting)
	}
	return st
}
