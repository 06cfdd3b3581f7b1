package source

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
)

// AFXDP is a Source of AF_XDP sockets, one per chosen receive queue of an
// interface, fed by an XDP program that redirects each queue's frames to its
// socket and passes the other queues' frames on to the kernel's stack.
// OpenAFXDP returns one.
//
// The program is attached through a BPF link (Linux 5.9), which the kernel
// detaches when the process dies, SIGKILL included; on older kernels it is
// attached through netlink and only Close detaches it (ViaLink says which).
type AFXDP struct {
	iface    string
	mode     XDPMode
	rxMode   RxMode
	viaLink  bool
	redirect *kernel.XSKRedirect
	choice   kernel.RedirectChoice
	queues   []*afxdpQueue
	sources  []QueueSource

	closed atomic.Bool // set first thing in Close: Receive calls return
	// stopping is set by Stop: Receive takes what its ring holds, at most
	// drainMax frames, and then returns ErrClosed.
	stopping atomic.Bool
	drainMax int
	closeMu  sync.Mutex
	isClosed bool // guarded by closeMu
	closeErr error
}

// afxdpQueue is one queue's socket.
type afxdpQueue struct {
	src   *AFXDP
	xsk   *kernel.XSK
	queue int
	batch int
	spin  bool
	clock Clock

	// mu is held by Receive from start to end, so that Close, which takes
	// it, never tears the socket down under a Receive.
	mu sync.Mutex
	// holding: the caller has the frames of the last batch (guarded by mu).
	holding bool
	// shut: Close has closed the socket (guarded by mu). When the caller
	// held a batch then, the UMEM stays mapped until its next Receive.
	shut bool
	// checked is the clock when Receive last checked that the interface
	// exists (guarded by mu).
	checked int64
	// drained is the frames handed out since Stop (guarded by mu).
	drained int

	// Counted per batch, read by Stats from any goroutine.
	frames, bytes atomic.Uint64

	// statsMu keeps Close from closing the socket under Stats' getsockopt.
	statsMu sync.Mutex
	final   *QueueStats // guarded by statsMu: the counters at Close
}

