// Package testenv holds helpers that tests across xdphash share to decide
// whether the machine they run on can run them.
package testenv

import (
	"os"
	"testing"
)

// RequireRoot skips the test unless the process runs as root (effective uid
// 0), which tests that load BPF programs or open AF_XDP sockets need. Under
// CI (CI=true) a missing root is a failure, not a skip: CI runs as root, and
// a silently skipped kernel test would hide a regression.
func RequireRoot(tb testing.TB) {
	tb.Helper()
	euid := os.Geteuid()
	if euid == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("test needs root (effective uid is %d), and CI=true forbids skipping it", euid)
	}
	tb.Skipf("test needs root to load BPF programs (effective uid is %d); run it as root", euid)
}
