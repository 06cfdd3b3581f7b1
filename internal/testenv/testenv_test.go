package testenv

import (
	"os"
	"testing"
)

// fakeTB records what RequireRoot does instead of ending the test.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }

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
