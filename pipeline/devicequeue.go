package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/runstats"
)

// queueCheck is a receive loop's --check-device-queue: every frame with a
// device hash h must have come in on table[h % len(table)], the queue the
// device's RSS indirection table gives.
type queueCheck struct {
	queue                       int
	table                       []uint32
	frames, checked, mismatches uint64
	samples                     []runstats.DeviceQueueMismatch
	newSamples                  bool
}

func newQueueCheck(queue int, table []uint32) *queueCheck {
	if len(table) == 0 {
		return nil
	}
	return &queueCheck{queue: queue, table: table}
}

// frame checks one frame's metadata. It allocates only for the first
// mismatches, which it keeps.
func (c *queueCheck) frame(m *kernel.XDPMetadata) {
	c.frames++
	if !deviceHashed(m) {
		return // no hash the device's table steered by
	}
	c.checked++
	want := int(c.table[m.Hash%uint32(len(c.table))])
	if want == c.queue {
		return
	}
	c.mismatches++
	if len(c.samples) < runstats.MaxDeviceQueueSamples {
		c.samples = append(c.samples, runstats.DeviceQueueMismatch{Queue: c.queue, Want: want, DeviceHash: m.Hash, DeviceType: m.HashType.String()})
		c.newSamples = true
	}
}

// queuePub is what a receive loop publishes of its queueCheck.
type queuePub struct {
	frames, checked, mismatches atomic.Uint64
	samplesMu                   sync.Mutex
	samples                     []runstats.DeviceQueueMismatch // guarded by samplesMu
}

func (c *queueCheck) publish(p *queuePub) {
	p.frames.Store(c.frames)
	p.checked.Store(c.checked)
	p.mismatches.Store(c.mismatches)
	if c.newSamples {
		p.samplesMu.Lock()
		p.samples = append(p.samples[:0], c.samples...)
		p.samplesMu.Unlock()
		c.newSamples = false
	}
}

// queueStats adds every receive loop's queue check to st.
func (e *Engine) queueStats(st *runstats.RunStats) {
	if len(e.cfg.CheckDeviceQueue) == 0 {
		return
	}
	check := &runstats.DeviceQueueCheck{TableLen: len(e.cfg.CheckDeviceQueue), Samples: []runstats.DeviceQueueMismatch{}}
	for _, r := range e.recv {
		p := &r.pub.dev.queue
		p.samplesMu.Lock()
		samples := p.samples
		p.samplesMu.Unlock()
		check.Add(&runstats.DeviceQueueCheck{Frames: p.frames.Load(), Checked: p.checked.Load(), Mismatches: p.mismatches.Load(), Samples: samples})
	}
	st.DeviceQueue = check
}
