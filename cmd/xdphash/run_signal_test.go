package main

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// signalChildEnv marks the child of TestRunSIGINT; its value is the
// directory the child writes its run.json to.
const signalChildEnv = "XDPHASH_RUN_SIGNAL_CHILD"

// readyWriter passes nothing on and prints "ready" on out once the run's log
// says marker (default: the metrics are served: the run has its signal
// handler by then and starts the engine next).
type readyWriter struct {
	out    *os.File
	marker string
	buf    []byte
	said   bool
}

func (w *readyWriter) Write(p []byte) (int, error) {
	if !w.said {
		w.buf = append(w.buf, p...)
		if bytes.Contains(w.buf, []byte(cmp.Or(w.marker, "serving metrics"))) {
			w.said = true
			w.out.WriteString("ready\n")
		}
	}
	return len(p), nil
}

// runSignalChild is TestRunSIGINT's child: the run it interrupts, with its
// exit status.
func runSignalChild(dir string) int {
	root := newRootCmd()
	root.SetErr(&readyWriter{out: os.Stdout})
	return run(root, []string{
		"run", "--synthetic", "hotset", "--steer", "reta", "--rebalance=1ms", "--rebalance-hold",
		"--virtual-clock", "--virtual-queues", "2", "--hash-key", "000102030405060708090a0b0c0d0e0f",
		"--metrics-addr", "127.0.0.1:0", "--out", filepath.Join(dir, "run.json"),
	})
}

// TestRunSIGINT sends SIGINT to a run, in a child process, of the
// rebalancing hold on the virtual clock over two receive loops (a run that
// once deadlocked and ignored signals): it must end promptly with exit
// status 130 and write the partial run's report.
func TestRunSIGINT(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunSIGINT$")
	xdptest.StartChild(t, cmd, signalChildEnv+"="+dir, func(line string) bool { return line == "ready" })
	interruptChild(t, cmd, "the run")
	st := xdptest.ReadJSON[runstats.RunStats](t, filepath.Join(dir, "run.json"))
	if !st.Accounting.Balanced {
		t.Errorf("the partial run's accounting %+v: want balanced", st.Accounting)
	}
	if !strings.HasPrefix(st.Config.Source, "synthetic:") {
		t.Errorf("source %q, want the synthetic run's", st.Config.Source)
	}
}

// pktgenSignalChildEnv marks the child of TestPktgenWriteSIGINT; its value
// is the capture file the child writes.
const pktgenSignalChildEnv = "XDPHASH_PKTGEN_SIGNAL_CHILD"

// pktgenSignalChild is TestPktgenWriteSIGINT's child: a long pktgen --write
// that says "ready" once it writes frames, with its signal handler.
func pktgenSignalChild(file string) int {
	root := newRootCmd()
	root.SetErr(&readyWriter{out: os.Stdout, marker: "writing frames"})
	return run(root, []string{"-v", "pktgen", "--profile", "datacenter", "--count", "10000000", "--write", file})
}

// TestPktgenWriteSIGINT interrupts pktgen --write: it ends with exit status
// 130, the file is a valid capture of the frames it says it wrote, and no
// temporary file is left.
func TestPktgenWriteSIGINT(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "long.pcapng")
	cmd := exec.Command(os.Args[0], "-test.run=^TestPktgenWriteSIGINT$")
	xdptest.StartChild(t, cmd, pktgenSignalChildEnv+"="+file, func(line string) bool { return line == "ready" })
	interruptChild(t, cmd, "pktgen --write")
	r := openCaptureFile(t, file)
	var (
		frames int
		err    error
	)
	for {
		if _, _, err = r.ZeroCopyReadPacketData(); err != nil {
			break
		}
		frames++
	}
	// The signal may come before the first frame: a capture of none is
	// valid too.
	if !errors.Is(err, io.EOF) || frames >= 10000000 {
		t.Errorf("the interrupted capture: %d frames, then %v; want fewer than all, then a clean end", frames, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// interruptChild sends SIGINT to the child cmd, which what names in
// messages, and fails unless it exits with status 130 within a minute.
func interruptChild(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	bound := time.NewTimer(time.Minute)
	defer bound.Stop()
	select {
	case err := <-exited:
		if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != exitInterrupted {
			t.Fatalf("%s ended with %v after SIGINT; want exit status %d", what, err, exitInterrupted)
		}
	case <-bound.C:
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%s still runs a minute after SIGINT", what)
	}
}
