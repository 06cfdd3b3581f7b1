package main

import (
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
