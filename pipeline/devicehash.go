package pipeline

import (
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/fairness"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/runstats"
)

// deviceState is a receive loop's use of the device metadata: the hash
// choice, the hash-source counters and the device-hash check.
type deviceState struct {
	// plain: the loop dissects and hashes a frame without metadata as it
	// always did (no device hash to take, no check to run).
	plain       bool
	withholdTag bool
	own         hash.Source // the source of the steering's own hash
	sources     [hash.NumSources]uint64
	check       *deviceCheck // nil without CheckDeviceHash
	queueCheck  *queueCheck  // nil without CheckDeviceQueue
	none        kernel.XDPMetadata
	// tsOffset maps the device's RX timestamps onto the run's clock (see
	// arrival); anchored once a timestamp was seen.
	tsOffset int64
	anchored bool
}

// arrival is the arrival on the run's clock of a frame the device stamped
// ts, taken off the source at now, after an arrival of last: the device's
// clock moved by the smallest delay seen between a stamp and its batch, so
// that the device's spacing of the frames is kept (CoDel's sojourn starts at
// the device) and no arrival lies after its batch or before the one before.
func (d *deviceState) arrival(ts uint64, now, last int64) int64 {
	if delay := now - int64(ts); !d.anchored || delay < d.tsOffset {
		d.tsOffset, d.anchored = delay, true
	}
	return max(int64(ts)+d.tsOffset, last)
}

func newDeviceState(cfg *EngineConfig, steer *hash.Steering, queue int) deviceState {
	d := deviceState{
		plain:       steer.Kind() != hash.KindDevice && !cfg.CheckDeviceHash && len(cfg.CheckDeviceQueue) == 0,
		withholdTag: cfg.WithholdVLANTag,
		own:         steer.Own(),
	}
	if cfg.CheckDeviceHash {
		d.check = newDeviceCheck(queue, steer.Own() == hash.SourceToeplitz)
		d.check.nic = newCheckNIC(cfg, d.check.equality)
	}
	d.queueCheck = newQueueCheck(queue, cfg.CheckDeviceQueue)
	return d
}

// devicePub is what a receive loop publishes of its deviceState, once per
// batch.
type devicePub struct {
	sources                             [hash.NumSources]atomic.Uint64
	frames, withHash, checked, conflict atomic.Uint64
	collisions                          atomic.Uint64
	classes                             [numConflictClasses]atomic.Uint64
	fieldsDiffer, notHashedByDevice     atomic.Uint64
	samplesMu                           sync.Mutex
	samples                             []runstats.DeviceHashConflict // guarded by samplesMu
	queue                               queuePub
}

// tag is the metadata VLAN tag frame i of b was dissected with: the zero tag
// without one, or when it is withheld.
func (d *deviceState) tag(b *source.Batch, i int) dissect.VLANTag {
	if i >= len(b.Meta) || !b.Meta[i].HasVLAN() || d.withholdTag {
		return dissect.VLANTag{}
	}
	return dissect.VLANTag{TPID: b.Meta[i].VLANProto, TCI: b.Meta[i].VLANTCI}
}

// ownOnly tells whether every frame of a batch with metadata meta (nil for
// none) is dissected and hashed as if it had none: no frame has a VLAN tag
// the loop dissects with, and the steering takes no frame's device hash. The
// loop then hashes the batch's keys together. On veth, whose XDP frames
// carry no skb, and on a device that hashes nothing, every batch is such.
func (d *deviceState) ownOnly(meta []kernel.XDPMetadata, steer *hash.Steering) bool {
	for i := range meta {
		m := &meta[i]
		if m.HasVLAN() && !d.withholdTag || steer.TakesDevice(m.HashType.IsL4(), m.HasHash()) {
			return false
		}
	}
	return true
}

