package e2e

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
)

// TestMain fails the run when a test leaves something behind: a file
// descriptor, a goroutine, a mapping of a socket (an AF_XDP ring), a lab's
// namespace or veth, or a child process; and removes the xdphash binary the
// tests built.
func TestMain(m *testing.M) {
	CatchSignals() // its goroutine lives as long as the process
	fds, goroutines := openFDs(), runtime.NumGoroutine()
	code := m.Run()
	removeXdphash()
	if code == 0 {
		var leaks []string
		// Goroutines and deferred closes take a moment to end.
		for range 50 {
			if leaks = leftovers(fds, goroutines); len(leaks) == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, l := range leaks {
			fmt.Fprintln(os.Stderr, "outlived the tests:", l)
			code = 1
		}
	}
	os.Exit(code)
}

// leftovers lists what exists now and did not before the tests.
func leftovers(fds, goroutines int) []string {
	var out []string
	if n := openFDs(); n > fds {
		out = append(out, fmt.Sprintf("%d file descriptors", n-fds))
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		out = append(out, fmt.Sprintf("%d goroutines", n-goroutines))
	}
	if b, err := os.ReadFile("/proc/self/maps"); err == nil {
		if n := strings.Count(string(b), "socket:["); n > 0 {
			out = append(out, fmt.Sprintf("%d mappings of sockets (AF_XDP rings)", n))
		}
	}
	pid := fmt.Sprint(os.Getpid())
	for _, l := range vethlab.Leftovers() {
		if strings.Contains(l, vethlab.Prefix+pid) {
			out = append(out, l)
		}
	}
	if children := childProcesses(); len(children) > 0 {
		out = append(out, "child processes "+strings.Join(children, ", "))
	}
	return out
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}

// childProcesses lists the live children of this process, "PID (COMM)".
// /proc/PID/task/TID/children lists only one thread's children, and any
// thread may have started one: the process table is searched instead.
func childProcesses() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// PID (COMM) STATE PPID ...: COMM may hold spaces and parentheses.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscan(s[end+1:], &state, &ppid); err == nil && ppid == self {
			out = append(out, fmt.Sprintf("%s (%s)", e.Name(), s[open+1:end]))
		}
	}
	return out
}
