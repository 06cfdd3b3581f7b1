package pipeline

import (
	"errors"
	"fmt"
	"io"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
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
	return spreadPcap(cfg, rss, func(cfg source.PcapConfig) (source.Source, error) { return source.OpenPcap(path, cfg) })
}

// NewPcap is OpenPcap for a capture read from r, as source.NewPcap.
func NewPcap(r io.Reader, name string, cfg source.PcapConfig, rss RSSConfig) (source.Source, error) {
	return spreadPcap(cfg, rss, func(cfg source.PcapConfig) (source.Source, error) { return source.NewPcap(r, name, cfg) })
}

func spreadPcap(cfg source.PcapConfig, rss RSSConfig, open func(source.PcapConfig) (source.Source, error)) (source.Source, error) {
	if rss.Queues <= 1 {
		return open(cfg)
	}
	spread, err := rss.spread()
	if err != nil {
		return nil, err
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	live := cfg.Clock != nil
	// The stage drops where its queues are full; the replay waits for it.
	cfg.Lossless = true
	inner, err := open(cfg)
	if err != nil {
		return nil, err
	}
	s := &rssSource{
		inner: inner, spread: spread, batch: cfg.Batch,
		fan:     source.NewFanout(rss.Queues, cfg.Batch, live),
		paced:   live && cfg.Replay.Mode != source.ReplayMax,
		stopped: make(chan struct{}),
	}
	go s.run()
	return s, nil
}

// rssSource is the RSS stage over a source of one queue: one goroutine takes
// the inner queue's batches and copies each frame into the batch of the
// virtual queue that the RSS model picks for it (a source.Fanout, which
// drops, in a live replay, where a queue's receive loop falls behind). The
// frames keep their arrival stamps; the inner source's replay (its pace, its
// stamps) is untouched.
type rssSource struct {
	inner   source.Source
	spread  func(frame []byte) int
	fan     *source.Fanout
	batch   int
	paced   bool // a live, paced replay: hand out partly filled batches after each of the inner's
	stopped chan struct{}
}

func (s *rssSource) run() {
	defer close(s.stopped)
	q := s.inner.Queues()[0]
	b := source.NewBatch(s.batch)
	n := s.fan.Len()
	for {
		err := q.Receive(b)
		for i, f := range b.Frames {
			var meta *kernel.XDPMetadata
			if i < len(b.Meta) {
				meta = &b.Meta[i]
			}
			if !s.fan.Add(s.spread(f)%n, f, b.WireLen[i], b.Arrival[i], meta) {
				s.fan.End(nil)
				return
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			s.fan.End(nil)
			return
		case err != nil:
			s.fan.End(err)
			return
		}
		// The inner replay handed out a partly filled batch because its
		// next frame is not due yet: so does the stage.
		if s.paced {
			s.fan.Flush()
		}
	}
}

func (s *rssSource) Queues() []source.QueueSource { return s.fan.Queues() }

// Close stops the queues' Receive and the inner source, and waits for the
// stage's goroutine.
func (s *rssSource) Close() error {
	s.fan.Close()
	err := s.inner.Close()
	<-s.stopped
	if err != nil {
		return fmt.Errorf("close %s: %w", s.inner.Info().Name, err)
	}
	return nil
}

func (s *rssSource) Info() source.Info { return s.inner.Info() }

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
