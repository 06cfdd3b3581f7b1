package e2e

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/testenv"
	"github.com/xdphash/xdphash/internal/vethlab"
)

// NewLab creates a lab (a namespace and a veth pair with cfg.Queues queues
// per end) for a test that runs as root, and removes it when the test ends,
// or when the process gets SIGINT, SIGTERM or SIGHUP first. At the end it
// fails the test if any of the lab's links or its namespace outlived Close.
func NewLab(tb testing.TB, cfg vethlab.Config) *vethlab.Lab {
	tb.Helper()
	testenv.RequireRoot(tb)
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
		if left := leftoversOf(lab); len(left) > 0 {
			tb.Errorf("lab %s: %s outlived Close", lab.NSName, strings.Join(left, ", "))
		}
	})
	return lab
}

// undo holds what the signal handler undoes: labs and child processes of
// tests still running.
var undo struct {
	sync.Mutex
	fns  map[int]func()
	next int
}

// UndoOnSignal registers fn to run if the process gets SIGINT, SIGTERM or
// SIGHUP (after CatchSignals), and returns the function that unregisters it.
func UndoOnSignal(fn func()) (forget func()) {
	undo.Lock()
	defer undo.Unlock()
	if undo.fns == nil {
		undo.fns = map[int]func(){}
	}
	id := undo.next
	undo.next++
	undo.fns[id] = fn
	return func() {
		undo.Lock()
		defer undo.Unlock()
		delete(undo.fns, id)
	}
}

// CatchSignals makes SIGINT, SIGTERM and SIGHUP run every registered undo
// function before the process dies of the signal, so that an interrupted
// test leaves no namespace, veth or XDP program behind. The first call
// starts the handler, which lives as long as the process: a TestMain that
// counts goroutines calls it before counting.
var CatchSignals = sync.OnceFunc(func() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-c
		undo.Lock() // held to the end: nothing registers any more
		for _, fn := range undo.fns {
			fn()
		}
		// Die of the signal, as without the handler.
		signal.Reset(sig)
		_ = unix.Kill(os.Getpid(), sig.(syscall.Signal))
		time.Sleep(time.Second)
		os.Exit(2)
	}()
})

// XDP attach modes as rtnetlink reports them (IFLA_XDP_ATTACHED,
// enum XDP_ATTACHED_*, include/uapi/linux/if_link.h).
const (
	xdpAttachedNone = 0
	xdpAttachedDrv  = 1
	xdpAttachedSKB  = 2
	xdpAttachedHW   = 3
	xdpAttachedMany = 4
)

// XDPMode is the XDP program attached to the interface iface of the
// caller's namespace as `ip link show dev IFACE` shows it: "xdp" (native),
// "xdpgeneric", "xdpoffload", "xdpmulti", or "" for none.
func XDPMode(tb testing.TB, iface string) string {
	tb.Helper()
	link, err := netlink.LinkByName(iface)
	if err != nil {
		tb.Fatalf("find %s: %v", iface, err)
	}
	x := link.Attrs().Xdp
	if x == nil {
		return ""
	}
	switch x.AttachMode {
	case xdpAttachedNone:
		return ""
	case xdpAttachedDrv:
		return "xdp"
	case xdpAttachedSKB:
		return "xdpgeneric"
	case xdpAttachedHW:
		return "xdpoffload"
	case xdpAttachedMany:
		return "xdpmulti"
	}
	return fmt.Sprintf("xdp(mode %d)", x.AttachMode)
}

// Send sends frames, in order, out of the lab's Peer end from an AF_PACKET
// socket inside the lab's namespace, so that they arrive on Host. The
// socket goes through the device's queue selection (no
// PACKET_QDISC_BYPASS): veth picks its transmit queue, and so Host's receive
// queue, by each frame's flow hash, which spreads frames of different flows
// over the queues. A full queue (ENOBUFS) is waited out, for 5 s at most.
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

// leftoversOf lists the lab's links and namespace that exist now.
func leftoversOf(lab *vethlab.Lab) []string {
	var out []string
	for _, l := range vethlab.Leftovers() {
		_, name, _ := strings.Cut(l, " ")
		if name == lab.Host || name == lab.Peer || name == lab.NSName {
			out = append(out, l)
		}
	}
	return out
}
