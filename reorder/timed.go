package reorder

import "fmt"

// Tag is a packet's number within its flow modulo 2^16, as a packet's
// 64-byte record carries it: TimedCounter recovers the whole number from
// the flow's oldest unfinished packet, which is exact while a flow has
// fewer than 2^16 packets unfinished.
type Tag uint16

// TimedCounter counts reordering by the model's clock rather than by the
// order in which it hears of it: a served packet counts when an earlier
// packet of its flow (in arrival order) finished, served or dropped,
// strictly later than it was served. Finish may be called in any order
// (workers report on their own goroutines, each in the order of its own
// clock), and the count is the same whatever that order: what a virtual
// clock run needs to stay deterministic. A Counter, by contrast, counts in
// the order Serve and Drop are called, which is the truth of a live run.
//
// Each flow's packets are taken in arrival order as their finishes come
// in: a finish ahead of the flow's oldest unfinished packet waits in a
// table of pending finishes. Both tables are bounded (NewTimed); when one
// is full the count is no longer exact and Stats says so.
type TimedCounter struct {
	flows   []timedFlow
	fmask   uint64
	fused   int
	flimit  int
	pending []pendingFinish
	pmask   uint64
	pused   int
	plimit  int
	stats   Stats
}

type timedFlow struct {
	id   uint64
	next Seq   // the next arrival's number; 0: the slot is free
	low  Seq   // the oldest packet whose finish has not been taken
	most int64 // the latest finish of the packets before low
}

// pendingFinish is a finish that came before those of earlier packets of
// its flow.
type pendingFinish struct {
	id     uint64
	seq    Seq // 0: the slot is free
	at     int64
	served bool
}

// NewTimed returns a TimedCounter for up to maxFlows flows with packets
// unfinished at once and up to maxPending finishes ahead of their flows'
// oldest unfinished packets, each from 1 to MaxFlows.
func NewTimed(maxFlows, maxPending int) (*TimedCounter, error) {
	if maxFlows < 1 || maxFlows > MaxFlows || maxPending < 1 || maxPending > MaxFlows {
		return nil, fmt.Errorf("create timed reorder counter: %w: %d flows and %d pending finishes, want 1 to %d each", ErrConfig, maxFlows, maxPending, MaxFlows)
	}
	pow := func(n int) int {
		p := 2
		for p < 2*n {
			p *= 2
		}
		return p
	}
	nf, np := pow(maxFlows), pow(maxPending)
	return &TimedCounter{
		flows: make([]timedFlow, nf), fmask: uint64(nf - 1), flimit: maxFlows,
		pending: make([]pendingFinish, np), pmask: uint64(np - 1), plimit: maxPending,
	}, nil
}

// Stats returns what the counter has seen so far. Merged counts the
// finishes it could not place exactly: a flow with 2^16 packets or more
// unfinished, a finish of a packet it did not number, or a full table of
// pending finishes (the flow's older packets were then taken as finished).
func (c *TimedCounter) Stats() Stats { return c.stats }

func mix(id uint64) uint64 {
	id ^= id >> 33
	id *= 0xff51afd7ed558ccd
	id ^= id >> 33
	return id
}

func (c *TimedCounter) findFlow(id uint64) int {
	for i := mix(id) & c.fmask; ; i = (i + 1) & c.fmask {
		f := &c.flows[i]
		if f.next == 0 {
			return -1
		}
		if f.id == id {
			return int(i)
		}
	}
}

// Arrive numbers the next packet of flow id and returns its tag; ok is
// false when the flow table is full and the packet goes untracked.
func (c *TimedCounter) Arrive(id uint64) (tag Tag, ok bool) {
	i := mix(id) & c.fmask
	for ; ; i = (i + 1) & c.fmask {
		f := &c.flows[i]
		if f.next == 0 {
			break
		}
		if f.id == id {
			seq := f.next
			f.next++
			return Tag(seq), true
		}
	}
	if c.fused == c.flimit {
		c.stats.Untracked++
		return 0, false
	}
	c.fused++
	c.flows[i] = timedFlow{id: id, next: 2, low: 1, most: -1 << 63}
	return 1, true
}

