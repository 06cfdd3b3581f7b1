package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/xdphash/xdphash/internal/xdptest"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(signalChildEnv); dir != "" {
		// Before Main, whose signal handler would end the child by SIGINT.
		os.Exit(runSignalChild(dir))
	}
	if file := os.Getenv(pktgenSignalChildEnv); file != "" {
		os.Exit(pktgenSignalChild(file))
	}
	if out := os.Getenv(searchSignalChildEnv); out != "" {
		os.Exit(searchSignalChild(out))
	}
	xdptest.Main(m)
}

// TestRunExitStatus checks how the error a command returns becomes the exit
// status and the message on stderr.
func TestRunExitStatus(t *testing.T) {
	tests := []struct {
		name       string
		err        error // returned by the command
		args       []string
		wantCode   int
		wantStderr string // stderr, or its end when the usage comes first
		wantUsage  bool
	}{
		{name: "success", wantCode: exitOK},
		{name: "runtime error", err: errors.New("broken"), wantCode: exitFailure, wantStderr: "xdphash: broken\n"},
		{
			name:       "divergence with message",
			err:        &exitError{code: exitDivergence, err: errors.New("3 frames diverge")},
			wantCode:   exitDivergence,
			wantStderr: "xdphash: 3 frames diverge\n",
		},
		{name: "divergence silent", err: &exitError{code: exitDivergence}, wantCode: exitDivergence},
		{
			name:       "unknown flag",
			args:       []string{"--no-such-flag"},
			wantCode:   exitFailure,
			wantStderr: "xdphash: unknown flag: --no-such-flag\n",
			wantUsage:  true,
		},
		{
			name:       "extra argument",
			args:       []string{"extra"},
			wantCode:   exitFailure,
			wantStderr: "xdphash: unknown command \"extra\" for \"xdphash probe\"\n",
			wantUsage:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRootCmd()
			root.AddCommand(&cobra.Command{
				Use:  "probe",
				Args: usageArgs(cobra.NoArgs),
				RunE: func(*cobra.Command, []string) error { return tt.err },
			})
			var stdout, stderr bytes.Buffer
			root.SetOut(&stdout)
			root.SetErr(&stderr)
			code := run(root, append([]string{"probe"}, tt.args...))
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d", code, tt.wantCode)
			}
			// The error is the last line, after the usage of a usage
			// error only.
			rest, ok := strings.CutSuffix(stderr.String(), tt.wantStderr)
			if tt.wantUsage {
				ok = ok && strings.HasPrefix(rest, "Usage:\n  xdphash probe")
			} else {
				ok = ok && rest == ""
			}
			if !ok {
				t.Errorf("stderr (-want +got)\n-%q + usage %v\n+%q", tt.wantStderr, tt.wantUsage, stderr.String())
			}
		})
	}
}

// TestRootHelpListsCommands: the root help's list names every command with
// a whole line of what it does.
func TestRootHelpListsCommands(t *testing.T) {
	root := newRootCmd()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !strings.Contains(root.Long, "\n  "+c.Name()+" ") {
			t.Errorf("the root help does not list %s", c.Name())
		}
	}
	// Each entry (its line and the lines indented under it) ends where
	// its sentence does, not on "the running kernel's".
	var entries []string
	for line := range strings.SplitSeq(root.Long, "\n") {
		switch {
		case strings.HasPrefix(line, "            ") && len(entries) > 0:
			entries[len(entries)-1] += " " + strings.TrimSpace(line)
		case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			entries = append(entries, strings.TrimSpace(line))
		}
	}
	for _, e := range entries {
		if strings.HasSuffix(e, "'s") || strings.HasSuffix(e, " the") || strings.HasSuffix(e, " with") {
			t.Errorf("the root help's entry stops mid-sentence: %q", e)
		}
	}
}
