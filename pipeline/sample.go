package pipeline

import (
	"fmt"

	"github.com/xdphash/xdphash/dissect"
)

// Defaults of SamplerConfig.
const (
	// DefaultSampleEvery is 1 in how many frames a receive loop samples: a
	// prime, so that a generator's repeating cycle (a power of two) does not
	// make the sample see the same few frames over and over.
	DefaultSampleEvery = 1009
	// DefaultSamplesPerLoop is how many samples each receive loop keeps.
	DefaultSamplesPerLoop = 1024
	// DefaultSampleMaxLen is the most bytes of a frame a sample keeps: an
	// AF_XDP frame's size, so that a sample holds a whole frame.
	DefaultSampleMaxLen = 2048
)

// SamplerConfig sizes a Sampler. A zero field takes its default.
type SamplerConfig struct {
	// Loops is the number of receive loops that sample: loop i (the i-th
	// receive queue of the source) keeps its samples apart from the others',
	// so that no two loops write the same memory. Loops past it sample
	// nothing.
	Loops   int
	Every   int // sample 1 frame in Every, per loop
	PerLoop int // samples kept per loop: the latest PerLoop
	MaxLen  int // bytes kept of each frame
}

// Sample is one sampled frame and what its receive loop computed of it.
type Sample struct {
	Queue  int    // receive queue
	Worker int    // the worker it was steered to
	Hash   uint32 // its flow hash
	// Frame is the frame's bytes, at most SamplerConfig.MaxLen of them;
	// Truncated says when the frame was longer.
	Frame     []byte
	Truncated bool
	// Tag is the metadata VLAN tag the frame was dissected with (the zero
	// tag for none): re-dissect it with dissect.DissectFrameTagged.
	Tag dissect.VLANTag
}

// Sampler copies 1 in N frames a receive loop hashed, with the hash and the
// worker the loop chose, into memory allocated up front, for a check that
// re-dissects and re-hashes them offline (xdphash soak). Set it as
// EngineConfig.Sampler; read it with Samples after Run returns. Sampling
// costs a counter and a compare per frame, and a copy per sampled frame; it
// allocates nothing.
type Sampler struct {
	cfg   SamplerConfig
	loops []sampleLoop
	buf   []byte // Loops*PerLoop frames of MaxLen bytes
}

// sampleLoop is one receive loop's part: written by that loop only, padded
// so that two loops' counters never share a cache line.
type sampleLoop struct {
	countdown int    // frames until the next sample
	taken     uint64 // samples taken; the next goes to slot taken % PerLoop
	meta      []sampleMeta
	_         [24]byte // to 64 bytes
}

type sampleMeta struct {
	queue, worker, n int
	hash             uint32
	truncated        bool
	tag              dissect.VLANTag
}

// NewSampler allocates a sampler's memory: Loops×PerLoop×MaxLen bytes.
func NewSampler(cfg SamplerConfig) (*Sampler, error) {
	if cfg.Every == 0 {
		cfg.Every = DefaultSampleEvery
	}
	if cfg.PerLoop == 0 {
		cfg.PerLoop = DefaultSamplesPerLoop
	}
	if cfg.MaxLen == 0 {
		cfg.MaxLen = DefaultSampleMaxLen
	}
	if cfg.Loops < 1 || cfg.Every < 1 || cfg.PerLoop < 1 || cfg.MaxLen < 1 {
		return nil, fmt.Errorf("create sampler: %w: %+v: want positive sizes and at least one loop", ErrConfig, cfg)
	}
	s := &Sampler{cfg: cfg, loops: make([]sampleLoop, cfg.Loops), buf: make([]byte, cfg.Loops*cfg.PerLoop*cfg.MaxLen)}
	for i := range s.loops {
		// Loops start at different points of the period, as their frames do.
		s.loops[i].countdown = 1 + i*cfg.Every/cfg.Loops
		s.loops[i].meta = make([]sampleMeta, cfg.PerLoop)
	}
	return s, nil
}

// offer is the receive loop's call per frame: loop is its index, queue its
// receive queue. A frame not sampled costs a call, a compare, a decrement
// and a branch; take, the copy, stays out of line to keep offer small (at
// cost 85 it is just over the inliner's budget of 80).
func (s *Sampler) offer(loop int, frame []byte, tag dissect.VLANTag, h uint32, worker, queue int) {
	if loop < len(s.loops) {
		if s.loops[loop].countdown--; s.loops[loop].countdown <= 0 {
			s.take(loop, frame, tag, h, worker, queue)
		}
	}
}

// take copies one sampled frame into its loop's next slot, overwriting the
// oldest sample when the loop's slots are full.
//
//go:noinline
func (s *Sampler) take(loop int, frame []byte, tag dissect.VLANTag, h uint32, worker, queue int) {
	l := &s.loops[loop]
	l.countdown = s.cfg.Every
	slot := int(l.taken % uint64(s.cfg.PerLoop))
	l.taken++
	off := (loop*s.cfg.PerLoop + slot) * s.cfg.MaxLen
	n := copy(s.buf[off:off+s.cfg.MaxLen], frame)
	l.meta[slot] = sampleMeta{queue: queue, worker: worker, n: n, hash: h, truncated: n < len(frame), tag: tag}
}

// Taken is the number of samples taken, over all loops, including those
// overwritten since. Call it after the engine's Run has returned.
func (s *Sampler) Taken() uint64 {
	var n uint64
	for i := range s.loops {
		n += s.loops[i].taken
	}
	return n
}

// Samples returns the samples kept: each loop's latest, at most PerLoop per
// loop. The frames are views into the sampler's memory. Call it after the
// engine's Run has returned: the loops write without synchronization, and
// Run's end is what orders their writes before this read.
func (s *Sampler) Samples() []Sample {
	var out []Sample
	for i := range s.loops {
		l := &s.loops[i]
		for slot := range int(min(l.taken, uint64(s.cfg.PerLoop))) {
			m := l.meta[slot]
			off := (i*s.cfg.PerLoop + slot) * s.cfg.MaxLen
			out = append(out, Sample{Queue: m.queue, Worker: m.worker, Hash: m.hash, Frame: s.buf[off : off+m.n : off+m.n], Truncated: m.truncated, Tag: m.tag})
		}
	}
	return out
}
