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
// The receive loops copy into a fixed set of preallocated slots. By default
// they never wait: a frame that finds no free slot is counted as missed, not
// captured. With SetWait they wait for the writer to free a slot instead,
// and every one of the first limit frames is captured. Nothing is allocated
// per frame.
type Capture struct {
	limit, snapLen int
	wait           bool
	taken          atomic.Int64
	done           atomic.Bool // limit frames taken
	missed         atomic.Uint64
	waited         atomic.Uint64 // frames that waited for a free slot
	free, out      chan *CapturedFrame
	stop           chan struct{} // closed by Stop: a wait for a slot ends
	closeOnce      sync.Once
	stopOnce       sync.Once
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

// Bounds of NewCapture: at most MaxCaptureSlots slots of at most
// MaxCaptureSnapLen bytes, and MaxCaptureMemory bytes of slots in all.
const (
	MaxCaptureSlots   = 1 << 16
	MaxCaptureSnapLen = 1 << 16
	MaxCaptureMemory  = 256 << 20
)

// NewCapture returns a capture of the first limit frames, through slots
// slots of snapLen bytes each (within the bounds above; less than 1 means
// 1). Slots reports the slots it has.
func NewCapture(limit, slots, snapLen int) *Capture {
	snapLen = min(max(snapLen, 1), MaxCaptureSnapLen)
	slots = min(max(slots, 1), MaxCaptureSlots, MaxCaptureMemory/snapLen)
	c := &Capture{limit: limit, snapLen: snapLen, free: make(chan *CapturedFrame, slots), out: make(chan *CapturedFrame, slots), stop: make(chan struct{})}
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

// SetWait, called before the run, makes a receive loop that finds no free
// slot wait for the writer to free one, until Stop: the first limit frames
// are all captured, at the cost of slowing the receive loops to the
// writer's pace while the capture fills. Without it they never wait.
func (c *Capture) SetWait() { c.wait = true }

// Stop ends the receive loops' waits for a slot (SetWait): the frames that
// would have waited are missed. For the run's stop (a signal, --duration).
func (c *Capture) Stop() { c.stopOnce.Do(func() { close(c.stop) }) }

// Missed is the frames among the first limit that found no free slot (and,
// with SetWait, were stopped while waiting for one).
func (c *Capture) Missed() uint64 { return c.missed.Load() }

// Waited is the frames whose receive loop waited for the writer to free a
// slot (SetWait).
func (c *Capture) Waited() uint64 { return c.waited.Load() }

// Waiting reports whether SetWait was called.
func (c *Capture) Waiting() bool { return c.wait }

// Slots is the number of frames that can wait for the writer at once.
func (c *Capture) Slots() int { return cap(c.free) }

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
		if !c.wait {
			c.missed.Add(1)
			return
		}
		c.waited.Add(1)
		select {
		case f = <-c.free:
		case <-c.stop:
			c.missed.Add(1)
			return
		}
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