// hashMeta dissects into keys and hashes a frame that came with device
// metadata m (the zero XDPMetadata when the source has none): the metadata VLAN tag goes to
// the dissector, as the kernel's dissector takes skb->vlan_tci, and the
// steering chooses between the device's hash and its own.
func (r *receiver) hashMeta(frame []byte, m *kernel.XDPMetadata, keys *dissect.FlowKeys) (dissect.Path, uint32, bool, hash.Source) {
	var tag dissect.VLANTag
	if m.HasVLAN() && !r.dev.withholdTag {
		tag = dissect.VLANTag{TPID: m.VLANProto, TCI: m.VLANTCI}
	}
	_, path := r.d.DissectFrameTagged(keys, frame, tag)
	h, l4, src := r.steer.HashDevice(keys, m.Hash, m.HashType.IsL4(), m.HasHash())
	if c := r.dev.check; c != nil {
		own := h
		if c.equality {
			// A NIC hashes what its own parse finds (package nicrss), not
			// the keys the kernel's dissector finds behind a tunnel.
			own = c.nic.hash(frame)
		} else if src != r.dev.own {
			own, _ = r.steer.Hash(keys)
		}
		c.frame(frame, m, tag, keys, own)
	}
	if q := r.dev.queueCheck; q != nil {
		q.frame(m)
	}
	return path, h, l4, src
}

// deviceHashed tells whether the device hashed the frame: the kfunc gave a
// hash, and not virtio-net's "none" (success, 0, type none).
func deviceHashed(m *kernel.XDPMetadata) bool {
	return m.HasHash() && (m.Hash != 0 || m.HashType != kernel.RSSTypeNone)
}

// publishDevice stores the counters for Engine.Stats.
func (r *receiver) publishDevice() {
	p := &r.pub.dev
	for s, n := range r.dev.sources {
		p.sources[s].Store(n)
	}
	if q := r.dev.queueCheck; q != nil {
		q.publish(&p.queue)
	}
	c := r.dev.check
	if c == nil {
		return
	}
	p.frames.Store(c.frames)
	p.withHash.Store(c.withHash)
	p.checked.Store(c.checked)
	p.conflict.Store(c.conflicts)
	p.collisions.Store(c.collisions)
	c.publishClasses(p)
	p.fieldsDiffer.Store(c.fieldsDiffer)
	p.notHashedByDevice.Store(c.notHashedByDevice)
	if c.newSamples {
		p.samplesMu.Lock()
		p.samples = append(p.samples[:0], c.samples...)
		p.samplesMu.Unlock()
		c.newSamples = false
	}
}

// deviceStats adds the hash sources and the device-hash check of every
// receive loop to st.
func (e *Engine) deviceStats(st *runstats.RunStats) {
	var check *runstats.DeviceHashCheck
	if e.cfg.CheckDeviceHash {
		check = &runstats.DeviceHashCheck{Method: "partition", Samples: []runstats.DeviceHashConflict{}}
		if e.steer.Own() == hash.SourceToeplitz {
			check.Method = "equality"
		}
	}
	for _, r := range e.recv {
		p := &r.pub.dev
		st.HashSources.Add(runstats.HashSources{
			None: p.sources[hash.SourceNone].Load(), Kernel: p.sources[hash.SourceKernel].Load(),
			Toeplitz: p.sources[hash.SourceToeplitz].Load(), Device: p.sources[hash.SourceDevice].Load(),
		})
		if check == nil {
			continue
		}
		p.samplesMu.Lock()
		samples := p.samples
		p.samplesMu.Unlock()
		check.Add(&runstats.DeviceHashCheck{
			Frames: p.frames.Load(), WithHash: p.withHash.Load(), Checked: p.checked.Load(), Conflicts: p.conflict.Load(), Collisions: p.collisions.Load(), FieldsDiffer: p.fieldsDiffer.Load(), NotHashedByDevice: p.notHashedByDevice.Load(),
			Samples: samples, Classes: pubClasses(p),
		})
	}
	st.DeviceHash = check
	e.queueStats(st)
}

// checkTableLen is the entries of each of the partition check's two tables
// (about 90 bytes each). The tables are direct-mapped by hash: a flow that
// comes back after another flow took its entry is checked against that
// other flow's entry only, so the check is exact for up to about this many
// flows at once and a sample beyond.
const checkTableLen = 1 << 14

