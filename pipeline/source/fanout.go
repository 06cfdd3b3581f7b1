package source

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/xdphash/xdphash/internal/kernel"
)

// fanoutBatches is the number of batches each queue of a Fanout circulates
// between its filler and its receive loop: one held by the loop, the others
// filling or ready.
const fanoutBatches = 4

// MaxFanoutMemory bounds the bytes of frames that a Fanout's batches hold
// together, whatever the batch size, the frames' size and the number of
// queues: a batch is handed out before its frames would pass its share
// (MaxFanoutMemory over the queues' batches, at least minBatchBytes), when
// it holds fewer frames than the batch size.
const MaxFanoutMemory = 64 << 20

// minBatchBytes is the least share of a batch: room for a few of the
// longest frames a capture holds.
const minBatchBytes = 1 << 20

// initialFrameBytes sizes a new arena: a batch of frames this long fits;
// longer frames make it double.
const initialFrameBytes = 2048

// Fanout is a set of virtual receive queues that one goroutine, the filler
// (a capture's reader, or a stage that spreads one stream over queues as a
// NIC's RSS does), fills frame by frame: Add copies a frame into the pending
// batch of the queue it names, and each queue's Receive takes the next ready
// batch. Without a free batch the filler waits, or, in a Fanout made to
// drop, drops the frame (counted as ReplayRingFull, as a NIC drops on a full
// RX ring).
// Nothing is allocated per frame once the batches' arenas have grown.
type Fanout struct {
	queues     []*fanoutQueue
	drop       bool          // drop a frame that finds no free batch, rather than wait
	batchBytes int           // the most bytes of frames a batch's arena holds, but for one longer frame
	batch      int           // the most frames of a batch
	done       chan struct{} // closed by Close
	closeOnce  sync.Once
	err        error // the filler's end: nil at the end of the stream; set before the queues' full channels close
}

type fanoutQueue struct {
	fan     *Fanout
	index   int
	full    chan *fanoutBatch // ready batches; closed after the last
	free    chan *fanoutBatch
	cur     *fanoutBatch // the batch the receive loop holds
	pending *fanoutBatch // the batch the filler fills

	frames, bytes, dropped atomic.Uint64
	readied                atomic.Uint64 // frames of the batches handed to full
	abandoned              atomic.Uint64 // frames the filler read but could not add before Close
}

// fanoutBatch owns the bytes of its frames: what the filler copies from is
// valid for one frame only.
type fanoutBatch struct {
	arena   []byte
	frames  [][]byte
	wireLen []int
	arrival []int64
	// meta holds each frame's metadata once a frame with some (a VLAN tag
	// that a capture's comment records) was added, and is empty before; it
	// grows only for such frames.
	meta []kernel.XDPMetadata
	// short: the arena filled before the batch had its frames, and is
	// below its share: it doubles when the batch is empty again.
	short bool
}

// NewFanout returns queues virtual queues (at least 1) of batches of up to
// batch frames; drop makes it drop a frame that finds no free batch rather
// than wait for the receive loop to free one.
func NewFanout(queues, batch int, drop bool) *Fanout {
	f := &Fanout{drop: drop, done: make(chan struct{})}
	f.batchBytes = max(MaxFanoutMemory/(max(queues, 1)*fanoutBatches), minBatchBytes)
	f.batch = max(batch, 1)
	for i := range max(queues, 1) {
		q := &fanoutQueue{fan: f, index: i, full: make(chan *fanoutBatch, fanoutBatches), free: make(chan *fanoutBatch, fanoutBatches)}
		for range fanoutBatches {
			q.free <- &fanoutBatch{
				frames:  make([][]byte, 0, batch),
				wireLen: make([]int, 0, batch),
				arrival: make([]int64, 0, batch),
			}
		}
		f.queues = append(f.queues, q)
	}
	return f
}

// Queues returns the receive queues.
func (f *Fanout) Queues() []QueueSource { return queueSources(f.queues) }

// Len is the number of queues.
func (f *Fanout) Len() int { return len(f.queues) }

// Add copies a frame into queue q's pending batch and hands the batch out
// when it is full; meta, when not nil and Valid, is what the frame came with
// (Batch.Meta). False when the Fanout was closed.
func (f *Fanout) Add(q int, data []byte, wireLen int, at int64, meta *kernel.XDPMetadata) bool {
	return f.queues[q].add(data, wireLen, at, meta)
}

// Flush hands out every queue's pending batch that holds a frame.
func (f *Fanout) Flush() {
	for _, q := range f.queues {
		q.flush()
	}
}

// End hands out the pending batches and ends every queue after its last
// ready batch: its Receive then returns err, or io.EOF for nil. The filler
// calls it once, last.
func (f *Fanout) End(err error) {
	f.err = err
	for _, q := range f.queues {
		q.flush()
		close(q.full)
	}
}

