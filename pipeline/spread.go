package pipeline

import (
	"io"
	"sync"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/nicrss"
	"github.com/xdphash/xdphash/pipeline/source"
)

// RSSConfig is the model of a NIC's receive-side scaling by which the RSS
// stage fans one stream of frames (a capture, synthetic templates) over
// virtual receive queues: Toeplitz with Key (nil: hash.DefaultRSSKey) and
// Symmetry through a default indirection table over Queues queues
// (hash.NewRSSSpread); or, with NIC, that NIC's own parse, key and table.
type RSSConfig struct {
	Queues   int // below 2: one queue, no spreading
	Key      []byte
	Symmetry hash.Symmetry
	// NIC, when set, is the modelled NIC (its parse of the frame, not the
	// kernel's, with its key and table); Key and Symmetry are then unused.
	NIC *nicrss.Hasher
}

// spread returns the function that picks a frame's virtual queue.
func (rss RSSConfig) spread() (func(frame []byte) int, error) {
	if rss.NIC != nil {
		return rss.NIC.Spread(), nil
	}
	return hash.NewRSSSpread(rss.Key, rss.Symmetry, rss.Queues, nil)
}

// OpenPcap opens the capture file path ("-" for stdin) as source.OpenPcap
// does, over rss.Queues virtual queues that the RSS stage fills.
func OpenPcap(path string, cfg source.PcapConfig, rss RSSConfig) (source.Source, error) {
	if rss.Queues <= 1 {
		return source.OpenPcap(path, cfg)
	}
	return spreadPcap(cfg, rss, func(done <-chan struct{}) (*source.CaptureReplay, error) {
		return source.OpenReplay(path, cfg, done)
	})
}

// NewPcap is OpenPcap for a capture read from r, as source.NewPcap.
func NewPcap(r io.Reader, name string, cfg source.PcapConfig, rss RSSConfig) (source.Source, error) {
	if rss.Queues <= 1 {
		return source.NewPcap(r, name, cfg)
	}
	return spreadPcap(cfg, rss, func(done <-chan struct{}) (*source.CaptureReplay, error) {
		return source.NewReplay(r, name, cfg, done)
	})
}

func spreadPcap(cfg source.PcapConfig, rss RSSConfig, open func(done <-chan struct{}) (*source.CaptureReplay, error)) (source.Source, error) {
	spread, err := rss.spread()
	if err != nil {
		return nil, err
	}
	fan := source.NewFanout(rss.Queues, cfg.BatchSize(), cfg.Drops())
	replay, err := open(fan.Done())
	if err != nil {
		return nil, err
	}
	s := &rssSource{replay: replay, spread: spread, fan: fan, stopped: make(chan struct{})}
	go s.run()
	return s, nil
}

// rssSource is the RSS stage over a capture replay: its one goroutine reads
// the capture and copies each frame into the batch of the virtual queue that
// the RSS model picks for it (a source.Fanout, which waits where a queue's
// receive loop falls behind, or drops in a replay asked to), as the pcap
// source does for its one queue.
type rssSource struct {
	replay    *source.CaptureReplay
	spread    func(frame []byte) int
	fan       *source.Fanout
	closeOnce sync.Once
	stopped   chan struct{}
}

func (s *rssSource) run() {
	defer close(s.stopped)
	n := s.fan.Len()
	var f source.Frame
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
		case !s.fan.Add(s.spread(f.Data)%n, f.Data, f.WireLen, f.Arrival, f.Meta):
			s.fan.End(nil)
			return
		}
	}
}

func (s *rssSource) Queues() []source.QueueSource { return s.fan.Queues() }

// Close stops the queues' Receive and the replay, closes the file, and waits
// for the stage's goroutine when its read is sure to end.
func (s *rssSource) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.fan.Close()
		err = s.replay.Close()
		if s.replay.EndsOnClose() {
			<-s.stopped
		}
	})
	return err
}

func (s *rssSource) Info() source.Info { return s.replay.Info() }

// NewSynthetic is source.NewSynthetic with each template on the one virtual
// queue that the RSS model picks for it, when rss has more than one queue
// (cfg.Queues is then rss.Queues).
func NewSynthetic(frames [][]byte, cfg source.SyntheticConfig, rss RSSConfig) (source.Source, error) {
	if rss.Queues > 1 {
		spread, err := rss.spread()
		if err != nil {
			return nil, err
		}
		cfg.Queues, cfg.TemplateQueues = rss.Queues, make([]int, len(frames))
		for t, f := range frames {
			cfg.TemplateQueues[t] = spread(f)
		}
	}
	return source.NewSynthetic(frames, cfg)
}
