package xdptest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/xdphash/xdphash/internal/vethlab"
)

// NewLab makes a lab for a test (RequireRoot first), runs each of setup on
// its Host end's name (kernel.PrepareReceiver, for one), and removes the lab
// when the test ends or when the process gets SIGINT, SIGTERM or SIGHUP
// first. The test fails if the lab cannot be made, set up or removed, or if
// any of its links or its namespace outlive it.
func NewLab(tb testing.TB, cfg vethlab.Config, setup ...func(host string) error) *vethlab.Lab {
	tb.Helper()
	RequireRoot(tb)
	CatchSignals()
	lab, err := vethlab.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	forget := UndoOnSignal(func() { lab.Close() })
	tb.Cleanup(func() {
		forget()
		if err := lab.Close(); err != nil {
			tb.Error(err)
		}
		if left := LabLeftovers(lab); len(left) > 0 {
			tb.Errorf("lab %s: %s outlived Close", lab.NSName, strings.Join(left, ", "))
		}
	})
	for _, fn := range setup {
		if err := fn(lab.Host); err != nil {
			tb.Fatal(err)
		}
	}
	return lab
}

// HostRxPackets is the rx_packets counter of the lab's Host end: the frames
// it received, read from the kernel's link statistics.
func HostRxPackets(tb testing.TB, lab *vethlab.Lab) uint64 {
	tb.Helper()
	l, err := netlink.LinkByName(lab.Host)
	if err != nil {
		tb.Fatalf("read the statistics of %s: %v", lab.Host, err)
	}
	s := l.Attrs().Statistics
	if s == nil {
		tb.Fatalf("read the statistics of %s: the kernel gave none", lab.Host)
	}
	return s.RxPackets
}

// LabLeftovers lists the lab's links and namespace that exist now, as
// vethlab.Leftovers names them.
func LabLeftovers(lab *vethlab.Lab) []string {
	var out []string
	for _, l := range vethlab.Leftovers() {
		_, name, _ := strings.Cut(l, " ")
		if name == lab.Host || name == lab.Peer || name == lab.NSName {
			out = append(out, l)
		}
	}
	return out
}

// OwnLabs lists the namespaces and veths of this process's labs that exist
// now, as vethlab.Leftovers names them.
func OwnLabs() []string {
	var out []string
	mine := vethlab.Prefix + fmt.Sprint(os.Getpid())
	for _, l := range vethlab.Leftovers() {
		if strings.Contains(l, mine) {
			out = append(out, l)
		}
	}
	return out
}

// Send sends frames, in order, out of the lab's Peer end from an AF_PACKET
// socket inside the lab's namespace, so that they arrive on Host. The
// socket goes through the kernel's transmit queue selection (no
// PACKET_QDISC_BYPASS), which picks Peer's transmit queue by each frame's
// flow hash; veth delivers the frame to Host's receive queue of the same
// number, so frames of different flows spread over the queues. A full queue
// (ENOBUFS) is waited out, for 5 s at most: the socket signals no room.
func Send(tb testing.TB, lab *vethlab.Lab, frames [][]byte) {
	tb.Helper()
	err := lab.InPeer(func() error {
		// Protocol 0: the socket sends and never receives.
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open AF_PACKET socket: %w", err)
		}
		defer unix.Close(fd)
		to := &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}
		if err := unix.Bind(fd, to); err != nil {
			return fmt.Errorf("bind AF_PACKET socket to %s: %w", lab.Peer, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for i := 0; i < len(frames); {
			err := unix.Sendto(fd, frames[i], 0, to)
			switch {
			case err == nil:
				i++
			case (err == unix.ENOBUFS || err == unix.EAGAIN) && time.Now().Before(deadline):
				time.Sleep(100 * time.Microsecond)
			default:
				return fmt.Errorf("send frame %d of %d out of %s: %w", i, len(frames), lab.Peer, err)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// XDPAttached tells what XDP program the interface iface of the caller's
// namespace runs: "" for none, "native" or "generic" for one attached in
// that mode (source.XDPMode's names), "other" for offload or several.
func XDPAttached(tb testing.TB, iface string) string {
	tb.Helper()
	link, err := netlink.LinkByName(iface)
	if err != nil {
		tb.Fatalf("find %s: %v", iface, err)
	}
	x := link.Attrs().Xdp
	switch {
	case x == nil || !x.Attached:
		return ""
	case x.AttachMode == nl.XDP_ATTACHED_DRV:
		return "native"
	case x.AttachMode == nl.XDP_ATTACHED_SKB:
		return "generic"
	}
	return "other"
}

// KillAndWaitGone kills cmd with SIGKILL and waits until the link named host
// (an end of a lab the child made) is gone: the kernel frees a namespace, and
// the veth pair with it, from a work queue after its last reference goes, so
// the test waits for the link's deletion event rather than for a time. It
// fails the test when the link outlives the kill by 30 s.
func KillAndWaitGone(tb testing.TB, cmd *exec.Cmd, host string) {
	tb.Helper()
	link, err := netlink.LinkByName(host)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		tb.Fatalf("the child's host end %q: %v", host, err)
	}
	updates := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	defer close(done)
	if err := netlink.LinkSubscribe(updates, done); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		tb.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	timeout := time.After(30 * time.Second)
	for gone := false; !gone; {
		if _, err := netlink.LinkByIndex(link.Attrs().Index); err != nil {
			return
		}
		select {
		case u := <-updates:
			gone = u.Header.Type == unix.RTM_DELLINK && int(u.Index) == link.Attrs().Index
		case <-timeout:
			tb.Fatalf("the killed child's veth %s still exists after 30 s", host)
		}
	}
}
