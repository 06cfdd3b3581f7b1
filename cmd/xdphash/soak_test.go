package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSoakUsage checks the flags that are refused before anything is set up.
func TestSoakUsage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"zero duration", []string{"soak", "--duration", "0s"}, "--duration 0s: want a positive duration"},
		{"unknown mode", []string{"soak", "--mode", "kernel"}, "kernel"},
		{"bad rate", []string{"soak", "--rate", "fast"}, "want frames per second"},
		{"arguments", []string{"soak", "extra"}, "extra"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runXdphash(t, nil, tt.args...)
			if code != exitFailure || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitFailure, tt.wantErr)
			}
		})
	}
}

// TestSoakOutChecked: an output directory that cannot be made fails the soak
// at once, before the lab or the generator, and leaves nothing.
func TestSoakOutChecked(t *testing.T) {
	dir := "/proc/xdphash-no-such-dir"
	_, stderr, code := runXdphash(t, nil, "soak", "--duration", "1h", "--out", dir)
	if code != exitFailure || !strings.Contains(stderr, "check output directory "+dir) {
		t.Errorf("exit %d, stderr:\n%s\nwant the output directory's error", code, stderr)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s exists", dir)
	}
	out := filepath.Join(t.TempDir(), "made")
	undo, err := checkOutputDir(out)
	if err != nil {
		t.Fatal(err)
	}
	undo()
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an output directory checked and left empty is still there: %v", err)
	}
}
