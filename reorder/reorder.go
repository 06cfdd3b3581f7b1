package reorder

import (
	"errors"
	"fmt"
)

// ErrConfig reports a flow table size New refuses.
var ErrConfig = errors.New("invalid reorder counter configuration")

// MaxFlows bounds New's flow table: a slot is 96 bytes and there are two
// per flow, so the largest table takes 192 MiB.
const MaxFlows = 1 << 20

// Runs is how many separate runs of finished packets a flow may have ahead
// of its oldest unfinished packet. A worker serves a flow's packets in
// arrival order, so what newer workers serve while an old one still holds
// packets of the flow makes one run per move not yet drained, and a packet
// dropped from the middle of a queue (as CoDel drops at the head) one more
// until the packets before it are finished.
const Runs = 4

// Seq is a packet's number within its flow, from 1 in arrival order. The
// zero Seq marks a packet the counter does not track (its table was full).
type Seq uint64

// run is the finished packets from lo up to, not including, hi.
type run struct{ lo, hi Seq }

// flow is a flow's state while it has packets in flight.
type flow struct {
	id   uint64
	next Seq // the Seq of the flow's next arrival; 0: the slot is free
	low  Seq // the oldest unfinished packet; every earlier one is finished
	runs [Runs]run
	n    uint8 // runs in use, in order, each past low and separated by gaps
}

// Stats is what a Counter has seen.
type Stats struct {
	// Served and Dropped count the tracked packets served and dropped.
	Served, Dropped uint64
	// Reordered counts the served packets that had an earlier packet of
	// their flow still in flight.
	Reordered uint64
	// Untracked counts packets that arrived while the flow table was full
	// (every slot a flow with packets in flight): they are not numbered and
	// count neither way.
	Untracked uint64
	// Merged counts the times a flow had more than Runs runs of finished
	// packets: the gap between its two closest runs was then taken as
	// finished, and packets served later in that flow may be counted too
	// low.
	Merged uint64
}

// Exact reports whether Reordered is the exact count: no packet went
// untracked and no runs were merged.
func (s Stats) Exact() bool { return s.Untracked == 0 && s.Merged == 0 }

// Counter counts reordered packets over a bounded flow table. A flow holds a
// slot only while it has packets in flight (arrived, neither served nor
// dropped), so a counter made for as many flows as packets can be in
// flight at once never fills.
type Counter struct {
	slots []flow
	mask  uint64
	used  int
	limit int
	stats Stats
}

// New returns a counter for up to maxFlows flows with packets in flight at
// once, from 1 to MaxFlows. Its table has twice as many slots, rounded up to
// a power of two, so that look-ups stay short when it is full.
func New(maxFlows int) (*Counter, error) {
	if maxFlows < 1 || maxFlows > MaxFlows {
		return nil, fmt.Errorf("create reorder counter: %w: %d flows, want 1 to %d", ErrConfig, maxFlows, MaxFlows)
	}
	n := 2
	for n < 2*maxFlows {
		n *= 2
	}
	return &Counter{slots: make([]flow, n), mask: uint64(n - 1), limit: maxFlows}, nil
}

// Stats returns what the counter has seen so far.
func (c *Counter) Stats() Stats { return c.stats }

// InFlight is the number of flows with packets in flight.
func (c *Counter) InFlight() int { return c.used }

// home is the first slot a flow id probes: ids may be flow hashes, whose
// low bits are what the indirection table already split on, so mix them.
func (c *Counter) home(id uint64) uint64 {
	id ^= id >> 33
	id *= 0xff51afd7ed558ccd
	id ^= id >> 33
	return id & c.mask
}

// find returns the slot of flow id, or -1.
func (c *Counter) find(id uint64) int {
	for i := c.home(id); ; i = (i + 1) & c.mask {
		s := &c.slots[i]
		if s.next == 0 {
			return -1
		}
		if s.id == id {
			return int(i)
		}
	}
}

// Arrive numbers the next packet of flow id, in arrival order. It returns
// 0, untracked, when the flow has no slot and the table is full.
func (c *Counter) Arrive(id uint64) Seq {
	i := c.home(id)
	for ; ; i = (i + 1) & c.mask {
		s := &c.slots[i]
		if s.next == 0 {
			break
		}
		if s.id == id {
			s.next++
			return s.next - 1
		}
	}
	if c.used == c.limit {
		c.stats.Untracked++
		return 0
	}
	c.used++
	c.slots[i] = flow{id: id, next: 2, low: 1}
	return 1
}

