package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline/source"
)

// Capture copies the first frames of a run, as received, with what the
// receive loop found for each, to a writer goroutine (xdphash run --write).
// The receive loops copy into a fixed set of preallocated slots and never
// wait: a frame that finds no free slot is counted as missed, not captured.
// Nothing is allocated per frame.
type Capture struct {
	limit, snapLen int
	taken          atomic.Int64
	done           atomic.Bool // limit frames taken
	missed         atomic.Uint64
	free, out      chan *CapturedFrame
	closeOnce      sync.Once
}

// CapturedFrame is one captured frame and what the receive loop found.
type CapturedFrame struct {
	Data    []byte // the frame as received, cut to the snap length
	WireLen int
	Arrival int64 // on the run's clock (ns)
	Queue   int
	Worker  int
	Hash    uint32 // the hash that steered the frame
	Source  hash.Source
	L4      bool
	Path    dissect.Path
	// Meta is the device's metadata (the zero value without it); Tag the
	// metadata VLAN tag the frame was dissected with.
	Meta kernel.XDPMetadata
	Tag  dissect.VLANTag
	buf  []byte
}

// Bounds of NewCapture.
const (
	MaxCaptureSlots   = 1 << 12
	MaxCaptureSnapLen = 1 << 16
)

// NewCapture returns a capture of the first limit frames, through slots
// slots of snapLen bytes each (at most MaxCaptureSlots and
// MaxCaptureSnapLen; less than 1 means 1).
func NewCapture(limit, slots, snapLen int) *Capture {
	slots = min(max(slots, 1), MaxCaptureSlots)
	snapLen = min(max(snapLen, 1), MaxCaptureSnapLen)
	c := &Capture{limit: limit, snapLen: snapLen, free: make(chan *CapturedFrame, slots), out: make(chan *CapturedFrame, slots)}
	for range slots {
		c.free <- &CapturedFrame{buf: make([]byte, snapLen)}
	}
	return c
}

// Frames is where the writer takes the captured frames, in the order each
// receive loop took them; it is closed by Close. The writer gives each back
// with Release once written.
func (c *Capture) Frames() <-chan *CapturedFrame { return c.out }

// Release gives a written frame's slot back.
func (c *Capture) Release(f *CapturedFrame) { c.free <- f }

// Close ends Frames, once no receive loop runs (after Engine.Run).
func (c *Capture) Close() { c.closeOnce.Do(func() { close(c.out) }) }

// Missed is the frames among the first limit that found no free slot.
func (c *Capture) Missed() uint64 { return c.missed.Load() }

// SnapLen is the most bytes of a frame kept.
func (c *Capture) SnapLen() int { return c.snapLen }

// captureFrame captures frame i of b, which the receive loop hashed to h (from
// src) and steered to worker w, if the capture still wants frames.
func (r *receiver) captureFrame(c *Capture, b *source.Batch, i int, arrival int64, h uint32, src hash.Source, l4 bool, path dissect.Path, w int) {
	if c.done.Load() {
		return
	}
	if c.taken.Add(1) > int64(c.limit) {
		c.done.Store(true)
		return
	}
	var f *CapturedFrame
	select {
	case f = <-c.free:
	default:
		c.missed.Add(1)
		return
	}
	frame := b.Frames[i]
	f.Data = f.buf[:copy(f.buf, frame)]
	f.WireLen, f.Arrival, f.Queue, f.Worker = b.WireLen[i], arrival, r.queue, w
	f.Hash, f.Source, f.L4, f.Path = h, src, l4, path
	f.Meta, f.Tag = kernel.XDPMetadata{}, r.dev.tag(b, i)
	if i < len(b.Meta) {
		f.Meta = b.Meta[i]
	}
	c.out <- f // never blocks: out holds every slot
}
