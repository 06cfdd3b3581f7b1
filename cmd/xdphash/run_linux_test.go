//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/testenv"
	"github.com/xdphash/xdphash/internal/vethlab"
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
	testenv.RequireRoot(t)
	lab, err := vethlab.New(vethlab.Config{Queues: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Error(err)
		}
	})
	fd := -1
	err = lab.InPeer(func() error {
		// Protocol 0: the socket sends and never receives.
		s, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open AF_PACKET socket: %w", err)
		}
		fd = s
		return unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex})
	})
	if fd >= 0 {
		t.Cleanup(func() { unix.Close(fd) })
	}
	if err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "run.json")
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		stdout, stderr, code := runXdphash(t, nil, "run", "--iface", lab.Host, "--duration", "2s",
			"--workers", "2", "--hash-key", kunitKey, "--rx-mode", "poll", "--out", out)
		done <- result{stdout, stderr, code}
	}()
	for deadline := time.Now().Add(5 * time.Second); !xdpAttached(t, lab.Host); {
		if time.Now().After(deadline) {
			t.Fatalf("no XDP program on %s after 5 s: %+v", lab.Host, <-done)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the sockets bind after the program attaches
	sent := 0
	for range 10 {
		for _, f := range corpus.Bases() {
			if err := unix.Sendto(fd, f.Data, 0, &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}); err == nil {
				sent++
			}
		}
	}
	r := <-done
	if r.code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	st := readRunStats(t, out)
	var kernelDrops uint64
	for _, n := range st.Accounting.KernelDrops {
		kernelDrops += n
	}
	if st.Accounting.Received+kernelDrops != uint64(sent) || !st.Accounting.Balanced {
		t.Errorf("sent %d, received %d, kernel drops %d: %+v", sent, st.Accounting.Received, kernelDrops, st.Accounting)
	}
	if len(st.Queues) != 2 || st.Config.Source != "afxdp:"+lab.Host || st.Config.RxMode != "poll" {
		t.Errorf("queues %d, config %+v", len(st.Queues), st.Config)
	}
	if xdpAttached(t, lab.Host) {
		t.Errorf("an XDP program is still attached to %s", lab.Host)
	}
}
