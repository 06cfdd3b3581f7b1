package source

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// CaptureReader is what a pcap or pcapng reader of pcapgo offers.
type CaptureReader interface {
	// ZeroCopyReadPacketData returns the next record; its data is valid until
	// the next call.
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

// File magics: the first four bytes as a big-endian number.
const (
	magicPcapng       = 0x0a0d0d0a // section header block type, the same in both byte orders
	magicPcapMicros   = 0xa1b2c3d4
	magicPcapMicrosLE = 0xd4c3b2a1
	magicPcapNanos    = 0xa1b23c4d
	magicPcapNanosLE  = 0x4d3cb2a1
	magicGzip         = 0x1f8b0000 // two bytes; magicGzipMask selects them
	magicGzipMask     = 0xffff0000
)

// OpenCapture tells pcap from pcapng by the file's magic, looking through
// gzip compression, and returns a reader positioned at the first record.
func OpenCapture(r io.Reader) (CaptureReader, error) {
	br := bufio.NewReader(r)
	magic, err := peekMagic(br)
	if err != nil {
		return nil, err
	}
	if magic&magicGzipMask == magicGzip {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read gzip header: %w", err)
		}
		br = bufio.NewReader(zr)
		if magic, err = peekMagic(br); err != nil {
			return nil, err
		}
	}

	switch magic {
	case magicPcapng:
		// Without ErrorOnMismatchingLinkType the reader would skip, silently,
		// the records of interfaces whose link type differs from the first one.
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{ErrorOnMismatchingLinkType: true})
		if errors.Is(err, io.EOF) {
			return nil, errors.New("read pcapng header: no interface description block")
		}
		if err != nil {
			return nil, fmt.Errorf("read pcapng header: %w", err)
		}
		return ng, nil
	case magicPcapMicros, magicPcapMicrosLE, magicPcapNanos, magicPcapNanosLE:
		p, err := pcapgo.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read pcap header: %w", err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("unknown file format (magic %08x): want pcap or pcapng", magic)
}

