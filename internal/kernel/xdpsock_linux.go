package kernel

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/asavie/xdp"
	"golang.org/x/sys/unix"
)

// XSKHeadroom is the space the kernel keeps before each received frame in
// its UMEM frame (XDP_PACKET_HEADROOM): a frame of FrameSize bytes holds a
// packet of at most FrameSize - XSKHeadroom bytes.
const XSKHeadroom = unix.XDP_PACKET_HEADROOM

// XSKConfig sizes an AF_XDP socket. A zero field takes its default.
type XSKConfig struct {
	// Frames is the number of UMEM frames (default DefaultXSKFrames).
	Frames int
	// FrameSize is the size of one frame, a power of two from 2048 to the
	// page size: the kernel's aligned chunk mode (default DefaultXSKFrameSize).
	FrameSize int
	// RingSize is the number of entries in the fill and RX rings, a power of
	// two (default DefaultXSKRingSize).
	RingSize int
	// ZeroCopy binds with XDP_ZEROCOPY, letting the driver DMA into the UMEM;
	// drivers without AF_XDP zero-copy support, veth among them, refuse it.
	// Without it the socket binds with XDP_COPY, which every driver takes.
	ZeroCopy bool
}

// WithDefaults fills c's zero fields and checks the rest.
func (c XSKConfig) WithDefaults() (XSKConfig, error) {
	if c.Frames == 0 {
		c.Frames = DefaultXSKFrames
	}
	if c.FrameSize == 0 {
		c.FrameSize = DefaultXSKFrameSize
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultXSKRingSize
	}
	switch page := os.Getpagesize(); {
	case c.FrameSize < 2048 || c.FrameSize > page || c.FrameSize&(c.FrameSize-1) != 0:
		return c, fmt.Errorf("frame size %d: want a power of two from 2048 to the page size, %d", c.FrameSize, page)
	case c.RingSize <= 0 || c.RingSize&(c.RingSize-1) != 0:
		return c, fmt.Errorf("ring size %d: want a power of two", c.RingSize)
	case c.Frames <= 0 || uint64(c.Frames)*uint64(c.FrameSize) > 1<<32-1:
		// GetFrame's Desc.Len, which views the whole UMEM, is 32 bits.
		return c, fmt.Errorf("%d frames of %d bytes: want from 1 frame to 4 GiB", c.Frames, c.FrameSize)
	}
	return c, nil
}

// XSK is one AF_XDP socket bound to one receive queue, with a UMEM of its own,
// a fill ring and an RX ring (no TX or completion traffic). One goroutine calls
// Receive, Frame and Wait; Wake and Statistics may be called from any
// goroutine until Close or Shutdown.
//
// It is built on asavie/xdp v0.3.3's Socket, whose traps it works around:
//
//   - NewSocket takes its bind flags from a package variable
//     (DefaultSocketFlags): NewXSK sets it under a lock.
//   - Close, and every failing NewSocket after the rings were mapped, unmap
//     the UMEM but not the rings, and a ring mapping holds the socket open:
//     the socket stays bound and its queue busy (EBUSY on the next bind)
//     until the process exits. XSK unmaps the rings itself (unmapRings).
//   - Receive and Fill copy descriptors through slices and a bitmap of free
//     frames, and read both of the kernel's ring indexes on every call, each
//     a cache line that the kernel's CPU writes (Receive marks its frames
//     free at once, too, and GetDescs scans the whole UMEM). XSK maps the
//     fill and RX rings a second time and drives them itself, as libxdp
//     does: it keeps its own stack of free frames, gives a batch back to
//     the fill ring only on the next Receive, when the caller is done with
//     it, and reads an index of the kernel's only when its last reading no
//     longer covers what it needs.
//   - Program.Attach first removes whatever program the interface runs,
//     someone else's too, and attaches through netlink, which a killed
//     process leaves attached; Detach removes without a mode flag, which
//     misses a generic-mode program, then waits in a loop for it to go: it
//     hangs. XSKRedirect replaces the library's program and attach.
//   - Transmit panics on an unexpected errno: XSK has no TX ring.
//   - XSK's ring indexes are read and written with atomic loads and stores
//     (the library's have no barriers), and it uses no need_wakeup: in copy
//     mode the kernel fills the RX ring from its softirq and never needs a
//     wakeup to receive.
type XSK struct {
	fd        int
	queue     int
	ifindex   int
	ino       uint64         // the socket's inode, naming its ring mappings in /proc/self/maps
	umem      []byte         // the whole UMEM, for unmapping it
	chunkMask uint64         // clears the offset within a frame from an address
	free      []uint64       // UMEM addresses of frames in no ring and not handed out, a stack
	held      []unix.XDPDesc // the frames of the last Receive
	// The fill ring (descriptors: uint64 UMEM addresses) and the RX ring
	// (unix.XDPDesc), mapped by XSK (ringMaps); this process owns the fill
	// ring's producer and the RX ring's consumer.
	fill, rx xskRing
	ringMaps [2][]byte
	// The kernel's indexes as last read: the fill ring's consumer and the
	// RX ring's producer.
	fillCons, rxProd uint32
	wake             int // eventfd that ends a Wait
	pfds             [2]unix.PollFd
	metadata         bool // frames carry XDPMetadata (xdpmeta_linux.go)
}

