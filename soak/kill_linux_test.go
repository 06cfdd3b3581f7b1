package soak

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// killChildEnv marks the child process of TestSoakKilled.
const killChildEnv = "XDPHASH_SOAK_KILL_CHILD"

// TestSoakKilled runs a soak in a child process and kills it with SIGKILL
// while it sends: the kernel must remove its namespace and veth pair (with
// the XDP program on it) by itself, and no mount of the namespace may be
// left. The child says when it runs (its first progress report) and which
// host end it made.
func TestSoakKilled(t *testing.T) {
	if os.Getenv(killChildEnv) != "" {
		var host string
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		log = slog.New(hostCatcher{log.Handler(), &host})
		_, err := Run(context.Background(), Config{
			Duration: time.Minute, Queues: 1, Workers: 1, Threads: 1, Rate: 1000, Mode: "afxdp", Log: log,
			Progress: func(Progress) {
				os.Stdout.WriteString(host + "\n")
				select {} // until killed
			},
		})
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(3)
	}
	xdptest.RequireRoot(t)
	// The child prints the host end of its lab once its soak runs.
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoakKilled$")
	host := xdptest.StartChild(t, cmd, killChildEnv+"=1", func(line string) bool { return line != "" })
	xdptest.KillAndWaitGone(t, cmd, host)
	mine := vethlab.Prefix + strconv.Itoa(cmd.Process.Pid)
	for _, l := range vethlab.Leftovers() {
		if strings.Contains(l, mine) {
			t.Errorf("left behind: %s", l)
		}
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err != nil || strings.Contains(string(mounts), mine) {
		t.Errorf("a mount of %s is left (or mountinfo unreadable: %v)", mine, err)
	}
}

// hostCatcher is a log handler that keeps the host end the soak's "lab"
// record names.
type hostCatcher struct {
	slog.Handler
	host *string
}

func (h hostCatcher) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "lab" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "host" {
				*h.host = a.Value.String()
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}