// deviceCheck is a receive loop's --check-device-hash. Toeplitz is checked by
// equality; the kernel's SipHash by partition, in two direct-mapped tables:
// one by device hash (the same device hash must come with the same hash of
// ours) and one by our hash (the reverse). Two flows whose 32-bit hashes
// are equal by chance are collisions, not conflicts (see merged and split).
type deviceCheck struct {
	queue    int
	equality bool

	frames, withHash, checked, conflicts uint64
	fieldsDiffer, notHashedByDevice      uint64
	collisions                           uint64

	byDevice, byOwn []checkEntry
	flows           fairness.Distinct // our distinct hashes: the flows seen
	chance          []chanceCollision // device hashes two flows share by chance
	samples         []runstats.DeviceHashConflict
	newSamples      bool // samples changed since the last publish

	nic     *checkNIC // the equality check's NIC model
	classes [numConflictClasses]uint64
}

// checkEntry is the last frame a table entry saw.
type checkEntry struct {
	used     bool
	dev, own uint32
	devType  kernel.RSSHashType
	tag      dissect.VLANTag
	keys     dissect.FlowKeys
}

func newDeviceCheck(queue int, equality bool) *deviceCheck {
	c := &deviceCheck{queue: queue, equality: equality}
	if !equality {
		c.byDevice, c.byOwn = make([]checkEntry, checkTableLen), make([]checkEntry, checkTableLen)
		c.chance = make([]chanceCollision, 0, maxChanceCollisions)
	}
	return c
}

// frame checks one frame: m its metadata, tag the VLAN tag it was dissected
// with, keys its keys, own our hash of it. It allocates only for the first
// conflicts, which it keeps as samples.
func (c *deviceCheck) frame(frame []byte, m *kernel.XDPMetadata, tag dissect.VLANTag, keys *dissect.FlowKeys, own uint32) {
	c.frames++
	if !deviceHashed(m) {
		if c.equality && c.nic.hashed() {
			c.notHashedByDevice++
		}
		return
	}
	c.withHash++
	c.checked++
	if c.equality {
		if !c.nic.declares(m.HashType) {
			c.fieldsDiffer++
		}
		if m.Hash != own || !c.nic.hashed() {
			c.conflict(frame, m, tag, keys, own, nil)
		}
		return
	}
	c.flows.Add(own)
	d := &c.byDevice[m.Hash%checkTableLen]
	o := &c.byOwn[own%checkTableLen]
	switch {
	case d.used && d.dev == m.Hash && d.own != own:
		if c.merged(m.Hash, d.own, own) {
			c.collisions++
		} else {
			c.conflict(frame, m, tag, keys, own, d)
		}
	case o.used && o.own == own && o.dev != m.Hash:
		if o.tag != tag || o.keys != *keys {
			// Two flows, and the device says so too: our hash collided.
			c.collisions++
		} else {
			c.conflict(frame, m, tag, keys, own, o)
		}
	}
	e := checkEntry{used: true, dev: m.Hash, own: own, devType: m.HashType, tag: tag, keys: *keys}
	*d, *o = e, e
}

func (c *deviceCheck) conflict(frame []byte, m *kernel.XDPMetadata, tag dissect.VLANTag, keys *dissect.FlowKeys, own uint32, other *checkEntry) {
	c.conflicts++
	c.classes[c.classify(frame, m, keys, own, other)]++
	if len(c.samples) >= runstats.MaxDeviceHashSamples {
		return
	}
	s := runstats.DeviceHashConflict{
		Queue: c.queue, Frame: hex.EncodeToString(frame),
		DeviceHashFrame: runstats.DeviceHashFrame{
			DeviceHash: m.Hash, DeviceType: m.HashType.String(), Hash: own, Keys: hex.EncodeToString(keys[:]), VLANTag: tag.String(),
		},
	}
	if other != nil {
		s.Other = &runstats.DeviceHashFrame{
			DeviceHash: other.dev, DeviceType: other.devType.String(), Hash: other.own, Keys: hex.EncodeToString(other.keys[:]), VLANTag: other.tag.String(),
		}
	}
	c.samples = append(c.samples, s)
	c.newSamples = true
}
