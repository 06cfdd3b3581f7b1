package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// shortRun writes a small run's statistics to dir/run.json.
func shortRun(t *testing.T, dir string) string {
	t.Helper()
	run := filepath.Join(dir, "run.json")
	if _, stderr, code := runXdphash(t, nil, "run", "--synthetic", "datacenter", "--virtual-clock", "--count", "2000", "--out", run); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	return run
}

// TestOutputsRefused: an output that is an input or another output, or a
// directory, is refused before any work, and the files stay as they were.
func TestOutputsRefused(t *testing.T) {
	dir := t.TempDir()
	run := shortRun(t, dir)
	before, _ := os.ReadFile(run)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("run.json", link); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(dir, "x")
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"report --html onto its input", []string{"report", run, "--html", run}, "the same file as the input"},
		{"report --json onto its input by a link", []string{"report", run, "--json", link}, "the same file as the input"},
		{"report --html and --json one file", []string{"report", run, "--html", x, "--json", x}, "the same file as the output --html"},
		{"run --out and --write one file", []string{"run", "--synthetic", "datacenter", "--virtual-clock", "--count", "100", "--out", x, "--write", "./x"}, "the same file as the output --out"},
		{"run --out a directory", []string{"run", "--synthetic", "datacenter", "--virtual-clock", "--count", "100", "--out", dir}, "is a directory"},
		{"run --write a directory", []string{"run", "--synthetic", "datacenter", "--virtual-clock", "--count", "100", "--write", dir}, "is a directory"},
	}
	t.Chdir(dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runXdphash(t, nil, tt.args...)
			if code != exitFailure || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitFailure, tt.want)
			}
			if stdout != "" {
				t.Errorf("work done before the refusal: %q", stdout)
			}
		})
	}
	if after, _ := os.ReadFile(run); string(after) != string(before) {
		t.Error("the input run.json changed")
	}
	if _, err := os.Lstat(x); err == nil {
		t.Errorf("%s was written", x)
	}
}

// TestOutputLongName: a 250-byte output name (the limit is 255) works.
func TestOutputLongName(t *testing.T) {
	dir := t.TempDir()
	run := shortRun(t, dir)
	long := filepath.Join(dir, strings.Repeat("r", 245)+".html")
	if _, stderr, code := runXdphash(t, nil, "report", run, "--html", long); code != exitOK {
		t.Fatalf("report --html with a 250-byte name: exit %d\n%s", code, stderr)
	}
	if fi, err := os.Stat(long); err != nil || fi.Size() == 0 {
		t.Errorf("%s: %v", long, err)
	}
}

// TestOutputDevices: outputs on character devices are written through, and
// a failed write (a copy of /dev/full) leaves the device in place.
func TestOutputDevices(t *testing.T) {
	xdptest.RequireRoot(t)
	dir := t.TempDir()
	run := shortRun(t, dir)
	null, full := filepath.Join(dir, "mynull"), filepath.Join(dir, "myfull")
	for _, d := range []struct {
		path         string
		major, minor int
	}{{null, 1, 3}, {full, 1, 7}} {
		if err := syscall.Mknod(d.path, syscall.S_IFCHR|0o666, d.major<<8|d.minor); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, code := runXdphash(t, nil, "report", run, "--html", null, "--json", null); code != exitOK {
		t.Errorf("report to a null device: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runXdphash(t, nil, "report", run, "--json", full); code != exitFailure || !strings.Contains(stderr, "no space left") {
		t.Errorf("report to a full device: exit %d\n%s\nwant ENOSPC", code, stderr)
	}
	if _, stderr, code := runXdphash(t, nil, "run", "--synthetic", "datacenter", "--virtual-clock", "--count", "100", "--out", null); code != exitOK {
		t.Errorf("run --out a null device: exit %d\n%s", code, stderr)
	}
	for _, p := range []string{null, full} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("%s is gone or no longer a device: %v", p, err)
		}
	}
}
