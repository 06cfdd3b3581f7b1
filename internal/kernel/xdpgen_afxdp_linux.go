package kernel

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/asavie/xdp"
	"golang.org/x/sys/unix"
)

// XSKSender transmits a FrameTable from an AF_XDP socket bound to one queue
// of an interface, in copy mode (veth has no zero-copy): each sendto makes
// the kernel build skbs of up to 32 TX descriptors and hand them to the
// driver, like AF_PACKET without the copy from user memory per frame.
//
// asavie/xdp sets the socket up (UMEM, rings, bind); its Transmit panics on
// errnos it does not expect (ENETDOWN when the interface goes down, ENXIO,
// EOVERFLOW), so the sender maps the TX and completion rings a second time
// and drives them with its own sendto, with atomic loads and stores on the
// ring indexes. No XDP program is needed to transmit.
//
// It is not safe for concurrent use.
type XSKSender struct {
	sock      *xdp.Socket
	fd        int
	ino       uint64 // the socket's inode, naming its ring mappings
	queue     int
	umem      []byte
	frameSize int
	tx        xskRing // descriptors: unix.XDPDesc
	comp      xskRing // descriptors: uint64 UMEM addresses
	txMap     []byte
	compMap   []byte
	free      []uint64 // UMEM frames in no ring
	table     *FrameTable
	pos       int // cycle position of the next frame
	stop      atomic.Bool
}

// xskRing is a view of one AF_XDP ring: the kernel and the process each own
// one index and read the other's with acquire/release semantics.
type xskRing struct {
	producer, consumer *uint32
	descs              unsafe.Pointer
	mask               uint32
}

// Sizes of a sender's socket: 2048 frames and rings keep the kernel busy
// between kicks (a kick sends at most 32 frames in copy mode).
const (
	xskSendFrames = 2048
	xskSendRing   = 2048
)

// NewXSKSender opens an AF_XDP socket on queue queue of the interface
// ifindex in the calling thread's namespace that sends t from cycle position
// start. It needs CAP_NET_RAW and memory it can lock for the UMEM (4 to 8
// MiB).
func NewXSKSender(ifindex, queue int, t *FrameTable, start uint64) (_ *XSKSender, err error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	frameSize := 2048 // the smallest aligned chunk the kernel takes
	if t.bufLen() > frameSize {
		frameSize = 4096
	}
	opts := xdp.SocketOptions{
		NumFrames:              xskSendFrames,
		FrameSize:              frameSize,
		FillRingNumDescs:       1, // the kernel wants one to bind; never filled
		CompletionRingNumDescs: xskSendRing,
		TxRingNumDescs:         xskSendRing,
	}
	sock, err := newSocket(ifindex, queue, &opts, unix.XDP_COPY)
	for wait := time.Millisecond; err != nil && isErrno(err, unix.EBUSY) && wait <= busyRetry; wait *= 2 {
		time.Sleep(wait) // the queue's previous socket is still being released
		sock, err = newSocket(ifindex, queue, &opts, unix.XDP_COPY)
	}
	if err != nil {
		return nil, socketError(ifindex, queue, false, err)
	}
	s := &XSKSender{sock: sock, fd: sock.FD(), queue: queue, frameSize: frameSize, table: t, pos: int(start % uint64(len(t.Order)))}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		return nil, fmt.Errorf("open AF_XDP sender on queue %d: stat socket: %w", queue, err)
	}
	s.ino = st.Ino
	s.umem = sock.GetFrame(xdp.Desc{Len: uint32(xskSendFrames * frameSize)})
	if err := s.mapRings(); err != nil {
		return nil, fmt.Errorf("open AF_XDP sender on queue %d: %w", queue, err)
	}
	s.free = make([]uint64, xskSendFrames)
	for i := range s.free {
		s.free[i] = uint64(i * frameSize)
	}
	return s, nil
}

