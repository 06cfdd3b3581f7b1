package xdptest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// StartChild starts cmd, a run of this test binary (or a copy of it) that
// the caller prepared, with env ("NAME=value") added to its environment,
// and returns the first line the child prints, trimmed of spaces; the rest
// of its output is discarded. When the child prints no line, or ok rejects
// it (ok nil takes any line), StartChild kills the child and fails the test.
func StartChild(tb testing.TB, cmd *exec.Cmd, env string, ok func(line string) bool) string {
	tb.Helper()
	cmd.Env = append(os.Environ(), env)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	line = strings.TrimSpace(line)
	if err != nil || ok != nil && !ok(line) {
		cmd.Process.Kill()
		cmd.Wait()
		tb.Fatalf("the child %s did not get ready: %q, %v", strings.Join(cmd.Args, " "), line, err)
	}
	go io.Copy(io.Discard, stdout)
	return line
}
