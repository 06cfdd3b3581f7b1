package xdptest

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/xdphash/xdphash/internal/kernel/feature"
)

// TestSkipIfNotSupported checks the rule against fake running kernels: skip
// only a feature the kernel is too old for, and only outside CI; fail on a
// kernel that should have it and on every other error.
func TestSkipIfNotSupported(t *testing.T) {
	liveFrames := &feature.UnsupportedFeatureError{Name: "XDP live frames", MinimumVersion: feature.Version{5, 18, 0}}
	wrapped := fmt.Errorf("new XDP generator: %w", liveFrames)
	tests := []struct {
		name       string
		err        error
		running    feature.Version
		runningErr error
		ci         string
		skip, fail bool
	}{
		{"nil", nil, feature.Version{5, 4, 0}, nil, "", false, false},
		{"older kernel", liveFrames, feature.Version{5, 17, 9}, nil, "", true, false},
		{"older kernel, wrapped", wrapped, feature.Version{5, 15, 0}, nil, "", true, false},
		{"older kernel under CI", liveFrames, feature.Version{5, 17, 0}, nil, "true", false, true},
		{"the first version", liveFrames, feature.Version{5, 18, 0}, nil, "", false, true},
		{"a newer kernel", wrapped, feature.Version{6, 18, 44}, nil, "", false, true},
		{"unknown kernel version", liveFrames, feature.Version{}, errors.New("uname: no"), "", false, true},
		{"no version named", &feature.UnsupportedFeatureError{Name: "frobs"}, feature.Version{5, 4, 0}, nil, "", false, true},
		{"plain not supported", fmt.Errorf("attach: %w", feature.ErrNotSupported), feature.Version{5, 4, 0}, nil, "", false, true},
		{"permission refused", fmt.Errorf("detect XDP live frames: %w", syscall.EPERM), feature.Version{5, 4, 0}, nil, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			var tb fakeTB
			skipIfNotSupported(&tb, tt.err, tt.running, tt.runningErr)
			if tb.skipped != tt.skip || tb.failed != tt.fail {
				t.Errorf("skipped=%v failed=%v, want skipped=%v failed=%v", tb.skipped, tb.failed, tt.skip, tt.fail)
			}
		})
	}
}
