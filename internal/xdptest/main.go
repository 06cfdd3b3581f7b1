package xdptest

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Main is the TestMain of every package whose tests start goroutines or
// touch the kernel: it runs the tests, then atExit (removing what the
// package's tests built once for all of them), and fails the run when a
// test left something behind: a file descriptor, a goroutine, a mapping of
// a socket (an AF_XDP ring or UMEM), a namespace or veth of this process's
// labs, or a child process. It catches SIGINT, SIGTERM and SIGHUP first
// (CatchSignals), so that an interrupted run removes its labs.
func Main(m *testing.M, atExit ...func()) {
	CatchSignals()
	// The runtime opens its poller's descriptors on the first pollable file:
	// open them now, so that a test that opens the first pipe or socket does
	// not count them as its own.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	fds, goroutines := openFDs(), runtime.NumGoroutine()
	code := m.Run()
	for _, fn := range atExit {
		fn()
	}
	// The fuzzing engine keeps goroutines of its own (a signal handler).
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	if code == 0 && !fuzzing {
		for _, l := range leftovers(fds, goroutines) {
			fmt.Fprintln(os.Stderr, "outlived the tests:", l)
			code = 1
		}
	}
	os.Exit(code)
}

// leftovers lists what exists now and did not before the tests ran. A
// goroutine's end and a deferred close signal nothing the process can wait
// on, so it looks again, for a second at most, before it answers.
func leftovers(fds map[string]string, goroutines int) []string {
	var out []string
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		out = out[:0]
		if now := openFDs(); len(now) > len(fds) {
			out = append(out, fmt.Sprintf("%d file descriptors: %s", len(now)-len(fds), strings.Join(newFDs(fds, now), ", ")))
		}
		if n := runtime.NumGoroutine(); n > goroutines {
			out = append(out, fmt.Sprintf("%d goroutines", n-goroutines))
		}
		if n := SocketMappings(); n > 0 {
			out = append(out, fmt.Sprintf("%d mappings of sockets (AF_XDP rings)", n))
		}
		out = append(out, OwnLabs()...)
		if children := childProcesses(); len(children) > 0 {
			out = append(out, "child processes "+strings.Join(children, ", "))
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return out
		}
	}
}

// openFDs maps the process's file descriptors to what they open.
func openFDs() map[string]string {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	fds := make(map[string]string, len(entries))
	for _, e := range entries {
		fds[e.Name()], _ = os.Readlink("/proc/self/fd/" + e.Name())
	}
	return fds
}

// newFDs names the descriptors of now that before lacks, or that open
// something else now: "7 -> anon_inode:bpf-prog".
func newFDs(before, now map[string]string) []string {
	var out []string
	for fd, target := range now {
		if t, ok := before[fd]; target != "" && (!ok || t != target) {
			out = append(out, fd+" -> "+target)
		}
	}
	slices.Sort(out)
	return out
}

// SocketMappings counts the process's mappings of sockets (AF_XDP rings and
// UMEMs) in /proc/self/maps.
func SocketMappings() int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "socket:[")
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
