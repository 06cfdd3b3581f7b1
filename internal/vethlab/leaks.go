package vethlab

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// Baseline is what the process held before its tests ran, for a TestMain that
// fails the run when a test leaves something behind.
type Baseline struct{ fds, goroutines int }

// TakeBaseline records the open file descriptors and goroutines now.
func TakeBaseline() Baseline {
	return Baseline{fds: OpenFDs(), goroutines: runtime.NumGoroutine()}
}

// Leftovers lists what exists now and did not at the baseline: file
// descriptors, goroutines, mappings of sockets (AF_XDP rings), this process's
// labs, and whatever extra reports. Goroutines and deferred closes take a moment
// to end, so it looks again for up to a second before it answers.
func (b Baseline) Leftovers(extra ...func() []string) []string {
	var out []string
	for range 50 {
		out = b.leftovers(extra)
		if len(out) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return out
}

func (b Baseline) leftovers(extra []func() []string) []string {
	var out []string
	if n := OpenFDs(); n > b.fds {
		out = append(out, fmt.Sprintf("%d file descriptors", n-b.fds))
	}
	if n := runtime.NumGoroutine(); n > b.goroutines {
		out = append(out, fmt.Sprintf("%d goroutines", n-b.goroutines))
	}
	if n := SocketMappings(); n > 0 {
		out = append(out, fmt.Sprintf("%d mappings of sockets (AF_XDP rings)", n))
	}
	mine := Prefix + fmt.Sprint(os.Getpid())
	for _, l := range Leftovers() {
		if strings.Contains(l, mine) {
			out = append(out, l)
		}
	}
	for _, f := range extra {
		out = append(out, f()...)
	}
	return out
}

// OpenFDs is the number of file descriptors the process holds.
func OpenFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
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
