package e2e

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
)

// NewLab is vethlab.ForTest (a lab for a test that runs as root, removed
// when the test ends) that also removes the lab when the process gets
// SIGINT, SIGTERM or SIGHUP first, and fails the test if any of the lab's
// links or its namespace outlive it.
func NewLab(tb testing.TB, cfg vethlab.Config) *vethlab.Lab {
	tb.Helper()
	CatchSignals()
	lab := vethlab.ForTest(tb, cfg)
	forget := UndoOnSignal(func() { lab.Close() })
	tb.Cleanup(func() {
		forget()
		// Close now, before ForTest's cleanup, to look for leftovers; its
		// Close then reports this one's error.
		lab.Close()
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
// test leaves no namespace, veth or child process behind. The first call
// starts the handler, which lives as long as the process: a TestMain that
// counts goroutines calls it before counting.
func CatchSignals() { catchSignals() }

var catchSignals = sync.OnceFunc(func() {
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

// XDPAttached tells what XDP program the interface iface of the caller's
// namespace runs: "" for none, "native" or "generic" for one attached in
// that mode (source.XDPMode's names), "other" for offload or several.
func XDPAttached(tb testing.TB, iface string) string {
	tb.Helper()
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		tb.Fatalf("find %s: %v", iface, err)
	}
	mode, id, err := kernel.AttachedXDP(ifi.Index)
	switch {
	case err != nil:
		tb.Fatal(err)
	case id == 0:
		return ""
	case mode == 0:
		return "other"
	}
	return mode.String()
}

// Send sends frames, in order, out of the lab's Peer end from an AF_PACKET
// socket inside the lab's namespace, so that they arrive on Host. The
// socket goes through the kernel's transmit queue selection (no
// PACKET_QDISC_BYPASS), which picks Peer's transmit queue by each frame's
// flow hash; veth delivers the frame to Host's receive queue of the same
// number, so frames of different flows spread over the queues. A full queue
// (ENOBUFS) is waited out, for 5 s at most.
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
