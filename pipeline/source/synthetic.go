package source

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// SyntheticConfig describes a synthetic source. Zero fields take defaults.
type SyntheticConfig struct {
	// Queues is the number of virtual receive queues (default 1). Each
	// queue sends the whole template mix over flows of its own, as if a
	// NIC's RSS had already spread the flows.
	Queues int
	// Batch is the most frames one Receive hands out (default 64).
	Batch int
	// Flows is the number of flows per template, over all queues (default
	// 1024, at most 65536): flow f of a template writes the template's
	// 16-bit flow field plus f (see FlowOffset).
	Flows int
	// FlowOffset says where in a template the 16 bits that tell its flows
	// apart lie (the transport source port's offset, for instance), or
	// -1 when the template is one flow. Nil makes every template one flow.
	FlowOffset func(frame []byte) int
	// Count is the number of frames to send over all queues before the
	// source ends (io.EOF); 0 sends until Close.
	Count uint64
	// Replay is ReplayMax or ReplayRate (PPS over all queues).
	Replay Replay
	// Clock, when set, makes the source live: a ReplayRate source hands
	// frames out at its rate on this clock, and frames are stamped with it.
	// Nil makes it virtual: nothing waits, and queue q's k-th frame is
	// stamped k/PPS (at ReplayMax, 1 µs apart).
	Clock Clock
	// Seed seeds each queue's choice of flows.
	Seed uint64
	// TemplateQueues, when set, gives template t to queue TemplateQueues[t]
	// only (as a NIC's RSS would: pipeline.NewSynthetic computes it from
	// the RSS model) instead of every template to every queue; each queue
	// must get at least one. It suits templates that are flows of their own
	// (a pktgen schedule's frames).
	TemplateQueues []int
	// Name names the traffic, for Info: "synthetic:NAME".
	Name string
}

// DefaultSyntheticFlows is SyntheticConfig.Flows's default.
const DefaultSyntheticFlows = 1024

// virtualMaxPPS is the per-queue rate a virtual ReplayMax source stamps its
// frames at.
const virtualMaxPPS = 1e6

// synthetic sends frames made from templates, each queue from buffers of its
// own: per batch slot one copy of every template, into which the frame's flow
// is written in place. A frame costs a 2-byte store and a few counters,
// allocation-free.
type synthetic struct {
	cfg       SyntheticConfig
	queues    []*synthQueue
	done      chan struct{}
	closeOnce sync.Once
}

type synthQueue struct {
	src   *synthetic
	index int
	tpls  int // templates
	// stride is the distance in bufs between a template's copies for
	// consecutive batch slots: tpls when flows are rewritten (a copy per
	// slot), 0 when every slot hands out the one copy.
	stride int
	bufs   [][]byte // bufs[slot*tpls+t]: template t's copy for batch slot slot
	offs   []int    // per template: the flow field's offset, or -1
	base   []uint16 // per template: the flow field's value in the template
	flows  int      // flows of this queue per template
	rng    uint64
	next   int // the next frame's template

	quota         uint64 // frames left to send; ^0 for no limit
	sent          uint64
	gap           float64 // stamp interval, ns
	start         int64   // the clock at the first Receive, live
	pacer         pacer
	frames, bytes atomic.Uint64
}

// NewSynthetic returns a source sending frames built from the templates
// (whole Ethernet frames), round robin over the templates in order: a
// template listed twice is sent twice as often.
func NewSynthetic(frames [][]byte, cfg SyntheticConfig) (Source, error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("create synthetic source: no template frames")
	}
	cfg.Queues = max(cfg.Queues, 1)
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.Flows <= 0 {
		cfg.Flows = DefaultSyntheticFlows
	}
	if cfg.Flows > 1<<16 {
		return nil, fmt.Errorf("create synthetic source: %d flows, want at most 65536 (the flow field has 16 bits)", cfg.Flows)
	}
	if cfg.Replay.Mode == ReplayRecorded || (cfg.Replay.Mode == ReplayRate && cfg.Replay.PPS <= 0) {
		return nil, fmt.Errorf("create synthetic source: replay %s: want max or a rate above 0", cfg.Replay)
	}
	s := &synthetic{cfg: cfg, done: make(chan struct{})}
	perQueue := make([][][]byte, cfg.Queues)
	if cfg.TemplateQueues != nil && len(cfg.TemplateQueues) != len(frames) {
		return nil, fmt.Errorf("create synthetic source: %d template queues for %d templates", len(cfg.TemplateQueues), len(frames))
	}
	for t, f := range frames {
		if cfg.TemplateQueues == nil {
			for q := range perQueue {
				perQueue[q] = append(perQueue[q], f)
			}
			continue
		}
		q := cfg.TemplateQueues[t]
		if q < 0 || q >= cfg.Queues {
			return nil, fmt.Errorf("create synthetic source: template %d on queue %d of %d", t, q, cfg.Queues)
		}
		perQueue[q] = append(perQueue[q], f)
	}
	for q, fs := range perQueue {
		if len(fs) == 0 {
			return nil, fmt.Errorf("create synthetic source: queue %d gets none of the %d frames (hint: fewer queues, or more flows)", q, len(frames))
		}
	}
	pps := virtualMaxPPS
	if cfg.Replay.Mode == ReplayRate {
		pps = cfg.Replay.PPS / float64(cfg.Queues)
	}
	for q := range cfg.Queues {
		sq, err := newSynthQueue(s, q, perQueue[q], pps)
		if err != nil {
			return nil, err
		}
		s.queues = append(s.queues, sq)
	}
	return s, nil
}

