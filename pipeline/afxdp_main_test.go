//go:build linux

package pipeline

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
// descriptor, a goroutine, a mapping of a socket (an AF_XDP ring), or a
// namespace or veth of a lab.
func TestMain(m *testing.M) {
	if os.Getenv(killChildEnv) != "" {
		// The child of TestAFXDPKilled runs without checks: it dies by SIGKILL.
		os.Exit(m.Run())
	}
	fds, goroutines := openFDs(), runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		var leaks []string
		// Goroutines and deferred closes take a moment to end.
		for try := 0; try < 50; try++ {
			leaks = leftovers(fds, goroutines)
			if len(leaks) == 0 {
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
	if n := socketMappings(); n > 0 {
		out = append(out, fmt.Sprintf("%d mappings of sockets (AF_XDP rings)", n))
	}
	for _, l := range vethlab.Leftovers() {
		if strings.Contains(l, fmt.Sprint(os.Getpid())) {
			out = append(out, l)
		}
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

// socketMappings counts the mappings of sockets in /proc/self/maps.
func socketMappings() int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "socket:[")
}
