package main

import (
	"strings"
	"testing"
)

// TestSoakSearchUsage checks the search flags refused before anything is
// set up.
func TestSoakSearchUsage(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"trial without search", []string{"soak", "--trial", "1s"}, "--trial is a --search flag"},
		{"floor without search", []string{"soak", "--search-floor", "5k"}, "--search-floor is a --search flag"},
		{"unknown goal", []string{"soak", "--search", "fast"}, `--search: search goal "fast": want ndr, pdr or pdr=RATIO`},
		{"loss ratio 100%", []string{"soak", "--search", "pdr=100%"}, "want more than 0 and less than 1"},
		{"width 1", []string{"soak", "--search", "ndr", "--search-width", "1"}, "--search-width 1: want more than 0 and less than 1"},
		{"short trial", []string{"soak", "--search", "ndr", "--trial", "100ms"}, "--trial 100ms: want 500ms to 10m0s"},
		{"trial over budget", []string{"soak", "--search", "ndr", "--trial", "2m", "--duration", "1m"}, "--trial 2m0s is longer than the search's budget --duration 1m0s"},
		{"bad service rate", []string{"soak", "--service-rate", "fast"}, "--service-rate:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runXdphash(t, nil, tt.args...)
			if code != exitFailure || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitFailure, tt.wantErr)
			}
		})
	}
}
