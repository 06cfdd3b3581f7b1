package xdptest

import (
	"os"
	"testing"
)

// fakeTB records whether a helper skipped or failed the test instead of
// ending it.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skip(...any)           { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Fatal(...any)          { f.failed = true }

func TestRequireRoot(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			var tb fakeTB
			RequireRoot(&tb)
			root := os.Geteuid() == 0
			wantSkip := !root && ci != "true"
			wantFail := !root && ci == "true"
			if tb.skipped != wantSkip || tb.failed != wantFail {
				t.Errorf("root=%v CI=%q: skipped=%v failed=%v, want skipped=%v failed=%v",
					root, ci, tb.skipped, tb.failed, wantSkip, wantFail)
			}
		})
	}
}

// TestUnavailable checks the rule itself, which RequireRoot as root never
// reaches: skip, but fail under CI=true.
func TestUnavailable(t *testing.T) {
	for _, ci := range []string{"", "false", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			var tb fakeTB
			Unavailable(&tb, "no %s here", "tool")
			if want := ci == "true"; tb.failed != want || tb.skipped == want {
				t.Errorf("CI=%q: skipped=%v failed=%v, want failed=%v and not both", ci, tb.skipped, tb.failed, want)
			}
		})
	}
}