// OpenAFXDP opens AF_XDP sockets on cfg.Queues of cfg.Iface and attaches the
// XDP program that feeds them. Errors say what to do: a missing interface or
// queue, missing privileges (CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW, or
// root), a driver without native XDP or zero-copy. Everything set up is
// undone when it fails, and by Close.
func OpenAFXDP(cfg AFXDPConfig) (Source, error) {
	s, err := openAFXDP(cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func openAFXDP(cfg AFXDPConfig) (_ *AFXDP, err error) {
	autoFrameSize := cfg.FrameSize == 0
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("open AF_XDP: %w", err)
	}
	xcfg := kernel.XSKConfig{Frames: cfg.Frames, FrameSize: cfg.FrameSize, RingSize: cfg.RingSize, ZeroCopy: cfg.ZeroCopy}
	if _, err := xcfg.WithDefaults(); err != nil {
		return nil, fmt.Errorf("open AF_XDP: %w: %w", ErrAFXDPConfig, err)
	}
	ifi, err := net.InterfaceByName(cfg.Iface)
	if err != nil {
		return nil, fmt.Errorf("open AF_XDP on %s: %w: see `ip link`", cfg.Iface, ErrNoInterface)
	}
	n, err := kernel.RXQueues(cfg.Iface)
	if err != nil {
		return nil, fmt.Errorf("open AF_XDP on %s: %w", cfg.Iface, err)
	}
	queues := cfg.Queues
	if queues == nil {
		queues = make([]int, n)
		for i := range queues {
			queues[i] = i
		}
	}
	if len(queues) == 0 {
		return nil, fmt.Errorf("open AF_XDP on %s: %w: an empty queue list", cfg.Iface, ErrAFXDPConfig)
	}
	for _, q := range queues {
		if q < 0 || q >= n {
			return nil, fmt.Errorf("open AF_XDP on %s: %w: queue %d does not exist on %s (it has %d RX queues, 0-%d): choose queues in that range, or all", cfg.Iface, ErrNoQueue, q, cfg.Iface, n, n-1)
		}
	}
	// Room for the MTU, an Ethernet header with one VLAN tag, and the
	// kernel's headroom: a larger frame is dropped (rx_dropped).
	need := ifi.MTU + 18 + kernel.XSKHeadroom
	page := os.Getpagesize()
	if autoFrameSize && need > cfg.FrameSize && LargeAFXDPFrameSize <= page {
		cfg.FrameSize, xcfg.FrameSize = LargeAFXDPFrameSize, LargeAFXDPFrameSize
	}
	if need > cfg.FrameSize {
		hint := fmt.Sprintf("use a larger frame size (--frame-size %d) or lower the MTU", page)
		if cfg.FrameSize >= page || need > page {
			hint = fmt.Sprintf("lower the MTU to at most %d (a frame is at most a %d-byte page)", page-18-kernel.XSKHeadroom, page)
		}
		return nil, fmt.Errorf("open AF_XDP on %s: %w: frame size %d cannot hold the MTU %d (%d bytes with headers and the kernel's %d-byte headroom): %s",
			cfg.Iface, ErrAFXDPConfig, cfg.FrameSize, ifi.MTU, need, kernel.XSKHeadroom, hint)
	}

	s := &AFXDP{iface: cfg.Iface, mode: cfg.Mode, rxMode: cfg.RxMode, drainMax: cfg.RingSize}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	mode := kernel.XDPNative
	if cfg.Mode == XDPGeneric {
		mode = kernel.XDPGeneric
	}
	if cfg.NoMetadata {
		s.redirect, err = kernel.LoadXSKRedirect(n)
	} else {
		s.redirect, err = kernel.LoadXSKMetadataRedirect(ifi.Index, n, mode)
	}
	if err != nil {
		if !errors.Is(err, kernel.ErrNotPermitted) {
			err = fmt.Errorf("open AF_XDP on %s: %w", cfg.Iface, err)
		}
		return nil, privilegeHint(cfg.Iface, err)
	}
	s.choice = s.redirect.Choice()
	if cfg.NoMetadata {
		s.choice.Reason = "the metadata program was turned off"
	}
	if err := s.redirect.Attach(ifi.Index, mode); err != nil {
		return nil, privilegeHint(cfg.Iface, err)
	}
	s.viaLink = s.redirect.ViaLink()
	clock := WallClock()
	for _, qi := range queues {
		xsk, err := kernel.NewXSK(ifi.Index, qi, xcfg)
		if err != nil {
			return nil, privilegeHint(cfg.Iface, err)
		}
		q := &afxdpQueue{src: s, xsk: xsk, queue: qi, batch: cfg.Batch, spin: s.rxMode == RxSpin, clock: clock}
		s.queues = append(s.queues, q)
		s.sources = append(s.sources, q)
		if err := s.redirect.Register(xsk); err != nil {
			return nil, fmt.Errorf("open AF_XDP on %s: %w", cfg.Iface, err)
		}
	}
	return s, nil
}

// privilegeHint adds the whole list of what AF_XDP needs to a refusal for
// lack of privilege, which names only what the failed step lacked. Other
// errors of a setup step already name the interface.
func privilegeHint(iface string, err error) error {
	if errors.Is(err, kernel.ErrNotPermitted) {
		return fmt.Errorf("open AF_XDP on %s (needs CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW: run as root): %w", iface, err)
	}
	return err
}

// InterfaceQueues is the number of receive queues of interface iface: the
// queues AFXDPConfig.Queues may name are 0 to InterfaceQueues-1.
func InterfaceQueues(iface string) (int, error) {
	if _, err := net.InterfaceByName(iface); err != nil {
		return 0, fmt.Errorf("count RX queues of %s: %w: see `ip link`", iface, ErrNoInterface)
	}
	return kernel.RXQueues(iface)
}

// Queues returns one QueueSource per opened queue, in the order of
// AFXDPConfig.Queues.
func (s *AFXDP) Queues() []QueueSource { return s.sources }

// Iface is the interface the source receives on.
func (s *AFXDP) Iface() string { return s.iface }

// Mode is the mode the XDP program runs in.
func (s *AFXDP) Mode() XDPMode { return s.mode }

// RxMode is how Receive waits, RxSpin or RxPoll: RxAuto resolved.
func (s *AFXDP) RxMode() RxMode { return s.rxMode }

// Info describes the source: kernel-fed, with its receive mode and its XDP
// program.
func (s *AFXDP) Info() Info {
	return Info{Name: "afxdp:" + s.iface, RxMode: s.rxMode, KernelFed: true, Metadata: s.choice.Metadata, XDPProgram: s.choice.String()}
}

// Program says which XDP program feeds the sockets and why: the metadata
// program, which hands each frame's device metadata with its batch, or the
// plain one.
func (s *AFXDP) Program() kernel.RedirectChoice { return s.choice }

// ViaLink tells whether the XDP program is attached through a BPF link, which
// the kernel removes when the process dies; false means netlink (before Linux
// 5.9), which a process killed before Close leaves attached.
func (s *AFXDP) ViaLink() bool { return s.viaLink }

// Stop ends the run gently: from now on each queue's Receive no longer
// waits, but hands out the frames the kernel already put on its RX ring, and
// returns ErrClosed once the ring is empty, or once it has handed out a
// ring's worth of frames since Stop (the kernel may keep filling it). Frames
// still on a ring at Close are counted as left on the ring (QueueStats.RxLeftOnRing).
// Close still undoes the setup. Stop is safe to call more than once, from any
// goroutine, and after Close (it then does nothing).
func (s *AFXDP) Stop() {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.isClosed || s.stopping.Swap(true) {
		return
	}
	for _, q := range s.queues {
		// A failed wake-up leaves a Receive in poll(2) until its next
		// aliveCheck, when it sees Stop: the stop takes longer, that is all.
		_ = q.xsk.Wake()
	}
}

// Close ends every Receive (they return ErrClosed), detaches the XDP program
// and closes it and its map, counts the frames left on each RX ring
// (QueueStats.RxLeftOnRing), and closes the sockets. A queue whose caller still holds the
// frames of its last batch keeps its UMEM mapped until its next Receive, so
// that those frames stay readable. Close is safe to call more than once and
// from any goroutine.
func (s *AFXDP) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.isClosed {
		return s.closeErr
	}
	s.isClosed = true
	s.closed.Store(true)
	var errs []error
	for _, q := range s.queues {
		errs = append(errs, q.xsk.Wake())
	}
	// Detached first, so that no frame lands on a ring after its count.
	if s.redirect != nil {
		errs = append(errs, s.redirect.Close())
	}
	for _, q := range s.queues {
		errs = append(errs, q.close())
	}
	if err := errors.Join(errs...); err != nil {
		s.closeErr = fmt.Errorf("close AF_XDP on %s: %w", s.iface, err)
	}
	return s.closeErr
}