// Serve records that packet seq of flow id was served, and reports whether
// an earlier packet of the flow was still in flight.
func (c *Counter) Serve(id uint64, seq Seq) (reordered bool) {
	i := c.lookup(id, seq)
	if i < 0 {
		return false
	}
	c.stats.Served++
	reordered = seq > c.slots[i].low
	if reordered {
		c.stats.Reordered++
	}
	c.finish(i, seq)
	return reordered
}

// Drop records that packet seq of flow id was dropped: it will never be
// served, and later packets no longer wait for it.
func (c *Counter) Drop(id uint64, seq Seq) {
	if i := c.lookup(id, seq); i >= 0 {
		c.stats.Dropped++
		c.finish(i, seq)
	}
}

// lookup returns the slot of flow id if seq is one of its packets in
// flight, or -1: seq 0 (untracked), and a packet already finished or taken
// as finished by a merge, are not.
func (c *Counter) lookup(id uint64, seq Seq) int {
	if seq == 0 {
		return -1
	}
	i := c.find(id)
	if i < 0 {
		return -1
	}
	f := &c.slots[i]
	if seq < f.low || seq >= f.next {
		return -1
	}
	if f.finished(seq) {
		return -1
	}
	return i
}

// finished reports whether seq, past low, lies in one of the runs.
func (f *flow) finished(seq Seq) bool {
	for _, r := range f.runs[:f.n] {
		if seq >= r.lo && seq < r.hi {
			return true
		}
	}
	return false
}

// finish marks packet seq of the flow in slot i as finished: it advances
// low past it and the run it joins, or records it in the runs ahead.
func (c *Counter) finish(i int, seq Seq) {
	f := &c.slots[i]
	if seq == f.low {
		f.low++
		if f.n > 0 && f.runs[0].lo == f.low {
			f.low = f.runs[0].hi
			copy(f.runs[:], f.runs[1:f.n])
			f.n--
		}
		if f.low == f.next {
			c.remove(i)
		}
		return
	}
	// seq is past low: join a neighbouring run, or start one in order.
	k := 0
	for k < int(f.n) && f.runs[k].hi < seq {
		k++
	}
	switch {
	case k < int(f.n) && f.runs[k].hi == seq:
		f.runs[k].hi++
		if k+1 < int(f.n) && f.runs[k+1].lo == f.runs[k].hi {
			f.runs[k].hi = f.runs[k+1].hi
			copy(f.runs[k+1:], f.runs[k+2:f.n])
			f.n--
		}
	case k < int(f.n) && f.runs[k].lo == seq+1:
		f.runs[k].lo = seq
	default:
		if int(f.n) == Runs {
			c.merge(f)
			if !f.finished(seq) {
				c.finish(i, seq)
			}
			return
		}
		copy(f.runs[k+1:f.n+1], f.runs[k:f.n])
		f.runs[k] = run{seq, seq + 1}
		f.n++
	}
}

// merge frees a run by joining the two runs with the smallest gap between
// them, the gap taken as finished.
func (c *Counter) merge(f *flow) {
	c.stats.Merged++
	best := 0
	for k := 1; k+1 < int(f.n); k++ {
		if f.runs[k+1].lo-f.runs[k].hi < f.runs[best+1].lo-f.runs[best].hi {
			best = k
		}
	}
	f.runs[best].hi = f.runs[best+1].hi
	copy(f.runs[best+1:], f.runs[best+2:f.n])
	f.n--
}

// remove frees slot i and moves later entries of its probe sequence back,
// so that no look-up stops early at the hole (backward-shift deletion for
// linear probing).
func (c *Counter) remove(i int) {
	c.used--
	hole := uint64(i)
	for j := (hole + 1) & c.mask; c.slots[j].next != 0; j = (j + 1) & c.mask {
		// The entry at j may fill the hole if its home is not in the cyclic
		// range (hole, j].
		if h := c.home(c.slots[j].id); (j-h)&c.mask >= (j-hole)&c.mask {
			c.slots[hole] = c.slots[j]
			hole = j
		}
	}
	c.slots[hole] = flow{}
}