// Close ends every queue's Receive (ErrClosed) and a filler's wait for a
// free batch; it is safe to call more than once.
func (f *Fanout) Close() { f.closeOnce.Do(func() { close(f.done) }) }

// Done is closed by Close.
func (f *Fanout) Done() <-chan struct{} { return f.done }

func (f *Fanout) closed() bool { return isClosed(f.done) }

func (q *fanoutQueue) add(data []byte, wireLen int, at int64, meta *kernel.XDPMetadata) bool {
	if q.pending == nil {
		if q.fan.drop {
			select {
			case q.pending = <-q.free:
			case <-q.fan.done:
				q.abandoned.Add(1)
				return false
			default:
				q.dropped.Add(1)
				return true
			}
		} else {
			select {
			case q.pending = <-q.free:
			case <-q.fan.done:
				q.abandoned.Add(1)
				return false
			}
		}
	}
	b := q.pending
	if len(b.arena)+len(data) > cap(b.arena) {
		if len(b.frames) > 0 {
			// The arena is full: hand the batch out rather than grow it
			// under its frames, and grow it when it is empty again.
			b.short = cap(b.arena) < q.fan.batchBytes
			q.flush()
			return q.add(data, wireLen, at, meta)
		}
		// Empty, so nothing slices the arena: replace it, doubling a
		// short one up to the batch's share.
		n := min(q.fan.batchBytes, q.fan.batch*initialFrameBytes)
		if b.short {
			n = min(q.fan.batchBytes, 2*cap(b.arena))
		}
		b.arena, b.short = make([]byte, 0, max(n, len(data))), false
	}
	off := len(b.arena)
	b.arena = append(b.arena, data...)
	b.frames = append(b.frames, b.arena[off:len(b.arena):len(b.arena)])
	b.wireLen = append(b.wireLen, wireLen)
	b.arrival = append(b.arrival, at)
	switch {
	case meta != nil && meta.Valid:
		for len(b.meta) < len(b.frames)-1 {
			b.meta = append(b.meta, kernel.XDPMetadata{})
		}
		b.meta = append(b.meta, *meta)
	case len(b.meta) > 0:
		b.meta = append(b.meta, kernel.XDPMetadata{})
	}
	if len(b.frames) == cap(b.frames) {
		q.flush()
	}
	return true
}

// flush hands out the pending batch, if it holds a frame. The full channel
// has room for every batch, so this never blocks.
func (q *fanoutQueue) flush() {
	if q.pending != nil && len(q.pending.frames) > 0 {
		q.readied.Add(uint64(len(q.pending.frames)))
		q.full <- q.pending
		q.pending = nil
	}
}

func (q *fanoutQueue) Queue() int { return q.index }

// Receive hands out the next ready batch, and gives the previous one back to
// the filler.
func (q *fanoutQueue) Receive(b *Batch) error {
	b.Reset()
	if q.fan.closed() {
		return ErrClosed
	}
	if q.cur != nil {
		c := q.cur
		c.arena, c.frames, c.wireLen, c.arrival, c.meta = c.arena[:0], c.frames[:0], c.wireLen[:0], c.arrival[:0], c.meta[:0]
		q.free <- c
		q.cur = nil
	}
	select {
	case fb, ok := <-q.full:
		if !ok {
			if q.fan.closed() {
				return ErrClosed
			}
			if q.fan.err != nil {
				return q.fan.err
			}
			return io.EOF
		}
		q.cur = fb
		var bytes uint64
		for i, f := range fb.frames {
			b.Append(f, fb.wireLen[i], fb.arrival[i])
			bytes += uint64(fb.wireLen[i])
		}
		b.Meta = append(b.Meta, fb.meta...)
		q.frames.Add(uint64(len(fb.frames)))
		q.bytes.Add(bytes)
		return nil
	case <-q.fan.done:
		return ErrClosed
	}
}

// Stats counts the frames handed out and dropped, and once the Fanout is
// closed the frames no Receive took (Unreceived: those of the ready batches,
// and one the filler was adding when Close came): with those, every frame
// the filler added is counted.
func (q *fanoutQueue) Stats() QueueStats {
	st := QueueStats{Frames: q.frames.Load(), Bytes: q.bytes.Load(), ReplayRingFull: q.dropped.Load()}
	if q.fan.closed() {
		readied := q.readied.Load()
		st.Unreceived = readied - min(st.Frames, readied) + q.abandoned.Load()
	}
	return st
}

// queueSources returns qs as the QueueSource interface values Queues returns.
func queueSources[Q QueueSource](qs []Q) []QueueSource {
	out := make([]QueueSource, len(qs))
	for i, q := range qs {
		out[i] = q
	}
	return out
}