// bindMu serializes xdp.NewSocket, which reads its bind flags from
// xdp.DefaultSocketFlags, a package variable.
var bindMu sync.Mutex

// NewXSK opens an AF_XDP socket, bound to receive queue queue of interface
// ifindex, with a UMEM of its own, and puts as many frames in the fill ring as
// it takes. Frames arrive only once an XDP program redirects the queue's
// frames to it (XSKRedirect.Register).
func NewXSK(ifindex, queue int, cfg XSKConfig) (_ *XSK, err error) {
	cfg, err = cfg.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("open AF_XDP socket: %w", err)
	}
	opts := xdp.SocketOptions{
		NumFrames:              cfg.Frames,
		FrameSize:              cfg.FrameSize,
		FillRingNumDescs:       cfg.RingSize,
		CompletionRingNumDescs: 1, // the kernel wants one to bind; no TX, so unused
		RxRingNumDescs:         cfg.RingSize,
	}
	flags := uint16(unix.XDP_COPY)
	if cfg.ZeroCopy {
		flags = unix.XDP_ZEROCOPY
	}
	sock, err := newSocket(ifindex, queue, &opts, flags)
	// The kernel lets go of a closed socket's queue from a work queue, after
	// an RCU grace period (xsk_destruct, xp_put_pool, xp_release_deferred):
	// for a moment after a Close the queue is still busy. Measured on 6.18:
	// a few milliseconds.
	for wait := time.Millisecond; err != nil && isErrno(err, unix.EBUSY) && wait <= busyRetry; wait *= 2 {
		time.Sleep(wait)
		sock, err = newSocket(ifindex, queue, &opts, flags)
	}
	if err != nil {
		return nil, socketError(ifindex, queue, cfg.ZeroCopy, err)
	}
	s := &XSK{fd: sock.FD(), queue: queue, ifindex: ifindex, wake: -1, chunkMask: ^uint64(cfg.FrameSize - 1)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(s.fd, &st); err != nil {
		return nil, fmt.Errorf("open AF_XDP socket: stat: %w", err)
	}
	s.ino = st.Ino
	// GetFrame views any range of the UMEM: this one is all of it.
	s.umem = sock.GetFrame(xdp.Desc{Addr: 0, Len: uint32(cfg.Frames * cfg.FrameSize)})
	if s.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("open AF_XDP socket: eventfd: %w", err)
	}
	s.pfds = [2]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
	if err := s.mapRings(uint32(cfg.RingSize)); err != nil {
		return nil, fmt.Errorf("open AF_XDP socket on %s queue %d: %w", ifname(ifindex), queue, err)
	}
	s.held = make([]unix.XDPDesc, 0, cfg.RingSize)
	s.free = make([]uint64, cfg.Frames)
	for i := range s.free {
		// Pushed in reverse so that frame 0 is handed to the kernel first.
		s.free[i] = uint64(cfg.Frames-1-i) * uint64(cfg.FrameSize)
	}
	s.refill()
	return s, nil
}

// mapRings maps the socket's fill and RX rings, of size entries each, for
// XSK's own use.
func (s *XSK) mapRings(size uint32) error {
	off, err := ringOffsets(s.fd)
	if err != nil {
		return err
	}
	if s.ringMaps[0], s.fill, err = mapRing(s.fd, unix.XDP_UMEM_PGOFF_FILL_RING, off.Fr, size, 8); err != nil {
		return fmt.Errorf("map fill ring: %w", err)
	}
	if s.ringMaps[1], s.rx, err = mapRing(s.fd, unix.XDP_PGOFF_RX_RING, off.Rx, size, unsafe.Sizeof(unix.XDPDesc{})); err != nil {
		return fmt.Errorf("map RX ring: %w", err)
	}
	s.fillCons = atomic.LoadUint32(s.fill.consumer)
	s.rxProd = atomic.LoadUint32(s.rx.producer)
	return nil
}

// ringOffsets reads where the producer, consumer and descriptors of each of
// the AF_XDP socket fd's rings lie in their mappings.
func ringOffsets(fd int) (unix.XDPMmapOffsets, error) {
	var off unix.XDPMmapOffsets
	size := uint32(unsafe.Sizeof(off))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, unix.XDP_MMAP_OFFSETS,
		uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&size)), 0)
	if errno != 0 {
		return off, fmt.Errorf("read ring offsets: %w", errno)
	}
	return off, nil
}

// mapRing maps the ring of socket fd at page offset pgoff, laid out as off
// says, of entries descriptors of entrySize bytes, and returns the mapping
// and a view of it.
func mapRing(fd int, pgoff int64, off unix.XDPRingOffset, entries uint32, entrySize uintptr) ([]byte, xskRing, error) {
	m, err := unix.Mmap(fd, pgoff, int(off.Desc+uint64(entries)*uint64(entrySize)), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, xskRing{}, err
	}
	base := unsafe.Pointer(&m[0])
	return m, xskRing{
		producer: (*uint32)(unsafe.Add(base, off.Producer)),
		consumer: (*uint32)(unsafe.Add(base, off.Consumer)),
		descs:    unsafe.Add(base, off.Desc),
		mask:     entries - 1,
	}, nil
}

// newSocket is xdp.NewSocket with the given bind flags; when it fails after
// mapping the rings, it unmaps them (the library leaves them mapped).
func newSocket(ifindex, queue int, opts *xdp.SocketOptions, flags uint16) (*xdp.Socket, error) {
	bindMu.Lock()
	defer bindMu.Unlock()
	before, _ := socketMappings()
	xdp.DefaultSocketFlags = flags
	sock, err := xdp.NewSocket(ifindex, queue, opts)
	xdp.DefaultSocketFlags = 0
	if err != nil {
		unmapOrphanedRings(before)
	}
	return sock, err
}

// busyRetry bounds the wait for a queue that is busy: about a second in all.
const busyRetry = 512 * time.Millisecond

// isErrno tells whether err, from asavie/xdp, is errno e. The library
// formats errnos with %v, so errors.Is cannot find them: their text can.
func isErrno(err error, e unix.Errno) bool {
	return errors.Is(err, e) || strings.Contains(err.Error(), e.Error())
}