// newSynthQueue makes queue q, sending frames.
func newSynthQueue(s *synthetic, q int, frames [][]byte, pps float64) (*synthQueue, error) {
	cfg := &s.cfg
	offs := make([]int, len(frames))
	base := make([]uint16, len(frames))
	flowFields := false
	for t, f := range frames {
		offs[t] = -1
		if cfg.FlowOffset != nil {
			offs[t] = cfg.FlowOffset(f)
		}
		if offs[t] >= 0 {
			if offs[t]+2 > len(f) {
				return nil, fmt.Errorf("create synthetic source: flow field at %d past the end of %d-byte template %d", offs[t], len(f), t)
			}
			base[t] = binary.BigEndian.Uint16(f[offs[t]:])
			flowFields = true
		}
	}
	sq := &synthQueue{
		src: s, index: q, tpls: len(frames), offs: offs, base: base,
		// Queue q's flows are f*Queues+q: flows never repeat across queues.
		flows: max((cfg.Flows-q+cfg.Queues-1)/cfg.Queues, 1),
		rng:   splitmix(cfg.Seed + uint64(q)*0x9e3779b97f4a7c15),
		quota: ^uint64(0),
		gap:   interval(pps),
		pacer: pacer{clock: cfg.Clock, done: s.done},
	}
	if cfg.Count > 0 {
		sq.quota = cfg.Count / uint64(cfg.Queues)
		if uint64(q) < cfg.Count%uint64(cfg.Queues) {
			sq.quota++
		}
	}
	// A frame whose flow field is rewritten needs a buffer per batch slot;
	// templates without one are handed out as they are, one copy each.
	slots := 1
	if flowFields {
		slots, sq.stride = cfg.Batch, len(frames)
	}
	for range slots {
		for _, f := range frames {
			sq.bufs = append(sq.bufs, slices.Clone(f))
		}
	}
	return sq, nil
}

// splitmix is SplitMix64's output function: it turns a seed into a well-mixed
// non-zero state for xorshift.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31 | 1
}

func (s *synthetic) Queues() []QueueSource { return queueSources(s.queues) }

// Close ends every queue's Receive.
func (s *synthetic) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	return nil
}

func (s *synthetic) closed() bool { return isClosed(s.done) }

func (q *synthQueue) Queue() int { return q.index }

// Receive hands out the next batch. Every frame of a batch is a different
// buffer, and a buffer is rewritten only by a later Receive.
func (q *synthQueue) Receive(b *Batch) error {
	b.Reset()
	if q.src.closed() {
		return ErrClosed
	}
	n := uint64(q.src.cfg.Batch)
	if n > q.quota {
		n = q.quota
	}
	if n == 0 {
		return io.EOF
	}
	cfg := &q.src.cfg
	live := cfg.Clock != nil
	var now int64
	if live {
		if q.sent == 0 {
			q.start = cfg.Clock()
		}
		if cfg.Replay.Mode == ReplayRate && !q.waitUntil(q.start+int64(float64(q.sent)*q.gap)) {
			return ErrClosed
		}
		now = cfg.Clock()
		if cfg.Replay.Mode == ReplayRate {
			// Frame by frame, as a paced capture: only the frames due by
			// now (frame k is due k gaps after the start), at least the
			// one waited for.
			due := uint64(float64(now-q.start)/q.gap) + 1
			n = min(n, max(due, q.sent+1)-q.sent)
		}
	}
	var bytes uint64
	for slot := range int(n) {
		t := q.next
		if q.next++; q.next == q.tpls {
			q.next = 0
		}
		f := q.bufs[slot*q.stride+t]
		if off := q.offs[t]; off >= 0 {
			// xorshift64: three shifts per frame pick the flow.
			q.rng ^= q.rng << 13
			q.rng ^= q.rng >> 7
			q.rng ^= q.rng << 17
			flow := (q.rng%uint64(q.flows))*uint64(cfg.Queues) + uint64(q.index)
			binary.BigEndian.PutUint16(f[off:], q.base[t]+uint16(flow))
		}
		at := now
		if !live {
			at = int64(float64(q.sent) * q.gap)
		}
		b.Append(f, len(f), at)
		bytes += uint64(len(f))
		q.sent++
	}
	q.quota -= n
	q.frames.Add(n)
	q.bytes.Add(bytes)
	return nil
}

// waitUntil sleeps until the clock reads t; false when the source was closed.
func (q *synthQueue) waitUntil(t int64) bool {
	return q.pacer.until(t, nil)
}

func (q *synthQueue) Stats() QueueStats {
	return QueueStats{Frames: q.frames.Load(), Bytes: q.bytes.Load()}
}
