package runstats

import "strings"

// DropReason says where a record was dropped after its receive loop took the
// frame off the source, as "stage/reason".
type DropReason string

// Split is r's stage and reason: "ring", "full" for DropRingFull. A
// reason spelled without a stage (none of the constants below) is stage
// "other".
func (r DropReason) Split() (stage, reason string) {
	stage, reason, ok := strings.Cut(string(r), "/")
	if !ok {
		return "other", string(r)
	}
	return stage, reason
}

// Drops before the consumer, by the receive loop.
const (
	// DropRingFull: the ring to the worker was full (the kernel's backlog
	// drop, netdev_max_backlog).
	DropRingFull DropReason = "ring/full"
	// DropFlowLimit: the RPS flow limit dropped it (skb_flow_limit).
	DropFlowLimit DropReason = "worker/flow_limit"
)

// Drops by the consumers, the queueing disciplines behind the workers.
const (
	// DropOverlimit: over the consumer's packet limit (fifo, fq, fq_codel).
	DropOverlimit DropReason = "consumer/overlimit"
	// DropOvermemory: over fq_codel's memory limit.
	DropOvermemory DropReason = "consumer/overmemory"
	// DropCodel: CoDel's control law (fq_codel).
	DropCodel DropReason = "consumer/codel"
	// DropFQFlowLimit: over fq's per-flow packet limit.
	DropFQFlowLimit DropReason = "consumer/flow_limit"
)

// WorkerDropReasons are the reasons of WorkerReport.Drops, every one present
// in a report (zero or not).
var WorkerDropReasons = []DropReason{DropRingFull, DropFlowLimit}

// ConsumerStats counts what a consumer did; drops here are the consumer's own
// (queue limits, CoDel, flow limits), after the worker rings.
type ConsumerStats struct {
	Enqueued uint64                `json:"enqueued"`
	Dequeued uint64                `json:"dequeued"`
	Drops    map[DropReason]uint64 `json:"drops"` // by reason: DropOverlimit, DropCodel, ...
	CEMarks  uint64                `json:"ce_marks"`
	Backlog  int                   `json:"backlog"`
}

// Account fills st.Accounting from the queues' and workers' counters: what
// the receive loops took, what the consumers served or hold, and every drop
// by reason. It is the one place the totals are added up, for a live view and
// for the final report alike.
func (st *RunStats) Account() {
	acc := Accounting{Dropped: map[DropReason]uint64{}, KernelDrops: map[string]uint64{}, ReplayDrops: map[string]uint64{}}
	for _, q := range st.Queues {
		acc.Received += q.Stats.Frames
		acc.KernelDrops["rx_dropped"] += q.Stats.RxDropped
		acc.KernelDrops["rx_invalid_descs"] += q.Stats.RxInvalidDescs
		acc.KernelDrops["rx_ring_full"] += q.Stats.RxRingFull
		acc.KernelDrops["rx_left_on_ring"] += q.Stats.RxLeftOnRing
		acc.ReplayDrops["ring_full"] += q.Stats.ReplayRingFull
		acc.ReplayDrops["unreceived"] += q.Stats.Unreceived
	}
	offeredOK := true
	for _, w := range st.Workers {
		for reason, n := range w.Drops {
			acc.Dropped[reason] += n
		}
		c := &w.Consumer
		held := c.Dequeued + uint64(c.Backlog)
		acc.Processed += c.Dequeued
		acc.Unserved += uint64(c.Backlog)
		for reason, n := range c.Drops {
			acc.Dropped[reason] += n
			held += n
		}
		// What a consumer reports must account for every record its worker
		// gave it, or the totals below would balance by accident.
		offeredOK = offeredOK && held == w.Packets
	}
	var dropped uint64
	for _, n := range acc.Dropped {
		dropped += n
	}
	acc.Balanced = offeredOK && acc.Received == acc.Processed+acc.Unserved+dropped
	st.Accounting = acc
}

// Total is the sum of every drop after the receive loops.
func (a *Accounting) Total() uint64 {
	var n uint64
	for _, v := range a.Dropped {
		n += v
	}
	return n
}
