package vethlab_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// The tests are external: xdptest, whose TestMain and root rule they use,
// imports vethlab.

func TestMain(m *testing.M) { xdptest.Main(m) }

func TestLab(t *testing.T) {
	xdptest.RequireRoot(t)
	l, err := vethlab.New(vethlab.Config{Queues: 4, Named: true})
	if err != nil {
		t.Fatal(err)
	}
	host, err := netlink.LinkByName(l.Host)
	if err != nil {
		t.Fatal(err)
	}
	if a := host.Attrs(); a.NumRxQueues != 4 || a.OperState == netlink.OperDown {
		t.Errorf("host end: %d rx queues, state %v", a.NumRxQueues, a.OperState)
	}
	if _, err := netlink.LinkByName(l.Peer); err == nil {
		t.Errorf("peer end %s is visible in the caller's namespace", l.Peer)
	}
	err = l.InPeer(func() error {
		peer, err := netlink.LinkByName(l.Peer)
		if err != nil {
			return err
		}
		if peer.Attrs().NumRxQueues != 4 {
			t.Errorf("peer end: %d rx queues", peer.Attrs().NumRxQueues)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	if !strings.Contains(string(out), l.NSName) {
		t.Errorf("namespace %s not listed: %s", l.NSName, out)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, left := range vethlab.Leftovers() {
		if strings.Contains(left, l.NSName[:len(l.NSName)-1]) {
			t.Errorf("left behind: %s", left)
		}
	}
}

// TestSweepAfterKill creates a named lab in a child process that is killed
// with SIGKILL, and checks that the next New removes what it left.
func TestSweepAfterKill(t *testing.T) {
	xdptest.RequireRoot(t)
	if os.Getenv("VETHLAB_CHILD") == "1" {
		if _, err := vethlab.New(vethlab.Config{Named: true}); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("ready\n")
		select {}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepAfterKill$")
	xdptest.StartChild(t, cmd, "VETHLAB_CHILD=1", func(line string) bool { return line == "ready" })
	cmd.Process.Kill()
	cmd.Wait()
	prefix := vethlab.Prefix + itoa(cmd.Process.Pid)
	if !hasLeftover(prefix) {
		t.Fatalf("the killed child left nothing to sweep (prefix %s)", prefix)
	}
	l, err := vethlab.New(vethlab.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if hasLeftover(prefix) {
		t.Errorf("New did not sweep the killed child's lab: %v", vethlab.Leftovers())
	}
}

func hasLeftover(prefix string) bool {
	for _, l := range vethlab.Leftovers() {
		if strings.Contains(l, " "+prefix) {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }
