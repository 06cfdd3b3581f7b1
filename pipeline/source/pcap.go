package source

import (
	"io"
	"sync"
)

// PcapConfig describes a pcap or pcapng file source: one receive queue (a
// capture is one stream; pipeline spreads it over virtual queues by the RSS
// model).
type PcapConfig struct {
	// Batch is the most frames one Receive hands out (default 64).
	Batch  int
	Replay Replay
	// Clock, when set, makes the replay live: frames are handed out at the
	// Replay pace on this clock and stamped with it; when the receive loop
	// falls behind, the replay waits for it and catches up after, handing
	// out what is overdue at once, as tcpreplay does: every frame is
	// received. Nil makes it virtual: nothing waits, no frame is dropped,
	// and the arrival stamps are the capture's times from its first frame
	// (ReplayMax, ReplayRecorded) or the k-th frame's k/PPS (ReplayRate).
	Clock Clock
	// DropBehind, with Clock, drops the frames that find the receive
	// loop's ring of batches full, as a NIC drops on a full RX ring,
	// rather than wait (counted as ReplayRingFull): the model of a
	// receiver that cannot slow its sender.
	DropBehind bool
}

// Drops reports whether the replay drops rather than waits for a receive
// loop that is behind (DropBehind, live).
func (cfg PcapConfig) Drops() bool { return cfg.Clock != nil && cfg.DropBehind }

// pcapSource hands out a capture's frames on one queue. One goroutine reads
// the file (a CaptureReplay) and copies the frames into batches (a Fanout
// of one queue); the queue's Receive takes the next ready batch.
type pcapSource struct {
	replay *CaptureReplay
	fan    *Fanout

	closeOnce  sync.Once
	readerDone chan struct{}
}

// OpenPcap opens the capture file path ("-" for stdin) and starts reading it.
func OpenPcap(path string, cfg PcapConfig) (Source, error) {
	s := newPcapSource(cfg)
	r, err := OpenReplay(path, cfg, s.fan.Done())
	if err != nil {
		return nil, err
	}
	return s.start(r), nil
}

// NewPcap reads a capture from r, which it does not close; name is for
// messages. Close does not wait for a read from r to return.
func NewPcap(r io.Reader, name string, cfg PcapConfig) (Source, error) {
	s := newPcapSource(cfg)
	rep, err := NewReplay(r, name, cfg, s.fan.Done())
	if err != nil {
		return nil, err
	}
	return s.start(rep), nil
}

func newPcapSource(cfg PcapConfig) *pcapSource {
	return &pcapSource{fan: NewFanout(1, cfg.BatchSize(), cfg.Drops()), readerDone: make(chan struct{})}
}

// BatchSize is Batch, or its default.
func (cfg PcapConfig) BatchSize() int {
	if cfg.Batch <= 0 {
		return 64
	}
	return cfg.Batch
}

func (s *pcapSource) start(r *CaptureReplay) *pcapSource {
	s.replay = r
	go s.read()
	return s
}

func (s *pcapSource) Queues() []QueueSource { return s.fan.Queues() }

// Close stops the reader and the queue's Receive and closes the file.
func (s *pcapSource) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.fan.Close()
		// Closing the file ends a read in progress; then the reader
		// goroutine is sure to end.
		err = s.replay.Close()
		if s.replay.EndsOnClose() {
			<-s.readerDone
		}
	})
	return err
}

func (s *pcapSource) Info() Info { return s.replay.Info() }

// read is the reader goroutine: the file's one reader, the NIC that hands
// its frames to the queue.
func (s *pcapSource) read() {
	defer close(s.readerDone)
	var f Frame
	for {
		flush, err := s.replay.Next(&f)
		switch {
		case err == io.EOF:
			s.fan.End(nil)
			return
		case err != nil:
			s.fan.End(err)
			return
		case flush:
			s.fan.Flush()
		case !s.fan.Add(0, f.Data, f.WireLen, f.Arrival, f.Meta):
			s.fan.End(nil)
			return
		}
	}
}
