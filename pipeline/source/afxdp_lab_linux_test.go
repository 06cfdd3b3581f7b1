package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/vethlab"
)

// openSource opens an AF_XDP source, closed when the test ends.
func openSource(tb testing.TB, cfg AFXDPConfig) *AFXDP {
	tb.Helper()
	src, err := OpenAFXDP(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := src.Close(); err != nil {
			tb.Error(err)
		}
	})
	return src.(*AFXDP)
}

// xdpAttached tells whether `ip link show dev IF` shows an XDP program.
func xdpAttached(tb testing.TB, iface string) bool {
	tb.Helper()
	return xdpShown(tb, iface) != ""
}

// xdpShown is the XDP attachment `ip link show dev IF` shows: "xdp" for
// native mode, "xdpgeneric" for generic mode, "" for none.
func xdpShown(tb testing.TB, iface string) string {
	tb.Helper()
	out, err := exec.Command("ip", "link", "show", "dev", iface).CombinedOutput()
	if err != nil {
		tb.Fatalf("ip link show dev %s: %v: %s", iface, err, out)
	}
	// 5: xhl1h@if4: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 xdpgeneric qdisc ...
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "xdp") {
			return f
		}
	}
	return ""
}

// peerSender sends frames out of a lab's Peer end through an AF_PACKET
// socket opened inside the lab's namespace, so that they arrive on Host.
type peerSender struct {
	fd   int
	msgs []mmsghdr
	iovs []unix.Iovec
}

// mmsghdr is struct mmsghdr, sendmmsg(2)'s array element.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// senderBatch is the most frames one sendmmsg call sends.
const senderBatch = 64

func newPeerSender(tb testing.TB, lab *vethlab.Lab) *peerSender {
	tb.Helper()
	s := &peerSender{fd: -1, msgs: make([]mmsghdr, senderBatch), iovs: make([]unix.Iovec, senderBatch)}
	err := lab.InPeer(func() error {
		// Protocol 0: the socket sends and never receives.
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open AF_PACKET socket: %w", err)
		}
		s.fd = fd
		// No PACKET_QDISC_BYPASS: with it the kernel picks the transmit
		// queue, and so Host's receive queue, by the sending CPU
		// (packet_pick_tx_queue); without it by the flow hash, which
		// spreads the frames over the queues.
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}); err != nil {
			return fmt.Errorf("bind AF_PACKET socket to %s: %w", lab.Peer, err)
		}
		return nil
	})
	if err != nil {
		if s.fd >= 0 {
			unix.Close(s.fd)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Close(s.fd) })
	return s
}

// send sends frames, up to senderBatch per system call, and returns how many
// the kernel took. A full device queue (ENOBUFS) ends the call early.
func (s *peerSender) send(frames [][]byte) (int, error) {
	sent := 0
	for sent < len(frames) {
		n := min(len(frames)-sent, senderBatch)
		for i := range n {
			f := frames[sent+i]
			s.iovs[i] = unix.Iovec{Base: &f[0], Len: uint64(len(f))}
			s.msgs[i] = mmsghdr{hdr: unix.Msghdr{Iov: &s.iovs[i], Iovlen: 1}}
		}
		r, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&s.msgs[0])), uintptr(n), 0, 0, 0)
		if errno != 0 {
			if errno == unix.ENOBUFS || errno == unix.EAGAIN {
				return sent, nil
			}
			return sent, fmt.Errorf("sendmmsg: %w", errno)
		}
		sent += int(r)
	}
	return sent, nil
}

// sendAll sends every frame, retrying what a full device queue refused, and
// fails the test if that takes longer than a few seconds.
func (s *peerSender) sendAll(tb testing.TB, frames [][]byte) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(frames) > 0 {
		n, err := s.send(frames)
		if err != nil {
			tb.Fatal(err)
		}
		frames = frames[n:]
		if n == 0 {
			if time.Now().After(deadline) {
				tb.Fatalf("sending: %d frames left after 5 s", len(frames))
			}
			time.Sleep(time.Millisecond) // a full device queue signals nothing
		}
	}
}

// Each test frame ends in a tag: tagMagic, then a sequence number, both
// big-endian uint32. Trailing bytes after the last header change no parse.
const (
	tagMagic = 0x78647870 // "xdxp"
	tagLen   = 8
)

// taggedFrames returns copies of every corpus base frame, rounds times over,
// each with a unique sequence number in its tag: the sequence number is the
// frame's index in the result.
func taggedFrames(rounds int) [][]byte {
	bases := corpus.Bases()
	out := make([][]byte, 0, rounds*len(bases))
	for range rounds {
		for _, b := range bases {
			f := append([]byte(nil), b.Data...)
			f = binary.BigEndian.AppendUint32(f, tagMagic)
			f = binary.BigEndian.AppendUint32(f, uint32(len(out)))
			out = append(out, f)
		}
	}
	return out
}

// frameSeq returns a tagged frame's sequence number.
func frameSeq(f []byte) (int, bool) {
	if len(f) < tagLen || binary.BigEndian.Uint32(f[len(f)-tagLen:]) != tagMagic {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(f[len(f)-4:])), true
}

// received is a frame as a receiver saw it.
type received struct {
	queue int
	frame []byte
}

// collect receives on every queue of src, copying each frame, until want
// frames arrived or timeout passed; it closes src and returns what came.
// start sends; its argument waits until n frames have arrived in all, for
// timeout at most, and returns how many have.
func collect(tb testing.TB, src *AFXDP, want int, timeout time.Duration, start func(wait func(n int, timeout time.Duration) int)) []received {
	tb.Helper()
	type result struct {
		frames []received
		err    error
	}
	results := make(chan result, len(src.Queues()))
	total := make(chan int, 1)
	total <- 0
	done := make(chan struct{})
	var doneOnce sync.Once
	progress := make(chan struct{}, 1) // a receiver added to total
	for _, q := range src.Queues() {
		go func() {
			var r result
			b := NewBatch(32)
			for {
				if r.err = q.Receive(b); r.err != nil {
					break
				}
				for _, f := range b.Frames {
					r.frames = append(r.frames, received{q.Queue(), append([]byte(nil), f...)})
				}
				n := <-total + b.Len()
				total <- n
				select {
				case progress <- struct{}{}:
				default:
				}
				if n >= want {
					doneOnce.Do(func() { close(done) })
				}
			}
			results <- r
		}()
	}
	start(func(n int, timeout time.Duration) int {
		expire := time.NewTimer(timeout)
		defer expire.Stop()
		for {
			got := <-total
			total <- got
			if got >= n {
				return got
			}
			select {
			case <-progress:
			case <-expire.C:
				return got
			}
		}
	})
	select {
	case <-done:
	case <-time.After(timeout):
	}
	if err := src.Close(); err != nil {
		tb.Error(err)
	}
	var all []received
	for range src.Queues() {
		r := <-results
		if !errors.Is(r.err, ErrClosed) {
			tb.Errorf("Receive: %v, want ErrClosed after Close", r.err)
		}
		all = append(all, r.frames...)
	}
	return all
}