// socketError explains a failed socket setup.
func socketError(ifindex, queue int, zeroCopy bool, err error) error {
	name := ifname(ifindex)
	has := func(e unix.Errno) bool { return isErrno(err, e) }
	switch {
	case has(unix.EPERM) || has(unix.EACCES):
		return fmt.Errorf("open AF_XDP socket on %s queue %d: %w: needs CAP_NET_RAW; run as root: %w", name, queue, ErrNotPermitted, err)
	case zeroCopy && has(unix.EOPNOTSUPP):
		return fmt.Errorf("open AF_XDP socket on %s queue %d: %w: the driver has no AF_XDP zero-copy (veth never has; virtio-net from Linux 6.13); drop --zero-copy (copy mode): %w", name, queue, ErrNotSupported, err)
	case has(unix.EBUSY):
		return fmt.Errorf("open AF_XDP socket on %s queue %d: another AF_XDP socket is bound to the queue (still after %v): %w", name, queue, 2*busyRetry, err)
	case has(unix.ENOBUFS) || has(unix.ENOMEM):
		return fmt.Errorf("open AF_XDP socket on %s queue %d: cannot lock the UMEM in memory: grant CAP_IPC_LOCK, raise RLIMIT_MEMLOCK (ulimit -l) or use fewer frames: %w", name, queue, err)
	case has(unix.EAFNOSUPPORT):
		return fmt.Errorf("open AF_XDP socket on %s queue %d: %w: the kernel has no AF_XDP (CONFIG_XDP_SOCKETS, Linux 4.18): %w", name, queue, ErrNotSupported, err)
	default:
		return fmt.Errorf("open AF_XDP socket on %s queue %d: %w", name, queue, err)
	}
}

// Queue is the receive queue the socket is bound to.
func (s *XSK) Queue() int { return s.queue }

// Receive gives the frames of the previous Receive back to the fill ring,
// refills it, and takes up to max frames off the RX ring. It returns their
// number, n; Frame(0) to Frame(n-1) are valid until the next Receive, Shutdown
// or Close. It never blocks: see Wait.
func (s *XSK) Receive(max int) int {
	if len(s.held) > 0 {
		for _, d := range s.held {
			if s.metadata {
				s.forgetMetadata(d.Addr)
			}
			s.free = append(s.free, d.Addr&s.chunkMask)
		}
		s.held = s.held[:0]
		// The kernel takes fill entries only for the frames it receives,
		// which come back through the RX ring, and the last refill placed
		// every free frame or found the ring full: with nothing given
		// back, a refill has nothing to give.
		s.refill()
	}
	cons := *s.rx.consumer // only this process writes it
	if max <= 0 {
		return 0
	}
	if s.rxProd-cons < uint32(max) {
		// Short of a full batch: the kernel may have added more since.
		if s.rxProd = atomic.LoadUint32(s.rx.producer); s.rxProd == cons {
			return 0
		}
	}
	n := min(uint32(max), s.rxProd-cons, uint32(cap(s.held)))
	for i := range n {
		s.held = append(s.held, *(*unix.XDPDesc)(unsafe.Add(s.rx.descs, uintptr((cons+i)&s.rx.mask)*unsafe.Sizeof(unix.XDPDesc{}))))
	}
	atomic.StoreUint32(s.rx.consumer, cons+n)
	return int(n)
}

// refill puts as many free frames in the fill ring as it has room for, taken
// from the top of the free stack. It reads the kernel's consumer index only
// when the room its last reading left is less than the free frames.
func (s *XSK) refill() {
	prod := *s.fill.producer // only this process writes it
	size := s.fill.mask + 1
	room := size - (prod - s.fillCons)
	if int(room) < len(s.free) {
		s.fillCons = atomic.LoadUint32(s.fill.consumer)
		room = size - (prod - s.fillCons)
	}
	n := min(int(room), len(s.free))
	if n == 0 {
		return
	}
	top := len(s.free) - 1
	for i := range n {
		*(*uint64)(unsafe.Add(s.fill.descs, uintptr((prod+uint32(i))&s.fill.mask)*8)) = s.free[top-i]
	}
	s.free = s.free[:len(s.free)-n]
	atomic.StoreUint32(s.fill.producer, prod+uint32(n))
}

// Frame is frame i of the last Receive, a view into the UMEM valid until the
// next Receive.
func (s *XSK) Frame(i int) []byte {
	d := s.held[i]
	return s.umem[d.Addr : d.Addr+uint64(d.Len) : d.Addr+uint64(d.Len)]
}

