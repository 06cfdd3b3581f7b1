package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeOutputFlag finds what a README command writes: the value of -o,
// --write, --out or --html.
var readmeOutputFlag = regexp.MustCompile(`(?:^|\s)(?:-o|--write|--out|--html) (\S+)`)

// TestREADMEOutputsIgnored: every file that the README's "Try it without a
// network" commands write into the work tree, and the main command's binary
// and report folder, are in .gitignore.
func TestREADMEOutputsIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git to ask")
	}
	if err := exec.Command("git", "-C", moduleRoot, "rev-parse").Run(); err != nil {
		t.Skipf("%s is not a git checkout: %v", moduleRoot, err)
	}
	b, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, try, ok := strings.Cut(string(b), "## Try it without a network")
	if !ok {
		t.Fatal(`README.md has no "Try it without a network"`)
	}
	try, _, _ = strings.Cut(try, "\n## ")
	outputs := []string{readmeMainCommandOutput(string(b)), "xdphash-soak-20261201-162211/report.html"}
	for line := range strings.SplitSeq(try, "\n") {
		if !strings.HasPrefix(line, "    ") {
			continue
		}
		for _, m := range readmeOutputFlag.FindAllStringSubmatch(line, -1) {
			outputs = append(outputs, m[1])
		}
	}
	if len(outputs) < 5 {
		t.Fatalf("found only %q among the README's outputs", outputs)
	}
	for _, out := range outputs {
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", out)
		cmd.Dir = moduleRoot
		if err := cmd.Run(); err != nil {
			t.Errorf("%s, which the README's commands write, is not in .gitignore (git check-ignore: %v)", out, err)
		}
	}
}

// readmeMainCommandOutput is the binary the README's main command builds.
func readmeMainCommandOutput(readme string) string {
	if m := regexp.MustCompile(`go build -o (\S+) \./cmd/xdphash`).FindStringSubmatch(readme); m != nil {
		return m[1]
	}
	return "xdphash"
}