// OpenEthernetCapture is OpenCapture for a capture of Ethernet frames, the
// only link type xdphash reads; name is for messages.
func OpenEthernetCapture(r io.Reader, name string) (CaptureReader, error) {
	capture, err := OpenCapture(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if lt := capture.LinkType(); lt != layers.LinkTypeEthernet {
		return nil, fmt.Errorf("read %s: link type %s (%d) is not supported: xdphash reads Ethernet frames (link type %d) only",
			name, lt, uint32(lt), uint32(layers.LinkTypeEthernet))
	}
	return capture, nil
}

func peekMagic(br *bufio.Reader) (uint32, error) {
	b, err := br.Peek(4)
	switch {
	case err == nil:
		return binary.BigEndian.Uint32(b), nil
	case len(b) == 0 && errors.Is(err, io.EOF):
		return 0, errors.New("empty file: want pcap or pcapng")
	case errors.Is(err, io.EOF):
		return 0, fmt.Errorf("read file header: %w", io.ErrUnexpectedEOF)
	}
	return 0, fmt.Errorf("read file header: %w", err)
}

// ReplayMode is how fast a file (or synthetic traffic) is handed out.
type ReplayMode uint8

const (
	// ReplayMax hands frames out as fast as they are taken.
	ReplayMax ReplayMode = iota
	// ReplayRecorded keeps the capture's gaps between frames.
	ReplayRecorded
	// ReplayRate hands frames out at Replay.PPS frames a second.
	ReplayRate
)

// Replay is the pace of a file or synthetic source.
type Replay struct {
	Mode ReplayMode
	PPS  float64 // frames per second, for ReplayRate
}

func (r Replay) String() string {
	switch r.Mode {
	case ReplayRecorded:
		return "recorded"
	case ReplayRate:
		return strconv.FormatFloat(r.PPS, 'g', -1, 64) + "pps"
	}
	return "max"
}

// interval is the gap between frames at rate pps, in nanoseconds.
func interval(pps float64) float64 { return 1e9 / pps }

// pacer sleeps a paced source's goroutine until a frame is due, or until the
// source closes (done). It reuses one timer: a frame costs no allocation.
type pacer struct {
	clock Clock
	done  <-chan struct{}
	timer *time.Timer
}

// sleep waits d nanoseconds; false when the source was closed first.
func (p *pacer) sleep(d int64) bool {
	if p.timer == nil {
		p.timer = time.NewTimer(time.Duration(d))
	} else {
		p.timer.Reset(time.Duration(d))
	}
	select {
	case <-p.timer.C:
		return true
	case <-p.done:
		p.timer.Stop()
		return false
	}
}

// isClosed reports whether done, a source's Close signal, is closed.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// queueSources returns qs as the QueueSource interface values Queues returns.
func queueSources[Q QueueSource](qs []Q) []QueueSource {
	out := make([]QueueSource, len(qs))
	for i, q := range qs {
		out[i] = q
	}
	return out
}

// PcapConfig describes a pcap or pcapng file source.
type PcapConfig struct {
	// Queues is the number of virtual receive queues (default 1). With more
	// than one, Spread picks each frame's queue, as a NIC's RSS would
	// (queues.NewRSSSpread builds one); it is called from one goroutine.
	Queues int
	Spread func(frame []byte) int
	// Batch is the most frames one Receive hands out (default 64).
	Batch  int
	Replay Replay
	// Clock, when set, makes the replay live: frames are handed out at the
	// Replay pace on this clock and stamped with it, and a queue whose
	// receive loop falls behind drops frames (counted as RxRingFull) as a
	// NIC's full RX ring would. Nil makes it virtual: nothing waits, no
	// frame is dropped, and the arrival stamps are the capture's times from
	// its first frame (ReplayMax, ReplayRecorded) or the k-th frame's
	// k/PPS (ReplayRate).
	Clock Clock
}

// pcapBatches is the number of batches each queue circulates between the
// file reader and its receive loop: one held by the loop, the others filling
// or ready.
const pcapBatches = 4

// pcapSource hands out a capture's frames over one or more virtual queues.
// One goroutine reads the file, spreads the frames, and copies them into
// per-queue batches; each queue's Receive takes the next ready batch.
type pcapSource struct {
	name   string
	file   io.Closer // nil when the reader is not the source's to close
	reader CaptureReader
	cfg    PcapConfig
	queues []*pcapQueue

	done       chan struct{} // closed by Close
	closeOnce  sync.Once
	readerDone chan struct{}
	pacer      pacer // the reader's, for paced replays
	err        error // the reader's end: nil at the end of the file; set before the queues' full channels close
}

type pcapQueue struct {
	src     *pcapSource
	index   int
	full    chan *pcapBatch // ready batches; closed after the last
	free    chan *pcapBatch
	cur     *pcapBatch // the batch the receive loop holds
	pending *pcapBatch // the batch the reader fills

	frames, bytes, dropped atomic.Uint64
}

// pcapBatch owns the bytes of its frames: the reader's buffer is valid for
// one record only.
type pcapBatch struct {
	arena   []byte
	frames  [][]byte
	wireLen []int
	arrival []int64
}

// OpenPcap opens the capture file path ("-" for stdin) and starts reading it.
func OpenPcap(path string, cfg PcapConfig) (Source, error) {
	if path == "-" {
		return NewPcap(os.Stdin, "stdin", cfg)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open capture: %w", err)
	}
	src, err := newPcap(f, path, f, cfg)
	if err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// NewPcap reads a capture from r, which it does not close; name is for
// messages. Close does not wait for a read from r to return.
func NewPcap(r io.Reader, name string, cfg PcapConfig) (Source, error) {
	return newPcap(r, name, nil, cfg)
}

func newPcap(r io.Reader, name string, file io.Closer, cfg PcapConfig) (*pcapSource, error) {
	cfg.Queues = max(cfg.Queues, 1)
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.Queues > 1 && cfg.Spread == nil {
		return nil, fmt.Errorf("open capture %s: %d queues and no Spread function", name, cfg.Queues)
	}
	if cfg.Replay.Mode == ReplayRate && cfg.Replay.PPS <= 0 {
		return nil, fmt.Errorf("open capture %s: replay rate %g pps, want > 0", name, cfg.Replay.PPS)
	}
	reader, err := OpenEthernetCapture(r, name)
	if err != nil {
		return nil, err
	}
	s := &pcapSource{name: name, file: file, reader: reader, cfg: cfg, done: make(chan struct{}), readerDone: make(chan struct{})}
	s.pacer = pacer{clock: cfg.Clock, done: s.done}
	for i := range cfg.Queues {
		q := &pcapQueue{src: s, index: i, full: make(chan *pcapBatch, pcapBatches), free: make(chan *pcapBatch, pcapBatches)}
		for range pcapBatches {
			q.free <- &pcapBatch{
				frames:  make([][]byte, 0, cfg.Batch),
				wireLen: make([]int, 0, cfg.Batch),
				arrival: make([]int64, 0, cfg.Batch),
			}
		}
		s.queues = append(s.queues, q)
	}
	go s.read()
	return s, nil
}

func (s *pcapSource) Queues() []QueueSource { return queueSources(s.queues) }

// Close stops the reader and every queue's Receive and closes the file.
func (s *pcapSource) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		if s.file != nil {
			// Closing the file ends a read in progress; then the reader
			// goroutine is sure to end.
			err = s.file.Close()
			<-s.readerDone
		}
	})
	return err
}

