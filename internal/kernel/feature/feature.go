// Package feature tells whether the running kernel has a feature the way
// cilium/ebpf's own feature tests do: a Test runs its probe until the probe
// concludes (the kernel has the feature, or lacks it) and keeps only that
// answer, so a probe that a missing privilege or a passing failure stopped
// runs again on the next call; and a missing feature is an
// *UnsupportedFeatureError that names the first Linux version with it, which
// lets a test tell a kernel too old from a regression
// (internal/xdptest.SkipIfNotSupported).
//
// It imports nothing of the project's, so that internal/kernel (which
// re-exports ErrNotSupported) and the test helpers of internal/xdptest can
// both use it.
package feature

import (
	"errors"
	"fmt"
	"sync"
)

// ErrNotSupported means the running kernel, or the platform, lacks a feature.
// internal/kernel re-exports it as kernel.ErrNotSupported; test for it with
// errors.Is, which an *UnsupportedFeatureError satisfies.
var ErrNotSupported = errors.New("not supported")

// UnsupportedFeatureError is a Test's answer when the kernel lacks the
// feature: errors.Is(err, ErrNotSupported) holds for it.
type UnsupportedFeatureError struct {
	// Name is the feature, as a sentence's subject: "XDP live frames".
	Name string
	// MinimumVersion is the first mainline Linux version with the feature; the
	// zero Version when it depends on more than the version.
	MinimumVersion Version
	// Cause is what the probe saw, or nil.
	Cause error
}

// Error reads "XDP live frames not supported (requires >= 5.18)", followed by
// what the probe saw.
func (e *UnsupportedFeatureError) Error() string {
	s := e.Name + " not supported"
	if !e.MinimumVersion.IsZero() {
		s += " (requires >= " + e.MinimumVersion.String() + ")"
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Is makes the error ErrNotSupported for errors.Is.
func (e *UnsupportedFeatureError) Is(target error) bool { return target == ErrNotSupported }

// Unwrap returns what the probe saw.
func (e *UnsupportedFeatureError) Unwrap() error { return e.Cause }

// Missing is what a probe returns when it found the feature missing: an
// error that is ErrNotSupported (errors.Is) and whose text is only the
// evidence, formatted as fmt.Errorf does (%w wraps), since the
// *UnsupportedFeatureError around it already says "not supported".
func Missing(format string, args ...any) error {
	return missing{fmt.Errorf(format, args...)}
}

type missing struct{ err error }

func (m missing) Error() string        { return m.err.Error() }
func (m missing) Unwrap() error        { return m.err }
func (m missing) Is(target error) bool { return target == ErrNotSupported }

// Test is one feature probe and its cached answer. Result may be called from
// several goroutines at once; concurrent callers wait for one probe.
type Test struct {
	name    string
	version Version
	probe   func() error

	mu     sync.Mutex
	done   bool
	result error
}

// NewTest makes the Test of the feature name, which mainline Linux has since
// version ("5.18"; "" when that is not the whole story). probe answers nil
// when the kernel has the feature, an error that is ErrNotSupported (see
// Missing) when it lacks it, and any other error when it could not tell (no
// privilege to load the probe's program, say). A version that does not
// parse panics: it is a literal in the caller's source.
func NewTest(name, version string, probe func() error) *Test {
	t := &Test{name: name, probe: probe}
	if version != "" {
		v, err := ParseVersion(version)
		if err != nil {
			panic(fmt.Sprintf("feature test %q: %v", name, err))
		}
		t.version = v
	}
	return t
}

// Result runs the probe unless an earlier call concluded, and keeps the
// answer only when it is conclusive: nil, or an *UnsupportedFeatureError. An
// inconclusive probe's error comes back wrapped ("detect XDP live frames:
// ..."), and the next call probes again.
func (t *Test) Result() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return t.result
	}
	err := t.probe()
	switch {
	case err == nil:
		t.done = true
		return nil
	case errors.Is(err, ErrNotSupported):
		t.done = true
		t.result = &UnsupportedFeatureError{Name: t.name, MinimumVersion: t.version, Cause: err}
		return t.result
	default:
		return fmt.Errorf("detect %s: %w", t.name, err)
	}
}
