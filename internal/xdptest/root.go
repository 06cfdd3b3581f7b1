package xdptest

import (
	"fmt"
	"io"
	"os"
	"testing"
)

// Unavailable ends a test that cannot run on this machine (no root, a tool
// missing): it skips it with the reason, but under CI (CI=true) it fails it,
// since CI provides what the tests need and a silently skipped test there
// would hide a regression.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	reason := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s, and CI=true forbids skipping the test", reason)
		return
	}
	tb.Skip(reason)
}

// RequireRoot ends the test (Unavailable) unless the process runs as root
// (effective uid 0), which tests that load BPF programs, open AF_XDP sockets
// or make labs need.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	if euid := os.Geteuid(); euid != 0 {
		Unavailable(tb, "test needs root to load BPF programs and make network namespaces (effective uid is %d); run it as root", euid)
	}
}

// Open opens with open what needs root (a kernel hash oracle, for one) after
// RequireRoot, fails the test if that fails, and closes it when the test
// ends, failing the test if closing does.
func Open[T io.Closer](tb testing.TB, open func() (T, error)) T {
	tb.Helper()
	RequireRoot(tb)
	v, err := open()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := v.Close(); err != nil {
			tb.Error(err)
		}
	})
	return v
}
