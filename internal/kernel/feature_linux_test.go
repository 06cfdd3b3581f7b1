package kernel

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel/feature"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestProbesRetryAfterRefusal runs each probe that loads a program first on
// a thread without the capabilities to load it, then with them: the refusal
// must come back as ErrNotPermitted, not as a missing feature, and must not
// be kept, so that the second Result probes again and finds the feature.
// Each probe gets a Test of its own, since the package's Tests may have
// concluded already.
func TestProbesRetryAfterRefusal(t *testing.T) {
	xdptest.RequireRoot(t)
	probes := []struct {
		name    string
		version string
		probe   func() error
	}{
		{"XDP live frames", "5.18", probeLiveFrames},
		{"XDP links", "5.9", probeXDPLinks},
	}
	drop := []uint{unix.CAP_BPF, unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			runs := 0
			ft := feature.NewTest(p.name, p.version, func() error { runs++; return p.probe() })
			var refused error
			if err := xdptest.WithoutCapabilities(drop, func() { refused = ft.Result() }); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(refused, ErrNotPermitted) || errors.Is(refused, ErrNotSupported) {
				t.Errorf("without CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN: %v, want ErrNotPermitted and not ErrNotSupported", refused)
			}
			xdptest.SkipIfNotSupported(t, ft.Result())
			if runs != 2 {
				t.Errorf("the probe ran %d times, want 2: the refusal was kept", runs)
			}
			if err := ft.Result(); err != nil || runs != 2 {
				t.Errorf("third Result: %v after %d runs, want nil from the kept answer of run 2", err, runs)
			}
		})
	}
}