// close takes the queue's counters for good and closes its socket, once no
// Receive runs.
func (q *afxdpQueue) close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.statsMu.Lock()
	defer q.statsMu.Unlock()
	st := q.liveStats()
	st.RxLeftOnRing = uint64(q.xsk.Pending())
	q.final = &st
	q.shut = true
	if q.holding {
		return q.xsk.Shutdown()
	}
	return q.xsk.Close()
}

// Queue is the receive queue's index on the interface.
func (q *afxdpQueue) Queue() int { return q.queue }

// An idle queue checks that its interface still exists about every
// aliveCheck; spinning, it reads the clock every spinsPerCheck empty polls.
const (
	aliveCheck    = 250 * time.Millisecond
	spinsPerCheck = 1 << 14
)

// Receive hands out the frames on the queue's RX ring, at most the batch size
// and cap(b.Frames) (when it is not zero), waiting for one to arrive by
// spinning or in poll(2). Every frame of the batch has the same Arrival, the
// time the batch was taken off the ring: AF_XDP in copy mode carries no
// timestamp (the device's RX timestamp, where it gives one, is in b.Meta).
// Under the metadata program, b.Meta holds each frame's metadata, read from
// the UMEM headroom in front of the frame. After Stop it no longer waits
// (see Stop).
func (q *afxdpQueue) Receive(b *Batch) error {
	b.Reset()
	limit := q.batch
	if c := cap(b.Frames); c > 0 && c < limit {
		limit = c
	}
	q.mu.Lock()
	q.holding = false
	if q.shut {
		err := q.xsk.Close() // the UMEM kept for the batch just given back
		q.mu.Unlock()
		if err != nil {
			return errors.Join(ErrClosed, err)
		}
		return ErrClosed
	}
	var n int
	for spins := 1; ; spins++ {
		if q.src.closed.Load() {
			q.mu.Unlock()
			return ErrClosed
		}
		stopping := q.src.stopping.Load()
		take := limit
		if stopping {
			take = min(limit, q.src.drainMax-q.drained)
		}
		if take > 0 {
			n = q.xsk.Receive(take)
		}
		if stopping {
			q.drained += n
		}
		if n > 0 {
			break
		}
		if stopping {
			// The ring is empty, or a ring's worth was taken since Stop.
			q.mu.Unlock()
			return ErrClosed
		}
		// An idle queue checks now and then that its interface is still
		// there: a deleted interface's socket just stays silent.
		check := false
		if q.spin {
			check = spins%spinsPerCheck == 0 && q.clock()-q.checked >= int64(aliveCheck)
		} else {
			woken, err := q.xsk.WaitFor(aliveCheck)
			if err != nil {
				q.mu.Unlock()
				return err
			}
			check = !woken
		}
		if check {
			q.checked = q.clock()
			if err := q.xsk.Alive(); err != nil {
				q.mu.Unlock()
				return fmt.Errorf("interface %s: %w", q.src.iface, err)
			}
		}
	}
	now := q.clock()
	var bytes uint64
	for i := range n {
		f := q.xsk.Frame(i)
		b.Append(f, len(f), now)
		bytes += uint64(len(f))
	}
	if q.xsk.HasMetadata() {
		b.Meta = q.xsk.AppendMetadata(b.Meta)
	}
	q.holding = true
	q.mu.Unlock()
	q.frames.Add(uint64(n))
	q.bytes.Add(bytes)
	return nil
}

// Stats returns the queue's counters: frames and bytes handed out, and the
// socket's kernel statistics (XDP_STATISTICS). After Close, the counters as
// they were then.
func (q *afxdpQueue) Stats() QueueStats {
	q.statsMu.Lock()
	defer q.statsMu.Unlock()
	if q.final != nil {
		return *q.final
	}
	return q.liveStats()
}

// liveStats reads the counters; statsMu must be held.
func (q *afxdpQueue) liveStats() QueueStats {
	st := QueueStats{Frames: q.frames.Load(), Bytes: q.bytes.Load()}
	if x, err := q.xsk.Statistics(); err == nil {
		st.RxDropped, st.RxInvalidDescs, st.RxRingFull = x.RxDropped, x.RxInvalidDescs, x.RxRingFull
		st.FillRingEmpty, st.TxInvalidDescs, st.TxRingEmpty = x.RxFillRingEmptyDescs, x.TxInvalidDescs, x.TxRingEmptyDescs
	}
	return st
}
