package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/internal/kernel"
)

// PcapConfig describes a pcap or pcapng file source: one receive queue (a
// capture is one stream; pipeline spreads it over virtual queues by the RSS
// model).
type PcapConfig struct {
	// Batch is the most frames one Receive hands out (default 64).
	Batch  int
	Replay Replay
	// Clock, when set, makes the replay live: frames are handed out at the
	// Replay pace on this clock and stamped with it, and when the receive
	// loop falls behind frames are dropped (counted as RxRingFull) as a
	// NIC's full RX ring would. Nil makes it virtual: nothing waits, no
	// frame is dropped, and the arrival stamps are the capture's times from
	// its first frame (ReplayMax, ReplayRecorded) or the k-th frame's
	// k/PPS (ReplayRate).
	Clock Clock
	// Lossless makes a live replay wait for its receive loop instead of
	// dropping: for a stage that takes the frames on and drops where its
	// own queues are full (pipeline's RSS spread).
	Lossless bool
}

// pcapSource hands out a capture's frames on one queue. One goroutine reads
// the file and copies the frames into batches (a Fanout of one queue); the
// queue's Receive takes the next ready batch.
type pcapSource struct {
	name   string
	file   io.Closer // nil when the reader is not the source's to close
	reader capture.Reader
	cfg    PcapConfig
	fan    *Fanout

	closeOnce  sync.Once
	readerDone chan struct{}
	pacer      pacer              // the reader's, for paced replays
	meta       kernel.XDPMetadata // the reader's, for the frame it adds
	// stream: the input is not a regular file (a pipe, a FIFO, a socket),
	// whose next read may block for as long as its writer likes: the
	// reader hands out a partly filled batch before such a read, so that
	// every frame read reaches the receive loop.
	stream bool
}

// isRegular reports whether r is a regular file or bytes in memory, whose
// reads never wait for a writer.
func isRegular(r io.Reader) bool {
	if _, inMemory := r.(interface{ Len() int }); inMemory {
		return true // bytes.Reader, bytes.Buffer, strings.Reader
	}
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode().IsRegular()
}

// noData is the error a metadata kfunc returns for what the device did not
// give: a capture records no device hash or timestamp the replay hands on.
var noData = kernel.KfuncErr(syscall.ENODATA)

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
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.Replay.Mode == ReplayRate && cfg.Replay.PPS <= 0 {
		return nil, fmt.Errorf("open capture %s: replay rate %g pps, want > 0", name, cfg.Replay.PPS)
	}
	reader, err := capture.OpenEthernet(r, name)
	if err != nil {
		return nil, err
	}
	s := &pcapSource{name: name, file: file, reader: reader, cfg: cfg, readerDone: make(chan struct{}), stream: !isRegular(r)}
	s.fan = NewFanout(1, cfg.Batch, cfg.Clock != nil && !cfg.Lossless)
	s.pacer = pacer{clock: cfg.Clock, done: s.fan.Done()}
	go s.read()
	return s, nil
}

func (s *pcapSource) Queues() []QueueSource { return s.fan.Queues() }

// Close stops the reader and the queue's Receive and closes the file.
func (s *pcapSource) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.fan.Close()
		if s.file != nil {
			// Closing the file ends a read in progress; then the reader
			// goroutine is sure to end.
			err = s.file.Close()
			<-s.readerDone
		}
	})
	return err
}

// read is the reader goroutine: the file's one reader, the NIC that hands
// its frames to the queue.
func (s *pcapSource) read() {
	defer close(s.readerDone)
	live := s.cfg.Clock != nil
	var (
		start  int64 // the clock when the first frame was read
		first  time.Time
		frames int
	)
	for ; ; frames++ {
		if s.stream && s.reader.Buffered() == 0 {
			s.fan.Flush()
		}
		data, ci, err := s.reader.ZeroCopyReadPacketData()
		if err != nil {
			// The pcap reader returns a bare io.EOF also when a record's
			// header was read but none of its data.
			if errors.Is(err, io.EOF) && ci.CaptureLength == 0 {
				s.fan.End(nil)
				return
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			if !s.fan.closed() {
				err = fmt.Errorf("read frame %d of %s: %w", frames, s.name, err)
			}
			s.fan.End(err)
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
			if s.cfg.Replay.Mode != ReplayMax && !s.pacer.until(start+at, s.fan.Flush) {
				s.fan.End(nil)
				return
			}
			at = s.cfg.Clock()
		}
		// A frame that xdphash run --write recorded with a metadata VLAN
		// tag comes with it, as from the device: the receive loop dissects
		// it with the tag, as dissect does.
		var meta *kernel.XDPMetadata
		if tag, ok := capture.FrameTag(s.reader); ok && !tag.IsZero() {
			s.meta = kernel.XDPMetadata{Valid: true, VLANProto: tag.TPID, VLANTCI: tag.TCI, HashErr: noData, TimestampErr: noData}
			meta = &s.meta
		}
		if !s.fan.Add(0, data, ci.Length, at, meta) {
			s.fan.End(nil)
			return
		}
	}
}
