package source

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/internal/kernel"
)

// CaptureReplay reads a capture's frames one at a time at its Replay pace,
// for the one goroutine that fills a source's queues with them: the pcap
// source's reader, or pipeline's RSS stage, which spreads them over queues
// of its own. It has no goroutine and copies nothing: the filler copies each
// frame once, into its Fanout.
type CaptureReplay struct {
	name   string
	file   io.Closer // nil when the reader is not the replay's to close
	reader capture.Reader
	// commented is the reader when its records carry comments (pcapng),
	// where a metadata VLAN tag may be recorded; nil for a pcap file.
	commented capture.Commented
	cfg       PcapConfig
	live      bool
	pacer     pacer
	// stream: the input is not a regular file (a pipe, a FIFO, a socket),
	// whose next read may block for as long as its writer likes: Next asks
	// for a flush before such a read, so that every frame read reaches the
	// receive loop.
	stream bool

	start   int64 // the clock when the first frame was read
	first   time.Time
	frames  int   // frames read
	due     int64 // the frame read's time from the first frame
	frame   Frame // the frame read, when Next asked for a flush before its wait
	waiting bool  // Next asked for a flush before waiting for frame
	flushed bool  // Next asked for a flush before the read it is about to do
	meta    kernel.XDPMetadata
}

// Frame is one frame of a capture replay.
type Frame struct {
	Data    []byte // valid until the next call of Next
	WireLen int
	Arrival int64
	// Meta is nil, or what the frame came with: the metadata VLAN tag that
	// xdphash run --write records in a frame's comment, as from the device.
	Meta *kernel.XDPMetadata
}

// OpenReplay opens the capture file path ("-" for stdin); done, when
// closed, ends a wait of Next (the owner's Close signal).
func OpenReplay(path string, cfg PcapConfig, done <-chan struct{}) (*CaptureReplay, error) {
	if path == "-" {
		return NewReplay(os.Stdin, "stdin", cfg, done)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open capture: %w", err)
	}
	r, err := newReplay(f, path, f, cfg, done)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// NewReplay replays a capture read from r, which it does not close; name is
// for messages.
func NewReplay(r io.Reader, name string, cfg PcapConfig, done <-chan struct{}) (*CaptureReplay, error) {
	return newReplay(r, name, nil, cfg, done)
}

func newReplay(r io.Reader, name string, file io.Closer, cfg PcapConfig, done <-chan struct{}) (*CaptureReplay, error) {
	cfg.Batch = cfg.BatchSize()
	if cfg.Replay.Mode == ReplayRate && cfg.Replay.PPS <= 0 {
		return nil, fmt.Errorf("open capture %s: replay rate %g pps, want > 0", name, cfg.Replay.PPS)
	}
	reader, err := capture.OpenEthernet(r, name)
	if err != nil {
		return nil, err
	}
	commented, _ := reader.(capture.Commented)
	return &CaptureReplay{
		name: name, file: file, reader: reader, commented: commented, cfg: cfg, live: cfg.Clock != nil,
		pacer: pacer{clock: cfg.Clock, done: done}, stream: !isRegular(r),
	}, nil
}

// Info describes the replay.
func (r *CaptureReplay) Info() Info {
	return Info{Name: "pcap:" + r.name, Replay: r.cfg.Replay.String()}
}

// EndsOnClose reports whether, once done is closed and Close called, a
// goroutine in Next is sure to return soon: Close closes the input (a file
// that OpenReplay opened), which ends a read in progress, or the input's
// reads never wait (a regular file, bytes in memory). A stream given to
// NewReplay may keep a read waiting for as long as its writer likes.
func (r *CaptureReplay) EndsOnClose() bool { return r.file != nil || !r.stream }

// Close closes the file that OpenReplay opened; it is for the owner to call
// once, after closing done.
func (r *CaptureReplay) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
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

// Next reads the next frame into f when it returns false and nil. It
// returns true (and no frame) before a call that may block, on a read from
// a stream or a wait for a paced frame's time: the filler hands out its
// partly filled batches, then calls again. At the end of the capture it
// returns io.EOF; when done closes during a wait, ErrClosed; other errors
// say which frame could not be read.
func (r *CaptureReplay) Next(f *Frame) (flush bool, err error) {
	if !r.waiting {
		if r.stream && !r.flushed && r.reader.Buffered() == 0 {
			r.flushed = true
			return true, nil
		}
		r.flushed = false
		if err := r.read(); err != nil {
			return false, err
		}
	}
	if r.live {
		if r.cfg.Replay.Mode != ReplayMax {
			if d := r.start + r.due - r.cfg.Clock(); d > 0 {
				if !r.waiting {
					r.waiting = true
					return true, nil
				}
				if !r.pacer.sleep(d) {
					r.waiting = false
					return false, ErrClosed
				}
			}
		}
		r.waiting = false
		r.frame.Arrival = r.cfg.Clock()
	}
	*f = r.frame
	return false, nil
}

// read reads the next record into r.frame, stamped with its time from the
// first frame.
func (r *CaptureReplay) read() error {
	data, ci, err := r.reader.ZeroCopyReadPacketData()
	if err != nil {
		// The pcap reader returns a bare io.EOF also when a record's
		// header was read but none of its data.
		if errors.Is(err, io.EOF) && ci.CaptureLength == 0 {
			return io.EOF
		}
		if isClosed(r.pacer.done) {
			return ErrClosed
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read frame %d of %s: %w", r.frames, r.name, err)
	}
	if r.frames == 0 {
		r.first = ci.Timestamp
		if r.live {
			r.start = r.cfg.Clock()
		}
	}
	switch r.cfg.Replay.Mode {
	case ReplayRate:
		r.due = int64(float64(r.frames) * interval(r.cfg.Replay.PPS))
	default:
		r.due = max(ci.Timestamp.Sub(r.first).Nanoseconds(), 0)
	}
	r.frames++
	r.frame = Frame{Data: data, WireLen: ci.Length, Arrival: r.due}
	// A frame that xdphash run --write recorded with a metadata VLAN tag
	// comes with it, as from the device: the receive loop dissects it with
	// the tag, as dissect does.
	if r.commented == nil || len(r.commented.PacketComments()) == 0 {
		return nil
	}
	if tag, ok := capture.FrameTag(r.reader); ok && !tag.IsZero() {
		r.meta = kernel.XDPMetadata{Valid: true, VLANProto: tag.TPID, VLANTCI: tag.TCI, HashErr: noData, TimestampErr: noData}
		r.frame.Meta = &r.meta
	}
	return nil
}
