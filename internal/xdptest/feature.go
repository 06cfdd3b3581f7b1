package xdptest

import (
	"errors"
	"testing"

	"github.com/xdphash/xdphash/internal/kernel/feature"
)

// SkipIfNotSupported ends a test whose subject the running kernel lacks,
// after the rule of cilium/ebpf's tests: err from one of internal/kernel's
// feature probes (a *feature.UnsupportedFeatureError) on a kernel older
// than the first version with the feature skips the test (Unavailable: it
// fails under CI=true), with the error as the reason. On a kernel at or
// above that version the feature should be there, so the test fails, as it
// does on any other error (a permission refusal, an ErrNotSupported that
// names no version). On nil it does nothing.
func SkipIfNotSupported(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	running, rerr := feature.Running()
	skipIfNotSupported(tb, err, running, rerr)
}

// skipIfNotSupported is SkipIfNotSupported on a kernel of version running
// (runningErr: the version could not be read).
func skipIfNotSupported(tb testing.TB, err error, running feature.Version, runningErr error) {
	tb.Helper()
	var ufe *feature.UnsupportedFeatureError
	switch {
	case err == nil:
		return
	case !errors.As(err, &ufe):
		tb.Fatal(err)
	case ufe.MinimumVersion.IsZero():
		tb.Fatalf("%v: the feature names no kernel version, so the test cannot tell an old kernel from a regression", err)
	case runningErr != nil:
		tb.Fatalf("%v: %v", err, runningErr)
	case !running.Less(ufe.MinimumVersion):
		tb.Fatalf("%v, but this is Linux %v, which should have it", err, running)
	default:
		Unavailable(tb, "%v; this is Linux %v", err, running)
	}
}
