package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// readmeSoakCommand is the form the README's main command must have: a
// build, then the binary, so that the soak's exit status reaches the shell
// (`go run` turns every non-zero status into 1).
var readmeSoakCommand = regexp.MustCompile(`^go build -o (\S+) \./cmd/xdphash && \./(\S+) soak$`)

// readmeMainCommand returns the README's main command: the first indented
// line after "Run the main job".
func readmeMainCommand(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "Run the main job")
	if !ok {
		t.Fatal(`README.md has no "Run the main job"`)
	}
	sc := bufio.NewScanner(strings.NewReader(rest))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "    "); ok {
			return strings.TrimSpace(line)
		}
	}
	t.Fatal("README.md: no command after \"Run the main job\"")
	return ""
}

// TestREADMESoakExitStatus runs the README's main command as it is written
// (the binary built into a temporary directory instead of the work tree)
// and checks the exit statuses the README documents reach the caller: 3
// for a run too short for the memory check, 130 for an interrupted run.
func TestREADMESoakExitStatus(t *testing.T) {
	line := readmeMainCommand(t)
	m := readmeSoakCommand.FindStringSubmatch(line)
	if m == nil || m[1] != m[2] {
		t.Fatalf("the README's main command %q is not `go build -o NAME ./cmd/xdphash && ./NAME soak`: through go run its exit statuses reach the shell as 1", line)
	}
	xdptest.RequireRoot(t)
	bin := buildXdphash(t, m[1])
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	short := exec.CommandContext(ctx, bin, "soak", "--duration", "2s", "--out", filepath.Join(t.TempDir(), "short"))
	out, err := short.CombinedOutput()
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != exitSkipped {
		t.Errorf("a 2 s soak: %v, want exit status %d (the memory check says SKIP)\n%s", err, exitSkipped, out)
	}

	// Interrupted once the generator runs: 130, after the reports.
	dir := filepath.Join(t.TempDir(), "interrupted")
	long := exec.CommandContext(ctx, bin, "soak", "--duration", "60s", "--out", dir)
	stderr, err := long.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	forget := xdptest.UndoOnSignal(func() { long.Process.Kill() })
	defer forget()
	sc := bufio.NewScanner(stderr)
	started := false
	var logged []string
	for !started && sc.Scan() {
		logged = append(logged, sc.Text())
		started = strings.Contains(sc.Text(), "msg=generator")
	}
	if !started {
		long.Process.Kill()
		long.Wait()
		t.Fatalf("the soak never started its generator:\n%s", strings.Join(logged, "\n"))
	}
	if err := long.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	err = long.Wait()
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != exitInterrupted {
		t.Errorf("an interrupted soak: %v, want exit status %d", err, exitInterrupted)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("an interrupted soak left no report: %v", err)
	}
}
