package source

import (
	"errors"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
)

// ErrClosed is returned by Receive after Close.
var ErrClosed = errors.New("source closed")

// Batch is what one Receive call hands out: up to cap(Frames) frames of one
// receive queue. Frames[i] is a view into the source's memory (for AF_XDP, the
// UMEM), valid only until the next Receive on the same QueueSource: the caller
// must finish with a frame, or copy it, before asking for more, and must never
// hand a view to another goroutine.
type Batch struct {
	Frames [][]byte
	// WireLen[i] is the frame's length on the wire (>= len(Frames[i]) when a
	// capture was cut to its snap length).
	WireLen []int
	// Arrival[i] is when the frame arrived, in nanoseconds on the source's clock:
	// the monotonic wall clock for live sources, the capture time (or a virtual
	// clock) for files and synthetic traffic.
	Arrival []int64
	// Meta[i] is what the device told the XDP metadata program about
	// Frames[i] (its hash, stripped VLAN tag, RX timestamp), when the source
	// has it (Info.Metadata); otherwise Meta is empty.
	Meta []kernel.XDPMetadata
}

// NewBatch returns a batch able to hold n frames.
func NewBatch(n int) *Batch {
	return &Batch{Frames: make([][]byte, 0, n), WireLen: make([]int, 0, n), Arrival: make([]int64, 0, n), Meta: make([]kernel.XDPMetadata, 0, n)}
}

// Reset empties b, keeping its storage.
func (b *Batch) Reset() {
	b.Frames, b.WireLen, b.Arrival, b.Meta = b.Frames[:0], b.WireLen[:0], b.Arrival[:0], b.Meta[:0]
}

// Len is the number of frames in b.
func (b *Batch) Len() int { return len(b.Frames) }

// Append adds a frame to b.
func (b *Batch) Append(frame []byte, wireLen int, arrival int64) {
	b.Frames = append(b.Frames, frame)
	b.WireLen = append(b.WireLen, wireLen)
	b.Arrival = append(b.Arrival, arrival)
}

// QueueSource is one receive queue: one goroutine calls Receive in a loop, as one
// CPU runs one NIC queue's receive path.
type QueueSource interface {
	// Receive resets b and fills it with the next frames. It blocks until at
	// least one frame is there, the source ends (io.EOF), or Close is called
	// (ErrClosed). Frames of the previous batch are invalid from this call on.
	Receive(b *Batch) error
	// Queue is the receive queue's index.
	Queue() int
	// Stats returns the queue's counters so far; safe to call from any goroutine.
	Stats() QueueStats
}

// Source is a set of receive queues.
type Source interface {
	Queues() []QueueSource
	// Close stops every queue's Receive and undoes all setup (XDP programs,
	// sockets); it is safe to call more than once and from any goroutine.
	Close() error
	// Info describes the source, for the run's statistics and CPU plan.
	Info() Info
}

// Stopper is a Source that can end a run without losing what it already
// holds: after Stop, each queue's Receive hands out, without waiting, the
// frames the source had taken in (a bounded number), then returns
// ErrClosed. Close still undoes the setup, and counts what is left
// (AF_XDP: QueueStats.RxLeftOnRing).
type Stopper interface {
	Stop()
}

// Info describes a source.
type Info struct {
	// Name is "afxdp:IFACE", "pcap:FILE" or "synthetic:PROFILE".
	Name string
	// Replay is how a file or synthetic source is paced: "max",
	// "recorded" or a rate; empty for a live source.
	Replay string
	// RxMode is an AF_XDP source's receive mode; empty for the others.
	RxMode RxMode
	// KernelFed says that the kernel receives the frames on this machine's
	// processors (AF_XDP: the driver's or veth's NAPI work and the XDP
	// redirect run in softirq context before a frame reaches its ring).
	KernelFed bool
	// Metadata says that the source hands each frame's device metadata with
	// its batch (Batch.Meta); XDPProgram says which XDP program feeds an
	// AF_XDP source and why (kernel.RedirectChoice), empty for the others.
	Metadata   bool
	XDPProgram string
}

// QueueStats counts one receive queue's traffic. Kernel-side drops are those the
// source can learn of (AF_XDP's XDP_STATISTICS); other sources leave them zero.
type QueueStats struct {
	Frames uint64 `json:"frames"` // frames handed out
	Bytes  uint64 `json:"bytes"`  // their wire bytes
	// AF_XDP socket statistics (struct xdp_statistics).
	RxDropped      uint64 `json:"rx_dropped"`       // dropped by the kernel for other reasons
	RxInvalidDescs uint64 `json:"rx_invalid_descs"` // dropped: invalid descriptor
	RxRingFull     uint64 `json:"rx_ring_full"`     // dropped: the RX ring was full
	FillRingEmpty  uint64 `json:"fill_ring_empty"`  // times the fill ring had no frame for the kernel
	TxInvalidDescs uint64 `json:"tx_invalid_descs"` // (transmit side, unused here)
	TxRingEmpty    uint64 `json:"tx_ring_empty"`    // (transmit side, unused here)
	// ReplayRingFull is the frames a capture replay dropped because the
	// queue's receive loop fell behind the replay's pace and its ring of
	// batches was full: only a replay asked to drop (--replay-drops, the
	// model of a NIC's full RX ring) does; no kernel is involved.
	ReplayRingFull uint64 `json:"replay_ring_full"`
	// Unreceived is the frames a capture replay read and queued that no
	// receive loop took before the run stopped (the ready batches left when
	// the source was closed).
	Unreceived uint64 `json:"unreceived"`
	// RxLeftOnRing is the frames the kernel had put on the AF_XDP RX ring
	// that were still there when the source closed: the receive loops take
	// what their rings hold when a run stops (up to one ring's worth), so
	// only a ring refilled faster than that leaves any.
	RxLeftOnRing uint64 `json:"rx_left_on_ring"`
}

// KernelDrops is the kernel's drops before the queue's receive loop took
// the frames: AF_XDP's XDP_STATISTICS, and the frames left on the RX ring
// at the stop.
func (s QueueStats) KernelDrops() uint64 {
	return s.RxDropped + s.RxInvalidDescs + s.RxRingFull + s.RxLeftOnRing
}

// ReplayDrops is a capture replay's drops before the queue's receive loop
// took the frames: its full ring, and the frames left unreceived when the
// run stopped.
func (s QueueStats) ReplayDrops() uint64 { return s.ReplayRingFull + s.Unreceived }

// LostBeforeLoop is every frame lost before the queue's receive loop took
// it: the kernel's drops and a capture replay's.
func (s QueueStats) LostBeforeLoop() uint64 { return s.KernelDrops() + s.ReplayDrops() }

// Clock is nanoseconds since an arbitrary origin.
type Clock func() int64

// WallClock is the monotonic wall clock.
func WallClock() Clock {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}
