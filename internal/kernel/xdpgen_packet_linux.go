package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PacketSender sends a FrameTable through an AF_PACKET socket bound to one
// interface, 64 frames per sendmmsg, past the interface's qdisc
// (PACKET_QDISC_BYPASS, Linux 3.14): each frame goes straight to the
// driver's transmit function. Its socket has protocol 0, so it never receives.
// A table with Marks sends each frame with its mark (an SO_MARK control
// message, Linux 5.9). It is not safe for concurrent use.
type PacketSender struct {
	fd    int
	table *FrameTable
	pos   int      // cycle position of the next frame
	bufs  [][]byte // one per batch slot, zero past HeadLen
	iovs  []unix.Iovec
	msgs  []unix.Mmsghdr
	oobs  [][]byte // one SO_MARK control message per batch slot, with Marks
	stop  atomic.Bool
}

// packetBatch is the number of frames per sendmmsg call.
const packetBatch = 64

// A Send whose frames the interface refuses (ENOBUFS) spins refusedSpins
// times, then backs off refusedBackoff per try, and fails once nothing has
// gone for refusedLimit.
const (
	refusedSpins   = 1024
	refusedBackoff = 50 * time.Microsecond
	refusedLimit   = 10 * time.Second
)

// NewPacketSender opens an AF_PACKET socket on the interface ifindex of the
// calling thread's namespace that sends t from cycle position start. It needs
// CAP_NET_RAW.
func NewPacketSender(ifindex int, t *FrameTable, start uint64) (*PacketSender, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open packet socket: %w", packetSocketError(err))
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("open packet socket: bypass qdisc: %w (needs Linux 3.14)", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("open packet socket: bind to interface %d: %w", ifindex, err)
	}
	s := &PacketSender{
		fd: fd, table: t, pos: int(start % uint64(len(t.Order))),
		bufs: make([][]byte, packetBatch), iovs: make([]unix.Iovec, packetBatch), msgs: make([]unix.Mmsghdr, packetBatch),
	}
	for i := range s.bufs {
		s.bufs[i] = make([]byte, t.bufLen())
		s.iovs[i].Base = &s.bufs[i][0]
		s.msgs[i].Hdr.Iov = &s.iovs[i]
		s.msgs[i].Hdr.SetIovlen(1)
	}
	if t.Marks != nil {
		s.oobs = make([][]byte, packetBatch)
		for i := range s.oobs {
			s.oobs[i] = make([]byte, unix.CmsgSpace(4))
			h := (*unix.Cmsghdr)(unsafe.Pointer(&s.oobs[i][0]))
			h.Level, h.Type = unix.SOL_SOCKET, unix.SO_MARK
			h.SetLen(unix.CmsgLen(4))
			s.msgs[i].Hdr.Control = &s.oobs[i][0]
			s.msgs[i].Hdr.SetControllen(len(s.oobs[i]))
		}
	}
	return s, nil
}

// Send transmits the next n frames of the cycle and returns how many the
// interface took, which is n unless err is set or Stop was called.
func (s *PacketSender) Send(n uint64) (uint64, error) {
	if s.fd < 0 {
		return 0, fmt.Errorf("send with packet socket: %w", ErrClosed)
	}
	var sent uint64
	var refused int     // refusals in a row
	var since time.Time // when the refusals went past refusedSpins
	for sent < n && !s.stop.Load() {
		k := int(min(n-sent, packetBatch))
		pos := s.pos
		for i := range k {
			s.iovs[i].SetLen(s.table.Put(s.bufs[i], pos))
			if s.oobs != nil {
				binary.NativeEndian.PutUint32(s.oobs[i][unix.CmsgLen(0):], s.table.Marks[s.table.Order[pos]])
			}
			if pos++; pos == len(s.table.Order) {
				pos = 0
			}
		}
		for done := 0; done < k; {
			m, errno := sendmmsg(s.fd, s.msgs[done:k])
			switch errno {
			case 0:
				done += m
				sent += uint64(m)
				refused = 0
				continue
			case unix.EINTR:
				continue
			case unix.ENOBUFS, unix.EAGAIN:
				// The driver's queue is full (veth stops it while the
				// other end's ring is full; a tap refuses the frame while
				// its reader's queue is): let the receiver run, unless
				// the send was stopped or nothing has gone for
				// refusedLimit: a receiver that takes nothing must not
				// hold the sender forever.
				if s.stop.Load() {
					s.pos = (s.pos + done) % len(s.table.Order)
					return sent, nil
				}
				if refused++; refused == refusedSpins {
					since = time.Now()
				}
				if refused > refusedSpins {
					if time.Since(since) > refusedLimit {
						s.pos = (s.pos + done) % len(s.table.Order)
						return sent, fmt.Errorf("send with packet socket: the interface refused every frame for %v: %w (%w)", refusedLimit, ErrReceiverStalled, errno)
					}
					// A receiver that shares the CPUs (an emulator
					// behind a tap) needs them more than a spinning sender.
					time.Sleep(refusedBackoff)
				} else {
					runtime.Gosched()
				}
				continue
			}
			s.pos = (s.pos + done) % len(s.table.Order)
			return sent, sendError("send with packet socket", errno)
		}
		s.pos = pos
	}
	return sent, nil
}

// Stop makes a Send in progress return after its current batch, and every
// later Send at once. It may be called from any goroutine.
func (s *PacketSender) Stop() { s.stop.Store(true) }

// sendmmsg sends msgs and returns how many went, or the errno of the first
// that failed when none did.
func sendmmsg(fd int, msgs []unix.Mmsghdr) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), uintptr(len(msgs)), 0, 0, 0)
	runtime.KeepAlive(msgs)
	return int(n), errno
}

// sendError explains an errno of a transmit path.
func sendError(what string, errno unix.Errno) error {
	switch errno {
	case unix.ENETDOWN:
		return fmt.Errorf("%s: the interface is down: %w", what, errno)
	case unix.ENXIO, unix.ENODEV:
		return fmt.Errorf("%s: the interface is gone: %w", what, errno)
	case unix.EMSGSIZE:
		return fmt.Errorf("%s: a frame is longer than the interface's MTU allows: %w", what, errno)
	default:
		return fmt.Errorf("%s: %w", what, errno)
	}
}

// Close closes the socket. Closing twice is allowed.
func (s *PacketSender) Close() error {
	if s.fd < 0 {
		return nil
	}
	err := unix.Close(s.fd)
	s.fd = -1
	if err != nil && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("close packet socket: %w", err)
	}
	return nil
}