// Finish records that the packet of flow id tagged tag was served
// (served) or dropped at time at. Call it once per tracked packet.
func (c *TimedCounter) Finish(id uint64, tag Tag, at int64, served bool) {
	i := c.findFlow(id)
	if i < 0 {
		c.stats.Merged++
		return
	}
	f := &c.flows[i]
	if f.next-f.low > 1<<16 {
		c.stats.Merged++
	}
	seq := f.low + Seq(uint16(tag-Tag(f.low)))
	if seq != f.low {
		if c.pused < c.plimit {
			c.putPending(pendingFinish{id: id, seq: seq, at: at, served: served})
			return
		}
		// No room to wait: take the older packets as finished.
		c.stats.Merged++
		f.low = seq
	}
	c.take(f, at, served)
	for f.low < f.next {
		p := c.findPending(id, f.low)
		if p < 0 {
			break
		}
		pf := c.pending[p]
		c.removePending(p)
		c.take(f, pf.at, pf.served)
	}
	if f.low == f.next {
		c.removeFlow(i)
	}
}

// take counts the finish of f's oldest packet.
func (c *TimedCounter) take(f *timedFlow, at int64, served bool) {
	if served {
		c.stats.Served++
		if at < f.most {
			c.stats.Reordered++
		}
	} else {
		c.stats.Dropped++
	}
	f.most = max(f.most, at)
	f.low++
}

func (c *TimedCounter) pendingHome(id uint64, seq Seq) uint64 {
	return mix(id^uint64(seq)*0x9e3779b97f4a7c15) & c.pmask
}

func (c *TimedCounter) putPending(p pendingFinish) {
	i := c.pendingHome(p.id, p.seq)
	for c.pending[i].seq != 0 {
		i = (i + 1) & c.pmask
	}
	c.pending[i] = p
	c.pused++
}

func (c *TimedCounter) findPending(id uint64, seq Seq) int {
	if c.pused == 0 {
		return -1
	}
	for i := c.pendingHome(id, seq); ; i = (i + 1) & c.pmask {
		p := &c.pending[i]
		if p.seq == 0 {
			return -1
		}
		if p.id == id && p.seq == seq {
			return int(i)
		}
	}
}

// removePending and removeFlow are backward-shift deletions, as
// Counter.remove.
func (c *TimedCounter) removePending(i int) {
	c.pused--
	hole := uint64(i)
	for j := (hole + 1) & c.pmask; c.pending[j].seq != 0; j = (j + 1) & c.pmask {
		if h := c.pendingHome(c.pending[j].id, c.pending[j].seq); (j-h)&c.pmask >= (j-hole)&c.pmask {
			c.pending[hole] = c.pending[j]
			hole = j
		}
	}
	c.pending[hole] = pendingFinish{}
}

func (c *TimedCounter) removeFlow(i int) {
	c.fused--
	hole := uint64(i)
	for j := (hole + 1) & c.fmask; c.flows[j].next != 0; j = (j + 1) & c.fmask {
		if h := mix(c.flows[j].id) & c.fmask; (j-h)&c.fmask >= (j-hole)&c.fmask {
			c.flows[hole] = c.flows[j]
			hole = j
		}
	}
	c.flows[hole] = timedFlow{}
}

// CountInFlight adds to counts[id & mask] one per flow with packets in
// flight (arrived, not all finished): with flow hashes as ids and a table's
// size - 1 as mask, the flows of each bucket that a move can reorder. It
// reads the whole flow table.
func (c *TimedCounter) CountInFlight(mask uint64, counts []int) {
	for i := range c.flows {
		if f := &c.flows[i]; f.next != 0 {
			counts[f.id&mask]++
		}
	}
}
