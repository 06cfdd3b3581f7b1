package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/xdphash/xdphash", Version: "v0.3.0"}}
	if got, want := version(bi), "v0.3.0, go1.26.8"; got != want {
		t.Errorf("without VCS stamps: %q, want %q", got, want)
	}
	bi.Settings = []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1715c42abd5882abb22810b205dc90e3dafeb3fe"},
		{Key: "vcs.time", Value: "2026-12-01T23:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	if got, want := version(bi), "v0.3.0, commit 1715c42abd58 of 2026-12-01T23:00:00Z with uncommitted changes, go1.26.8"; got != want {
		t.Errorf("with VCS stamps: %q, want %q", got, want)
	}
	if got := version(nil); !strings.Contains(got, "no build information") {
		t.Errorf("no build info: %q", got)
	}
}

// TestVersionOfBuild builds the binary as a user would, with the VCS stamps
// (where git can read the repository) and a build date set by -ldflags, and
// reads them back from --version.
func TestVersionOfBuild(t *testing.T) {
	const date = "2026-12-01T23:59:59Z"
	args := []string{"-ldflags=-X=main.buildDate=" + date}
	// The go command stamps the commit of a clone (.git a directory), not
	// of a git worktree's checkout (.git a file).
	git := exec.Command("git", "rev-parse", "HEAD")
	git.Dir = moduleRoot
	rev, gitErr := git.Output()
	if fi, err := os.Stat(filepath.Join(moduleRoot, ".git")); gitErr == nil && (err != nil || !fi.IsDir()) {
		gitErr = fmt.Errorf("%s/.git is not a directory", moduleRoot)
	}
	if gitErr == nil {
		args = append(args, "-buildvcs=true") // over a GOFLAGS=-buildvcs=false, as .ci/run sets
	} else {
		t.Logf("git rev-parse: %v: checking the version without a commit", gitErr)
		args = append(args, "-buildvcs=false")
	}
	bin := buildXdphash(t, "xdphash", args...)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("--version: %v", err)
	}
	got := string(out)
	for _, want := range []string{"xdphash version ", "built " + date, "go1."} {
		if !strings.Contains(got, want) {
			t.Errorf("--version %q lacks %q", got, want)
		}
	}
	if gitErr == nil {
		if want := "commit " + string(rev[:12]) + " of "; !strings.Contains(got, want) {
			t.Errorf("--version %q lacks %q", got, want)
		}
	}
}
