package runstats

// SteeringReport is a --steer reta run's indirection table and the load of
// each of its buckets (RETA entries), per window; with rebalancing, what the
// rebalancer did at each interval.
type SteeringReport struct {
	RETASize int `json:"reta_size"`
	// Initial and Final are the table at the start and at the end of the
	// run: entry b is the worker of bucket b.
	Initial []uint16 `json:"initial_table"`
	Final   []uint16 `json:"final_table"`
	// BucketWindowNs is the length of each row of BucketPackets and
	// BucketBytes: the run's window, doubled as often as needed to keep
	// buckets × rows within MaxBucketCells.
	BucketWindowNs int64 `json:"bucket_window_ns"`
	// BucketPackets[k][b] and BucketBytes[k][b] are the packets and bytes
	// steered through bucket b in row k. Frames without a hash (a NIC's
	// Toeplitz gives none without IP addresses) are in no bucket.
	BucketPackets [][]uint64 `json:"bucket_packets"`
	BucketBytes   [][]uint64 `json:"bucket_bytes"`

	// Balance is how close the run's worker loads came to the best any
	// table could have done with the run's per-bucket load, in packets.
	Balance Balance `json:"balance"`

	// Reorder is the packets served out of order within their flow.
	Reorder ReorderReport `json:"reorder"`

	// Rebalance is what --rebalance did; nil for a static table.
	Rebalance *RebalanceReport `json:"rebalance,omitempty"`

	// Compare is the static run of --compare static; nil without.
	Compare *Comparison `json:"compare,omitempty"`
}

// MaxBucketCells bounds the buckets × windows a SteeringReport keeps: 2^20
// cells (16 MiB of counters) hold every window of a run of MaxWindows
// windows at 128 buckets, 1024 windows at 512 buckets, 512 at 2048.
const MaxBucketCells = 1 << 20

// Balance compares the run's max/mean worker load with the bound of its
// per-bucket load (see rebalance.Result.Bound), over the whole run.
type Balance struct {
	// MaxMean is the max/mean of the packets steered to each worker.
	MaxMean float64 `json:"max_mean"`
	// Bound is the lowest max/mean any one table could reach for the whole
	// run: the heaviest bucket cannot be split.
	Bound float64 `json:"bound"`
	// Table is a table that balances the run's total load (the
	// rebalancer's from the final table, with the whole run as one
	// interval), BalancedMaxMean its max/mean, and BalancedMoves the buckets
	// it moves from the final table.
	Table           []uint16 `json:"balanced_table"`
	BalancedMaxMean float64  `json:"balanced_max_mean"`
	BalancedMoves   int      `json:"balanced_moves"`
}

// RebalanceReport is what the rebalancer did.
type RebalanceReport struct {
	IntervalNs int64   `json:"interval_ns"`
	Threshold  float64 `json:"threshold"`
	Dwell      int     `json:"dwell"` // intervals a moved bucket stays put
	// Moves is the buckets moved over the run, Tables the tables published.
	Moves  uint64 `json:"moves"`
	Tables uint64 `json:"tables"`
	// FlowsMoved is the flows that had packets on a bucket's old worker
	// after it moved (a flow moved twice counts twice): the flows a move can
	// reorder. Flows with nothing in flight at the move are not counted.
	FlowsMoved uint64 `json:"flows_moved"`
	// Intervals are the intervals that carried load, in order. When a run
	// has more than MaxIntervals of them, neighbours are merged in pairs
	// (sums of the counts, the larger of each ratio).
	Intervals []IntervalReport `json:"intervals"`
	// Hold is the hold of moved buckets' packets, when the run held them
	// (--rebalance-hold).
	Hold *HoldReport `json:"hold,omitempty"`
}

// GetHold is r's hold report; nil when r is nil or the run held nothing.
func (r *RebalanceReport) GetHold() *HoldReport {
	if r == nil {
		return nil
	}
	return r.Hold
}

// HoldReport is what the hold of moved buckets' packets did: the new
// worker of a moved bucket holds the bucket's packets until the old worker
// has finished every packet of it.
type HoldReport struct {
	Buckets uint64 `json:"buckets"` // holds started: buckets moved
	Held    uint64 `json:"held"`    // packets held
	MaxHeld int    `json:"max_held"`
	// Overflow is the packets not held because a worker held its
	// consumer's limit already: they may be reordered.
	Overflow uint64 `json:"overflow"`
	// AtEnd is the packets still held when the run ended, handed to the
	// consumers as their backlog.
	AtEnd uint64 `json:"at_end"`
	// WaitNs and MaxWaitNs are the time the held packets waited in all,
	// from their arrival to their hand-over to the consumer, and the
	// longest wait of one.
	WaitNs    int64 `json:"wait_ns"`
	MaxWaitNs int64 `json:"max_wait_ns"`
}

// MaxIntervals bounds RebalanceReport.Intervals.
const MaxIntervals = 4096

// IntervalReport is one rebalancing interval, or several merged.
type IntervalReport struct {
	StartNs int64  `json:"start_ns"`
	Packets uint64 `json:"packets"` // in the interval's buckets
	// Before and After are max/mean of the workers' packets under the table
	// in force and under the table published for the next interval; Bound
	// the lowest any table could reach.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Bound  float64 `json:"bound"`
	// Moves is the buckets moved, MovedPackets the packets they carried in
	// the interval, Pinned the buckets that could not move for the dwell.
	Moves        int    `json:"moves"`
	MovedPackets uint64 `json:"moved_packets"`
	Pinned       int    `json:"pinned"`
}

// Comparison is the other run of `xdphash run --compare static`: the same
// traffic replayed with the static table, on the virtual clock.
type Comparison struct {
	Static *RunStats `json:"static"`
}

// ReorderReport counts the packets served while an earlier packet of their
// flow (by flow hash, in arrival order) finished later on the run's clock:
// served or dropped on another worker after the table moved the flow. A
// static table never reorders with one receive queue: each flow stays on
// one worker, and every consumer serves a flow in order.
type ReorderReport struct {
	Served    uint64 `json:"served"`
	Dropped   uint64 `json:"dropped"`
	Reordered uint64 `json:"reordered"`
	// Merged counts the times the count could not judge exactly: a
	// bucket moved again before its old worker drained it, a serve with
	// no room to wait (more kept serves than the engine holds packets),
	// or an old worker still holding the bucket at the end. Untracked counts packets the count
	// did not follow; the engine's count follows every packet, so it is
	// 0. Exact is true when both are 0.
	Untracked uint64 `json:"untracked"`
	Merged    uint64 `json:"merged"`
	Exact     bool   `json:"exact"`
}