// read is the reader goroutine: the file's one reader, the NIC that spreads
// its frames over the queues.
func (s *pcapSource) read() {
	defer close(s.readerDone)
	defer func() {
		for _, q := range s.queues {
			q.flush()
			close(q.full)
		}
	}()
	live := s.cfg.Clock != nil
	var (
		start  int64 // the clock when the first frame was read
		first  time.Time
		frames int
	)
	for ; ; frames++ {
		data, ci, err := s.reader.ZeroCopyReadPacketData()
		if err != nil {
			// The pcap reader returns a bare io.EOF also when a record's
			// header was read but none of its data.
			if errors.Is(err, io.EOF) && ci.CaptureLength == 0 {
				return
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			if !s.closed() {
				s.err = fmt.Errorf("read frame %d of %s: %w", frames, s.name, err)
			}
			return
		}
		if frames == 0 {
			first = ci.Timestamp
			if live {
				start = s.cfg.Clock()
			}
		}
		// at is when the frame is due, from the first frame.
		var at int64
		switch s.cfg.Replay.Mode {
		case ReplayRate:
			at = int64(float64(frames) * interval(s.cfg.Replay.PPS))
		default:
			at = max(ci.Timestamp.Sub(first).Nanoseconds(), 0)
		}
		if live {
			if s.cfg.Replay.Mode != ReplayMax && !s.waitUntil(start+at) {
				return
			}
			at = s.cfg.Clock()
		}
		q := s.queues[0]
		if len(s.queues) > 1 {
			q = s.queues[s.cfg.Spread(data)%len(s.queues)]
		}
		if !q.add(data, ci.Length, at, live) {
			return
		}
	}
}

// waitUntil sleeps until the clock reads t, after handing out every partly
// filled batch (a paced frame must not wait for a batch to fill); false when
// the source was closed.
func (s *pcapSource) waitUntil(t int64) bool {
	d := t - s.cfg.Clock()
	if d <= 0 {
		return true
	}
	for _, q := range s.queues {
		q.flush()
	}
	return s.pacer.sleep(d)
}

func (s *pcapSource) closed() bool { return isClosed(s.done) }

// add copies a frame into the queue's pending batch and hands the batch out
// when it is full. Without a free batch, a live replay drops the frame; a
// virtual one waits. False when the source was closed.
func (q *pcapQueue) add(data []byte, wireLen int, at int64, live bool) bool {
	if q.pending == nil {
		if live {
			select {
			case q.pending = <-q.free:
			default:
				q.dropped.Add(1)
				return true
			}
		} else {
			select {
			case q.pending = <-q.free:
			case <-q.src.done:
				return false
			}
		}
	}
	b := q.pending
	off := len(b.arena)
	b.arena = append(b.arena, data...)
	b.frames = append(b.frames, b.arena[off:len(b.arena):len(b.arena)])
	b.wireLen = append(b.wireLen, wireLen)
	b.arrival = append(b.arrival, at)
	if len(b.frames) == cap(b.frames) {
		q.flush()
	}
	return true
}

// flush hands out the pending batch, if it holds a frame. The full channel
// has room for every batch, so this never blocks.
func (q *pcapQueue) flush() {
	if q.pending != nil && len(q.pending.frames) > 0 {
		q.full <- q.pending
		q.pending = nil
	}
}

func (q *pcapQueue) Queue() int { return q.index }

// Receive hands out the next ready batch, and gives the previous one back to
// the reader.
func (q *pcapQueue) Receive(b *Batch) error {
	b.Reset()
	if q.src.closed() {
		return ErrClosed
	}
	if q.cur != nil {
		c := q.cur
		// Frames slice the arena; when the arena grew, earlier frames keep
		// the old array alive until the batch is reused, and no longer.
		c.arena, c.frames, c.wireLen, c.arrival = c.arena[:0], c.frames[:0], c.wireLen[:0], c.arrival[:0]
		q.free <- c
		q.cur = nil
	}
	select {
	case pb, ok := <-q.full:
		if !ok {
			if q.src.closed() {
				return ErrClosed
			}
			if q.src.err != nil {
				return q.src.err
			}
			return io.EOF
		}
		q.cur = pb
		var bytes uint64
		for i, f := range pb.frames {
			b.Append(f, pb.wireLen[i], pb.arrival[i])
			bytes += uint64(pb.wireLen[i])
		}
		q.frames.Add(uint64(len(pb.frames)))
		q.bytes.Add(bytes)
		return nil
	case <-q.src.done:
		return ErrClosed
	}
}

func (q *pcapQueue) Stats() QueueStats {
	return QueueStats{Frames: q.frames.Load(), Bytes: q.bytes.Load(), RxRingFull: q.dropped.Load()}
}
