package xdptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// XdphashBinary builds the xdphash command once per test binary, as `go
// build` does by default (with cgo: dynamically linked), and returns its
// path: for tests that run xdphash where their own binary cannot stand in
// for it, such as the virtio lab's guest. The file is left in the temporary
// directory for the process's later tests; the next build replaces it.
func XdphashBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("xdphash-test-bin-%d", os.Getpid()))
		if buildErr = os.MkdirAll(dir, 0o755); buildErr != nil {
			return
		}
		built = filepath.Join(dir, "xdphash")
		gobin, err := exec.LookPath("go")
		if err != nil {
			buildErr = fmt.Errorf("build xdphash: %w", err)
			return
		}
		if out, err := exec.Command(gobin, "build", "-o", built, "github.com/xdphash/xdphash/cmd/xdphash").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build xdphash: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return built
}

// RemoveXdphashBinary removes what XdphashBinary built: a TestMain's atExit.
func RemoveXdphashBinary() {
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
}
