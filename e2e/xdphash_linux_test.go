package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// xdphash is the command binary the tests run, built once per process.
var xdphash struct {
	once      sync.Once
	dir, path string
	err       error
}

// xdphashBinary builds cmd/xdphash into a temporary directory, once per test
// process, and returns its path. A test binary built with -race builds it
// with -race too: the command then checks the engine's goroutines for data
// races on live traffic, and shares the test build's compiled packages.
func xdphashBinary(tb testing.TB) string {
	tb.Helper()
	xdphash.once.Do(func() {
		if xdphash.dir, xdphash.err = os.MkdirTemp("", "xdphash-e2e-"); xdphash.err != nil {
			return
		}
		xdphash.path = filepath.Join(xdphash.dir, "xdphash")
		args := []string{"build", "-o", xdphash.path}
		if raceEnabled() {
			args = append(args, "-race")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// go test puts its own go command first in PATH.
		out, err := exec.CommandContext(ctx, "go", append(args, "github.com/xdphash/xdphash/cmd/xdphash")...).CombinedOutput()
		if err != nil {
			xdphash.err = fmt.Errorf("build xdphash: %w\n%s", err, out)
		}
	})
	if xdphash.err != nil {
		tb.Fatal(xdphash.err)
	}
	return xdphash.path
}

// removeXdphash removes what xdphashBinary built.
func removeXdphash() {
	if xdphash.dir != "" {
		os.RemoveAll(xdphash.dir)
	}
}

// raceEnabled reports whether this binary was built with the race detector.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// child is a running xdphash command.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr xdptest.Output
	done           chan struct{}
	err            error // Wait's result, once done is closed
}

// startXdphash starts the xdphash binary with args; see startChild.
func startXdphash(tb testing.TB, args ...string) *child {
	tb.Helper()
	return startChild(tb, exec.Command(xdphashBinary(tb), args...))
}

// startChild starts cmd, with its output collected in c.stdout and c.stderr
// unless cmd says where it goes. The child gets SIGKILL if this process dies
// first (PR_SET_PDEATHSIG), or gets a signal that CatchSignals handles, and
// is killed and reaped when the test ends.
func startChild(tb testing.TB, cmd *exec.Cmd) *child {
	tb.Helper()
	c := &child{cmd: cmd, done: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = &c.stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &c.stderr
	}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		// The death signal comes when the thread that forked the child
		// ends, not the process: this thread stays until the child does.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := c.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	if err := <-started; err != nil {
		tb.Fatalf("start %s: %v", strings.Join(cmd.Args, " "), err)
	}
	forget := xdptest.UndoOnSignal(func() { c.cmd.Process.Kill() })
	tb.Cleanup(func() {
		forget()
		c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// wait waits for the child to end, for timeout at most, and returns its exit
// status (-1 when a signal ended it).
func (c *child) wait(tb testing.TB, timeout time.Duration) int {
	tb.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		c.cmd.Process.Kill()
		<-c.done
		tb.Fatalf("xdphash still running after %s; killed\nstdout:\n%s\nstderr:\n%s", timeout, &c.stdout, &c.stderr)
	}
	return c.cmd.ProcessState.ExitCode()
}

// waitRunning waits until the child receives on every queue of lab's Host:
// until it logs its "run" debug line, which it writes once every socket is
// in the program's map (the child must run with --verbose). A socket mapped
// but not yet in the map is not enough: the program passes that queue's
// frames to the kernel's stack, where no count of the child's sees them.
// It fails the test if the child ends first or takes more than 10 s, and
// checks what the line promises: an XDP program attached to Host, and the
// rings of one AF_XDP socket per queue mapped.
func (c *child) waitRunning(tb testing.TB, lab *vethlab.Lab) {
	tb.Helper()
	select {
	case <-c.stderr.Seen("msg=run "):
	case <-c.done:
		tb.Fatalf("xdphash ended before it ran: %v\nstderr:\n%s", c.err, &c.stderr)
	case <-time.After(10 * time.Second):
		tb.Fatalf("xdphash not receiving on %s after 10 s: no run line (with --verbose?)\nstderr:\n%s", lab.Host, &c.stderr)
	}
	if x, n := xdptest.XDPAttached(tb, lab.Host), socketsMapped(c.cmd.Process.Pid); x == "" || n < lab.Queues {
		tb.Fatalf("xdphash logged its run line with XDP %q on %s and %d sockets mapped, want %d", x, lab.Host, n, lab.Queues)
	}
}

// socketsMapped is the number of sockets whose rings process pid has mapped:
// its bound AF_XDP sockets.
func socketsMapped(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		// 7f83956fb000-7f83956fc000 rw-s 100000000 00:09 51675   socket:[51675]
		if f := strings.Fields(line); len(f) >= 6 && strings.HasPrefix(f[5], "socket:[") {
			inodes[f[5]] = true
		}
	}
	return len(inodes)
}