// heldFrames is the number of frames of the last Receive; Free the number of
// frames the socket holds back from the kernel (neither handed out nor in a
// ring). Frames - Free - heldFrames are in the kernel's fill and RX rings.
func (s *XSK) heldFrames() int { return len(s.held) }

// Free: see heldFrames.
func (s *XSK) Free() int { return len(s.free) }

// Pending is the number of frames the kernel has put on the RX ring that no
// Receive has taken yet. It may be called until Close or Shutdown, by the
// goroutine that calls Receive or under the same lock.
func (s *XSK) Pending() int {
	if s.fd < 0 {
		return 0
	}
	return int(atomic.LoadUint32(s.rx.producer) - *s.rx.consumer)
}

// Wait blocks in poll(2) until the RX ring has frames or Wake is called.
func (s *XSK) Wait() error {
	_, err := s.WaitFor(-1)
	return err
}

// WaitFor is Wait for at most timeout (a negative timeout waits without
// end); woken is false when the time ran out.
func (s *XSK) WaitFor(timeout time.Duration) (woken bool, err error) {
	ms := -1
	if timeout >= 0 {
		ms = int(timeout.Milliseconds())
	}
	for {
		n, err := unix.Poll(s.pfds[:], ms)
		if err == nil {
			if s.pfds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				return true, fmt.Errorf("poll AF_XDP socket of queue %d: events %#x: the socket failed (its interface gone?)", s.queue, s.pfds[0].Revents)
			}
			return n > 0, nil
		}
		if err != unix.EINTR {
			return false, fmt.Errorf("poll AF_XDP socket of queue %d: %w", s.queue, err)
		}
	}
}

// Alive reports whether the socket still receives: an error wrapping
// ErrInterfaceGone when its interface was deleted. The kernel then unbinds
// the socket, whose poll(2) no longer reports anything (xsk_poll of an
// unbound socket), and sets its error to ENETDOWN (xsk_notifier).
func (s *XSK) Alive() error {
	soErr, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr == int(unix.ENETDOWN) {
		return fmt.Errorf("AF_XDP socket of queue %d: %w (the socket reports ENETDOWN)", s.queue, ErrInterfaceGone)
	}
	if _, err := net.InterfaceByIndex(s.ifindex); err != nil && strings.Contains(err.Error(), "no such network interface") {
		return fmt.Errorf("AF_XDP socket of queue %d: %w (no interface of index %d)", s.queue, ErrInterfaceGone, s.ifindex)
	}
	return nil
}

// Wake ends a Wait in progress, and every later Wait at once: the wake-up
// stays set. It may be called from any goroutine until Close or Shutdown.
func (s *XSK) Wake() error {
	one := [8]byte{1}
	if _, err := unix.Write(s.wake, one[:]); err != nil && err != unix.EAGAIN {
		return fmt.Errorf("wake AF_XDP socket of queue %d: %w", s.queue, err)
	}
	return nil
}

// XSKStatistics are an AF_XDP socket's kernel counters (struct
// xdp_statistics; the last three need Linux 5.9 and read zero before).
type XSKStatistics struct {
	RxDropped            uint64 // dropped for other reasons (a frame too large for its UMEM frame, say)
	RxInvalidDescs       uint64 // dropped: an invalid descriptor in the fill ring
	TxInvalidDescs       uint64
	RxRingFull           uint64 // dropped: the RX ring was full
	RxFillRingEmptyDescs uint64 // times the fill ring had no frame for the kernel
	TxRingEmptyDescs     uint64
}

// Statistics reads the socket's kernel counters (getsockopt XDP_STATISTICS).
// It may be called from any goroutine until Close or Shutdown.
func (s *XSK) Statistics() (XSKStatistics, error) {
	var st unix.XDPStatistics
	size := uint32(unsafe.Sizeof(st))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.fd), unix.SOL_XDP, unix.XDP_STATISTICS,
		uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&size)), 0)
	if errno != 0 {
		return XSKStatistics{}, fmt.Errorf("read AF_XDP statistics of queue %d: %w", s.queue, errno)
	}
	return XSKStatistics{st.Rx_dropped, st.Rx_invalid_descs, st.Tx_invalid_descs,
		st.Rx_ring_full, st.Rx_fill_ring_empty_descs, st.Tx_ring_empty_descs}, nil
}

