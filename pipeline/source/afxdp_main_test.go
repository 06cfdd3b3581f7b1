//go:build linux

package source

import (
	"flag"
	"fmt"
	"os"
	"testing"

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
	base := vethlab.TakeBaseline()
	code := m.Run()
	// The fuzzing engine keeps goroutines of its own (a signal handler).
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	if code == 0 && !fuzzing {
		for _, l := range base.Leftovers() {
			fmt.Fprintln(os.Stderr, "outlived the tests:", l)
			code = 1
		}
	}
	os.Exit(code)
}

// socketMappings counts the mappings of sockets in /proc/self/maps.
func socketMappings() int { return vethlab.SocketMappings() }
