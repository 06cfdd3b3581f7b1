package e2e

import (
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunKilled starts `xdphash run` on a lab's Host end, kills it with
// SIGKILL once it receives, and checks that the kernel took everything
// down with it: no XDP program on Host, and every queue free for a new
// AF_XDP source.
func TestRunKilled(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	c := startXdphash(t, "run", "--verbose", "--iface", lab.Host, "--queues", "all", "--workers", "2", "--hash-key", testKey.String())
	c.waitRunning(t, lab)
	if got := xdptest.XDPAttached(t, lab.Host); got != "native" {
		t.Errorf("with xdphash running, XDP program on %s: %q, want native", lab.Host, got)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t, 10*time.Second); code != -1 {
		t.Fatalf("xdphash exited with %d before SIGKILL\nstderr:\n%s", code, &c.stderr)
	}
	// The process is reaped once the kernel has released its files, the
	// BPF link and the sockets among them: nothing should be left at once.
	if got := xdptest.XDPAttached(t, lab.Host); got != "" {
		t.Errorf("XDP program on %s after xdphash was killed: %q, want none", lab.Host, got)
	}
	src, err := source.OpenAFXDP(source.AFXDPConfig{Iface: lab.Host})
	if err != nil {
		t.Fatalf("the killed run left %s unusable: %v", lab.Host, err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRunInterrupted runs `xdphash run` on a lab's Host end while the Peer
// end sends every corpus shape, stops it with SIGINT, and checks that it
// exits 130 with an --out file whose accounting adds up: every frame sent was
// received (or dropped by the kernel, and counted), each was processed, and
// each worker got exactly the frames whose hash, with the run's key, selects
// it (--hash kernel: auto, the default on an interface, would steer by the
// device's hash, which on veth is the kernel's with its own key).
func TestRunInterrupted(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	frames, err := Frames(lab.HostMAC, rounds)
	if err != nil {
		t.Fatal(err)
	}
	want := expect(t, frames, 2)
	wantPerWorker := make([]uint64, 2)
	for _, e := range want {
		wantPerWorker[e.worker]++
	}
	out := filepath.Join(t.TempDir(), "run.json")
	c := startXdphash(t, "run", "--verbose", "--iface", lab.Host, "--queues", "all", "--workers", "2",
		"--hash", "kernel", "--hash-key", testKey.String(), "--rx-mode", "poll", "--out", out, "--metrics-addr", "127.0.0.1:0")
	c.waitRunning(t, lab)
	before := xdptest.HostRxPackets(t, lab)
	xdptest.Send(t, lab, frames)
	// Once Host has counted every frame, its XDP program has put each on an
	// AF_XDP ring (or counted it as dropped): the run, stopped then, takes
	// what its rings hold before it ends, however far behind it is. The
	// counter signals nothing: it is polled, for 10 s at most.
	for deadline := time.Now().Add(10 * time.Second); xdptest.HostRxPackets(t, lab)-before < uint64(len(frames)); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%s counted %d of %d frames in 10 s", lab.Host, xdptest.HostRxPackets(t, lab)-before, len(frames))
		}
	}
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// 130: the run was interrupted (the README's exit statuses), after
	// writing what it measured.
	if code := c.wait(t, 10*time.Second); code != 130 {
		t.Fatalf("xdphash exited with %d after SIGINT, want 130\nstderr:\n%s", code, &c.stderr)
	}
	if got := xdptest.XDPAttached(t, lab.Host); got != "" {
		t.Errorf("XDP program on %s after xdphash exited: %q, want none", lab.Host, got)
	}
	if !strings.Contains(c.stdout.String(), "(balanced)") {
		t.Errorf("the summary does not say the accounting balanced:\n%s", &c.stdout)
	}

	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	acc := st.Accounting
	var dropped uint64
	for _, n := range acc.Dropped {
		dropped += n
	}
	kdrops := sumValues(acc.KernelDrops)
	if !acc.Balanced || acc.Received != acc.Processed+acc.Unserved+dropped || acc.Received+kdrops != uint64(len(frames)) {
		t.Errorf("sent %d frames; accounting %+v", len(frames), acc)
	}
	var queueFrames uint64
	steered := make([]uint64, len(st.Workers))
	for _, q := range st.Queues {
		queueFrames += q.Stats.Frames
		for w, n := range q.Steered {
			steered[w] += n
		}
	}
	if queueFrames != acc.Received || len(st.Queues) != 2 {
		t.Errorf("%d queues counted %d frames, %d received", len(st.Queues), queueFrames, acc.Received)
	}
	for w, wr := range st.Workers {
		if wr.Packets != steered[w] || (acc.Received == uint64(len(frames)) && wr.Packets != wantPerWorker[w]) {
			t.Errorf("worker %d took %d packets, was steered %d; with key %s the frames steer %d to it", w, wr.Packets, steered[w], testKey, wantPerWorker[w])
		}
	}
	cfg := st.Config
	if cfg.Source != "afxdp:"+lab.Host || cfg.RxMode != "poll" || cfg.HashKey != testKey.String() || cfg.Workers != 2 {
		t.Errorf("config %+v", cfg)
	}
}

// TestRunIfaceErrors runs `xdphash run` on an interface and on a queue that
// do not exist: each must fail with exit status 2 and one line on stderr
// that names what is missing and says what to do, and leave nothing
// attached.
func TestRunIfaceErrors(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	missing := vethlab.Prefix + "none0"
	tests := []struct {
		name string
		args []string
		says []string
	}{
		{"missing interface", []string{"--iface", missing}, []string{missing, "not found", "see `ip link`"}},
		{"missing queue", []string{"--iface", lab.Host, "--queues", "0,5"}, []string{"queue 5 does not exist on " + lab.Host, "it has 2 RX queues, 0-1"}},
		{"missing queue of all", []string{"--iface", lab.Host, "--queues", "2-3"}, []string{"queue 2 does not exist on " + lab.Host, "0-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A key, so that the command logs nothing of its own.
			c := startXdphash(t, append([]string{"run", "--hash-key", testKey.String()}, tt.args...)...)
			if code := c.wait(t, 10*time.Second); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			stderr := c.stderr.String()
			if lines := strings.Count(stderr, "\n"); lines != 1 || !strings.HasPrefix(stderr, "xdphash: ") {
				t.Errorf("stderr has %d lines, want one starting with \"xdphash: \":\n%s", lines, stderr)
			}
			for _, s := range tt.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr %q does not say %q", stderr, s)
				}
			}
			if c.stdout.Len() > 0 {
				t.Errorf("stdout: %s", &c.stdout)
			}
			if got := xdptest.XDPAttached(t, lab.Host); got != "" {
				t.Errorf("the failed run left an XDP program on %s: %q", lab.Host, got)
			}
		})
	}
}