// Shutdown closes the socket and unmaps its rings, which unbinds it from its
// queue and takes it out of any XSKMAP, but leaves the UMEM mapped: frames
// handed out by the last Receive stay readable until Close. It is safe to call
// more than once.
func (s *XSK) Shutdown() error {
	if s.fd < 0 {
		return nil
	}
	var errs []error
	for i, m := range s.ringMaps {
		if m != nil {
			if err := unix.Munmap(m); err != nil {
				errs = append(errs, fmt.Errorf("unmap ring of queue %d: %w", s.queue, err))
			}
			s.ringMaps[i] = nil
		}
	}
	if err := unix.Close(s.fd); err != nil {
		errs = append(errs, fmt.Errorf("close AF_XDP socket of queue %d: %w", s.queue, err))
	}
	s.fd = -1
	// The library's Close would also unmap the UMEM: it is not called.
	if err := unmapRings(s.ino); err != nil {
		errs = append(errs, fmt.Errorf("close AF_XDP socket of queue %d: %w", s.queue, err))
	}
	if s.wake >= 0 {
		unix.Close(s.wake)
		s.wake = -1
	}
	s.held, s.free = nil, nil
	return errors.Join(errs...)
}

// Close shuts the socket down (see Shutdown) and unmaps its UMEM: frames
// handed out are invalid from then on. It is safe to call more than once.
func (s *XSK) Close() error {
	err := s.Shutdown()
	if s.umem != nil {
		// The library mapped the UMEM with syscall.Mmap, whose books
		// syscall.Munmap keeps.
		if uerr := syscall.Munmap(s.umem); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unmap UMEM of queue %d: %w", s.queue, uerr))
		}
		s.umem = nil
	}
	return err
}

// socketMapping is a mapping of a socket's file in /proc/self/maps: AF_XDP
// rings, or an AF_PACKET ring.
type socketMapping struct {
	start, end uintptr
	ino        uint64
}

// socketMappings lists the mappings of sockets in this process.
func socketMappings() ([]socketMapping, error) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	var out []socketMapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 7f83956fb000-7f83956fc000 rw-s 100000000 00:09 51675   socket:[51675]
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], "socket:[") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		ino, err3 := strconv.ParseUint(f[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, socketMapping{uintptr(start), uintptr(end), ino})
	}
	return out, sc.Err()
}

// unmapRings unmaps every mapping of the socket whose inode is ino: the
// rings asavie/xdp mapped and never unmaps.
func unmapRings(ino uint64) error {
	maps, err := socketMappings()
	if err != nil {
		return fmt.Errorf("find ring mappings: %w", err)
	}
	var errs []error
	for _, m := range maps {
		if m.ino == ino {
			if err := munmap(m.start, m.end-m.start); err != nil {
				errs = append(errs, fmt.Errorf("unmap ring at %#x: %w", m.start, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmapOrphanedRings unmaps the socket mappings that were not in before and
// whose socket no file descriptor of this process holds: those a failed
// xdp.NewSocket left behind after closing its socket.
func unmapOrphanedRings(before []socketMapping) {
	after, err := socketMappings()
	if err != nil {
		return
	}
	open := openSocketInodes()
	for _, m := range after {
		if open[m.ino] || containsMapping(before, m) {
			continue
		}
		_ = munmap(m.start, m.end-m.start)
	}
}

func containsMapping(ms []socketMapping, m socketMapping) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// openSocketInodes is the set of inodes of the sockets this process has file
// descriptors for.
func openSocketInodes() map[uint64]bool {
	open := map[uint64]bool{}
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(target, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				open[ino] = true
			}
		}
	}
	return open
}

// munmap unmaps a range the syscall package mapped, bypassing its books: the
// entry it keeps for the range is never looked up again.
func munmap(addr, length uintptr) error {
	_, _, errno := unix.Syscall(unix.SYS_MUNMAP, addr, length, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
