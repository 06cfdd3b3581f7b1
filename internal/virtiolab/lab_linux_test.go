package virtiolab_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
	"github.com/xdphash/xdphash/internal/xdptest"
)

func TestMain(m *testing.M) { xdptest.Main(m) }

// requireLab ends the test (xdptest.Unavailable) without root or QEMU, and
// returns the guest kernel, fetched into the cache if need be.
func requireLab(tb testing.TB, series string) virtiolab.Kernel {
	tb.Helper()
	xdptest.RequireRoot(tb)
	if _, err := exec.LookPath(virtiolab.QEMU); err != nil {
		xdptest.Unavailable(tb, "the virtio lab needs %s (apt-get install qemu-system-x86): %v", virtiolab.QEMU, err)
	}
	k, err := virtiolab.FetchKernel(series)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// xdphashBinary builds xdphash once for the package's tests, as `go build`
// does by default (with cgo: dynamically linked, which the lab copies into
// the guest with its libraries).
func xdphashBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xdphash-virtiolab-bin-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "xdphash")
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		out, err := exec.Command(gobin, "build", "-o", built, "github.com/xdphash/xdphash/cmd/xdphash").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build xdphash: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return built
}

// newLab starts a lab for the test and closes it when the test ends,
// checking that nothing of it is left.
func newLab(tb testing.TB, cfg virtiolab.Config) *virtiolab.Lab {
	tb.Helper()
	xdptest.CatchSignals()
	l, err := virtiolab.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	forget := xdptest.UndoOnSignal(func() { l.Close() })
	tb.Cleanup(func() {
		forget()
		if err := l.Close(); err != nil {
			tb.Error(err)
		}
		if _, err := os.Stat(l.Dir); err == nil {
			tb.Errorf("the lab's directory %s outlived Close", l.Dir)
		}
	})
	return l
}

func TestBootSmoke(t *testing.T) {
	k := requireLab(t, "")
	bin := xdphashBinary(t)
	var console strings.Builder
	l := newLab(t, virtiolab.Config{
		Kernel: k, Binary: bin, RXHash: true, Console: &console,
		Steps: []guest.Step{{
			Args:  []string{guest.InitPath, "run", "--iface", "eth0", "--queues", "all", "--xdp-mode", "native", "--hash", "toeplitz", "--rss-key", "device", "--check-device-hash", "--out", "/tmp/run.json"},
			Ready: "xdp program", ResetRSS: true, Files: []string{"/tmp/run.json"}, Timeout: 3 * time.Minute,
		}},
	})
	if err := l.WaitReady(); err != nil {
		t.Fatal(err)
	}
	t.Logf("boot to /init: %v", l.BootTime())
	if err := l.Stop(); err != nil {
		t.Fatal(err)
	}
	res, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", res.Report)
	t.Logf("run.json: %d bytes", len(res.Files["/tmp/run.json"]))
	_ = context.Background
	_ = strconv.Itoa
}
