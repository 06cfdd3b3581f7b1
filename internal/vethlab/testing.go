package vethlab

import (
	"testing"

	"github.com/xdphash/xdphash/internal/testenv"
)

// ForTest creates a lab for a test, which needs root (testenv.RequireRoot), and
// removes it when the test ends; a failure to create or remove it fails the
// test.
func ForTest(tb testing.TB, cfg Config) *Lab {
	tb.Helper()
	testenv.RequireRoot(tb)
	lab, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := lab.Close(); err != nil {
			tb.Error(err)
		}
	})
	return lab
}
