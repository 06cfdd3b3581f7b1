//go:build linux

package main

import (
	"path/filepath"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/corpus"
)

// xdpAttached tells whether iface has an XDP program attached.
func xdpAttached(tb testing.TB, iface string) bool {
	tb.Helper()
	link, err := netlink.LinkByName(iface)
	if err != nil {
		tb.Fatal(err)
	}
	x := link.Attrs().Xdp
	return x != nil && x.Attached
}

// TestRunIface runs xdphash run on the host end of a veth pair of its own
// while the peer end, in the lab's namespace, sends the corpus's base frames:
// every frame sent is received and accounted for, and the XDP program is
// gone when the run ends.
func TestRunIface(t *testing.T) {
	lab, fd := labSender(t, 2)

	out := filepath.Join(t.TempDir(), "run.json")
	done := startIfaceRun(t, lab.Host, "run", "--iface", lab.Host, "--duration", "2s",
		"--workers", "2", "--hash-key", kunitKey, "--rx-mode", "poll", "--out", out)
	sent := 0
	for range 10 {
		for _, f := range corpus.Bases() {
			if err := unix.Sendto(fd, f.Data, 0, &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}); err == nil {
				sent++
			}
		}
	}
	st := finishIfaceRun(t, done, out, sent)
	if len(st.Queues) != 2 || st.Config.Source != "afxdp:"+lab.Host || st.Config.RxMode != "poll" {
		t.Errorf("queues %d, config %+v", len(st.Queues), st.Config)
	}
	if xdpAttached(t, lab.Host) {
		t.Errorf("an XDP program is still attached to %s", lab.Host)
	}
}
