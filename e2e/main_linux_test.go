package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/vethlab"
)

// TestMain fails the run when a test leaves something behind: a file
// descriptor, a goroutine, a mapping of a socket (an AF_XDP ring), a lab's
// namespace or veth, or a child process; and removes the xdphash binary the
// tests built.
func TestMain(m *testing.M) {
	CatchSignals() // its goroutine lives as long as the process
	base := vethlab.TakeBaseline()
	code := m.Run()
	removeXdphash()
	if code == 0 {
		for _, l := range base.Leftovers(childProcessLeftovers) {
			fmt.Fprintln(os.Stderr, "outlived the tests:", l)
			code = 1
		}
	}
	os.Exit(code)
}

// childProcessLeftovers reports live children of this process.
func childProcessLeftovers() []string {
	if children := childProcesses(); len(children) > 0 {
		return []string{"child processes " + strings.Join(children, ", ")}
	}
	return nil
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
