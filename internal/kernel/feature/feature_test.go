package feature

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
)

// countingProbe answers with each of answers in turn, the last one for ever,
// and counts its runs.
type countingProbe struct {
	answers []error
	runs    int
}

func (p *countingProbe) probe() error {
	p.runs++
	return p.answers[min(p.runs, len(p.answers))-1]
}

// TestResultCachesOnlyConclusive checks that an answer is kept only when the
// probe concluded: a permission refusal, or any other error, is probed again.
func TestResultCachesOnlyConclusive(t *testing.T) {
	eperm := fmt.Errorf("load probe program: %w", syscall.EPERM)
	tests := []struct {
		name    string
		answers []error
		calls   int
		runs    int   // probe runs after calls Results
		last    error // errors.Is of the last Result; nil: nil
	}{
		{"supported", []error{nil}, 3, 1, nil},
		{"not supported", []error{Missing("no such flag: %w", syscall.EINVAL)}, 3, 1, ErrNotSupported},
		{"EPERM, then supported", []error{eperm, nil}, 3, 2, nil},
		{"EPERM twice, then not supported", []error{eperm, eperm, ErrNotSupported}, 4, 3, ErrNotSupported},
		{"EACCES every time", []error{syscall.EACCES}, 3, 3, syscall.EACCES},
		{"a passing failure", []error{os.ErrDeadlineExceeded, nil}, 2, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &countingProbe{answers: tt.answers}
			ft := NewTest("frobs", "5.18", p.probe)
			var err error
			for range tt.calls {
				err = ft.Result()
			}
			if p.runs != tt.runs {
				t.Errorf("%d Results ran the probe %d times, want %d", tt.calls, p.runs, tt.runs)
			}
			switch {
			case tt.last == nil && err != nil:
				t.Errorf("last Result = %v, want nil", err)
			case tt.last != nil && !errors.Is(err, tt.last):
				t.Errorf("last Result = %v, want an error that is %v", err, tt.last)
			}
		})
	}
}

// TestResultInconclusive checks what an inconclusive probe's caller sees:
// the probe's error with the feature's name, not ErrNotSupported.
func TestResultInconclusive(t *testing.T) {
	ft := NewTest("XDP live frames", "5.18", func() error { return fmt.Errorf("load probe: %w", syscall.EPERM) })
	err := ft.Result()
	if errors.Is(err, ErrNotSupported) || !errors.Is(err, syscall.EPERM) {
		t.Errorf("Result = %v, want EPERM and not ErrNotSupported", err)
	}
	if want := "detect XDP live frames: load probe: operation not permitted"; err == nil || err.Error() != want {
		t.Errorf("Result = %q, want %q", err, want)
	}
}

// TestUnsupportedFeatureError checks the error of a missing feature: its
// identity, the version it carries and its text.
func TestUnsupportedFeatureError(t *testing.T) {
	ft := NewTest("XDP live frames", "5.18", func() error {
		return Missing("BPF_PROG_RUN refused BPF_F_TEST_XDP_LIVE_FRAMES: %w", syscall.EINVAL)
	})
	err := ft.Result()
	var ufe *UnsupportedFeatureError
	if !errors.As(err, &ufe) {
		t.Fatalf("Result = %v (%T), want an *UnsupportedFeatureError", err, err)
	}
	if ufe.Name != "XDP live frames" || ufe.MinimumVersion != (Version{5, 18, 0}) {
		t.Errorf("Name %q, MinimumVersion %v, want XDP live frames, 5.18", ufe.Name, ufe.MinimumVersion)
	}
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("%v: want ErrNotSupported and the probe's EINVAL", err)
	}
	if want := "XDP live frames not supported (requires >= 5.18): BPF_PROG_RUN refused BPF_F_TEST_XDP_LIVE_FRAMES: invalid argument"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	if again := ft.Result(); again != err {
		t.Errorf("second Result = %v, want the cached %v", again, err)
	}
	for _, tt := range []struct {
		err  *UnsupportedFeatureError
		want string
	}{
		{&UnsupportedFeatureError{Name: "XDP links", MinimumVersion: Version{5, 9, 0}}, "XDP links not supported (requires >= 5.9)"},
		{&UnsupportedFeatureError{Name: "frobs"}, "frobs not supported"},
		{&UnsupportedFeatureError{Name: "frobs", MinimumVersion: Version{4, 19, 2}, Cause: ErrNotSupported}, "frobs not supported (requires >= 4.19.2): not supported"},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestResultConcurrent checks that callers at once share one probe run.
func TestResultConcurrent(t *testing.T) {
	p := &countingProbe{answers: []error{nil}}
	ft := NewTest("frobs", "", p.probe)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := ft.Result(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p.runs != 1 {
		t.Errorf("8 concurrent Results ran the probe %d times, want 1", p.runs)
	}
}

func TestNewTestBadVersion(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewTest with version \"5\" did not panic")
		}
	}()
	NewTest("frobs", "5", func() error { return nil })
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want Version
		ok   bool
	}{
		{"5.18", Version{5, 18, 0}, true},
		{"6.12.48+deb13-cloud-amd64", Version{6, 12, 48}, true},
		{"6.18.44-fc-v1045", Version{6, 18, 44}, true},
		{"6.12-rc1", Version{6, 12, 0}, true},
		{"4.19.0", Version{4, 19, 0}, true},
		{"5.4.0-150-generic", Version{5, 4, 0}, true},
		{"5", Version{}, false},
		{"5.", Version{}, false},
		{"x.1", Version{}, false},
		{"", Version{}, false},
		{"70000.1", Version{}, false},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestVersionLess(t *testing.T) {
	tests := []struct {
		a, b Version
		less bool
	}{
		{Version{5, 17, 0}, Version{5, 18, 0}, true},
		{Version{5, 18, 0}, Version{5, 18, 0}, false},
		{Version{5, 18, 1}, Version{5, 18, 0}, false},
		{Version{4, 20, 0}, Version{5, 0, 0}, true},
		{Version{6, 1, 0}, Version{5, 18, 0}, false},
	}
	for _, tt := range tests {
		if got := tt.a.Less(tt.b); got != tt.less {
			t.Errorf("%v.Less(%v) = %v, want %v", tt.a, tt.b, got, tt.less)
		}
	}
}
