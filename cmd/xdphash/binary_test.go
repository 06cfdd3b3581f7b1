package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// moduleRoot is the repository's top folder, where the README's commands run.
const moduleRoot = "../.."

// buildXdphash builds the xdphash binary as name in a temporary directory
// with go build's extra args, as the README's commands build it, and returns
// its path.
func buildXdphash(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, args...), "./cmd/xdphash")...)
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}