// mapRings maps the TX and completion rings for the sender's own use.
func (s *XSKSender) mapRings() error {
	off, err := ringOffsets(s.fd)
	if err != nil {
		return err
	}
	if s.txMap, s.tx, err = mapRing(s.fd, unix.XDP_PGOFF_TX_RING, off.Tx, xskSendRing, unsafe.Sizeof(unix.XDPDesc{})); err != nil {
		return fmt.Errorf("map TX ring: %w", err)
	}
	if s.compMap, s.comp, err = mapRing(s.fd, unix.XDP_UMEM_PGOFF_COMPLETION_RING, off.Cr, xskSendRing, 8); err != nil {
		return fmt.Errorf("map completion ring: %w", err)
	}
	return nil
}

// Queue is the queue the socket is bound to.
func (s *XSKSender) Queue() int { return s.queue }

// Send transmits the next n frames of the cycle and returns how many the
// kernel completed, which is n unless err is set or Stop was called: Send
// waits for the completion of every frame it put in the TX ring. After an error the
// sender's count is off by the frames still in the ring: close it.
func (s *XSKSender) Send(n uint64) (uint64, error) {
	if s.fd < 0 {
		return 0, fmt.Errorf("send with AF_XDP socket: %w", ErrClosed)
	}
	var sent, queued uint64
	for sent < n {
		sent += s.complete()
		if s.stop.Load() {
			// Queue no more; wait for what the ring holds.
			n = queued
		}
		// Fill the TX ring from the free frames.
		prod := *s.tx.producer // only this process writes it
		room := xskSendRing - (prod - atomic.LoadUint32(s.tx.consumer))
		k := min(uint64(len(s.free)), uint64(room), n-queued)
		for range k {
			addr := s.free[len(s.free)-1]
			s.free = s.free[:len(s.free)-1]
			l := s.table.Put(s.umem[addr:addr+uint64(s.frameSize)], s.pos)
			if s.pos++; s.pos == len(s.table.Order) {
				s.pos = 0
			}
			d := (*unix.XDPDesc)(unsafe.Add(s.tx.descs, uintptr(prod&s.tx.mask)*unsafe.Sizeof(unix.XDPDesc{})))
			*d = unix.XDPDesc{Addr: addr, Len: uint32(l)}
			prod++
		}
		atomic.StoreUint32(s.tx.producer, prod)
		queued += k
		if queued == sent {
			continue
		}
		if err := s.kick(); err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// Stop makes a Send in progress return once the frames it queued are
// complete, and every later Send at once. It may be called from any
// goroutine.
func (s *XSKSender) Stop() { s.stop.Store(true) }

// complete takes the completion ring's addresses back into the free list and
// returns how many there were.
func (s *XSKSender) complete() uint64 {
	cons := *s.comp.consumer // only this process writes it
	prod := atomic.LoadUint32(s.comp.producer)
	for i := cons; i != prod; i++ {
		s.free = append(s.free, *(*uint64)(unsafe.Add(s.comp.descs, uintptr(i&s.comp.mask)*8)))
	}
	atomic.StoreUint32(s.comp.consumer, prod)
	return uint64(prod - cons)
}

// kick asks the kernel to transmit what the TX ring holds. A busy or full
// driver queue is no error: the frames stay in the ring for the next kick.
func (s *XSKSender) kick() error {
	for {
		_, _, errno := unix.Syscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0, unix.EAGAIN, unix.EBUSY, unix.ENOBUFS:
			if errno != 0 {
				runtime.Gosched()
			}
			return nil
		case unix.EINTR:
			continue
		default:
			return sendError(fmt.Sprintf("send with AF_XDP socket on queue %d", s.queue), errno)
		}
	}
}

// Close closes the socket and unmaps its rings and UMEM. Closing twice is
// allowed.
func (s *XSKSender) Close() error {
	if s.fd < 0 {
		return nil
	}
	var errs []error
	for _, m := range [][]byte{s.txMap, s.compMap} {
		if m != nil {
			if err := unix.Munmap(m); err != nil {
				errs = append(errs, fmt.Errorf("unmap ring: %w", err))
			}
		}
	}
	s.txMap, s.compMap = nil, nil
	// The library's Close closes the socket and unmaps the UMEM but not the
	// rings it mapped: unmapRings finds those by the socket's inode.
	if err := s.sock.Close(); err != nil {
		errs = append(errs, err)
	}
	s.fd = -1
	if s.ino != 0 {
		if err := unmapRings(s.ino); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close AF_XDP sender on queue %d: %w", s.queue, err)
	}
	return nil
}
