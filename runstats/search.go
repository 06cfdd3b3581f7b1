package runstats

// SearchSchemaVersion is the version of SearchReport, the search section of
// a run statistics file written by `xdphash soak --search`. Bump it when a
// field changes meaning or disappears; adding fields keeps it.
const SearchSchemaVersion = 1

// SearchReport is a rate search's record (`xdphash soak --search`): the
// bracket each goal reached and every trial. The run statistics it sits in
// are those of one trial, StatsTrial: the highest rate that passed the first
// goal (else the last trial that has statistics).
type SearchReport struct {
	SchemaVersion int    `json:"schema_version"`
	Lab           string `json:"lab"`     // "veth" or "virtio"
	Profile       string `json:"profile"` // the generator's profile (or pcap:FILE)
	// Floor is the lowest rate searched and Max the generator's measured
	// maximum, frames per second; Width the relative width goal.
	Floor float64 `json:"floor"`
	Max   float64 `json:"max"`
	Width float64 `json:"width"`
	// TrialNs is each trial's length; BudgetNs the search's whole budget
	// (--duration), SpentNs what it took.
	TrialNs     int64         `json:"trial_ns"`
	BudgetNs    int64         `json:"budget_ns"`
	SpentNs     int64         `json:"spent_ns"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Error       string        `json:"error,omitempty"` // why the search ended early (the floor out of reach, ...)
	Goals       []SearchGoal  `json:"goals"`
	Trials      []SearchTrial `json:"trials"`
	StatsTrial  int           `json:"stats_trial"` // -1: no trial's statistics
}

// SearchGoal is one goal's result: Lower is the highest rate (frames per
// second asked) that passed below Upper, the lowest that failed; an end
// not found is 0 with its trial -1. Status is "found" (within the width
// goal), "budget" (the budget ran out first), "below floor", "generator
// limit" (the generator's maximum passed) or "interrupted".
type SearchGoal struct {
	Name       string  `json:"name"`       // "NDR", "PDR(0.5%)"
	LossRatio  float64 `json:"loss_ratio"` // the most a passing trial lost, a share of the frames sent
	Status     string  `json:"status"`
	Lower      float64 `json:"lower"`
	LowerTrial int     `json:"lower_trial"`
	Upper      float64 `json:"upper"`
	UpperTrial int     `json:"upper_trial"`
}

// SearchTrial is one trial at a fixed rate.
type SearchTrial struct {
	Rate       float64 `json:"rate"`          // frames per second asked; the maximum's reached rate when Max
	Max        bool    `json:"max,omitempty"` // the generator unpaced, as fast as it can
	DurationNs int64   `json:"duration_ns"`   // asked
	ElapsedNs  int64   `json:"elapsed_ns"`    // how long the generator sent
	Sent       uint64  `json:"sent"`
	Bytes      uint64  `json:"bytes"` // of the frames sent, without FCS
	// Achieved is the frames per second the generator sent, Sustained
	// whether that is the rate asked (within the search's tolerance): a
	// trial that is not is no pass.
	Achieved  float64 `json:"achieved"`
	Sustained bool    `json:"sustained"`
	// Lost is every frame sent that no consumer served or holds: the drops
	// at every stage (Drops) and any frame missing from the counts.
	Lost      uint64  `json:"lost"`
	LossRatio float64 `json:"loss_ratio"`
	Pass      []bool  `json:"pass"` // per goal, in Goals' order
	// Drops are the trial's drops by stage: "veth/tx_dropped" (the veth's
	// ring refused it), "guest/rx_dropped" (the guest's NIC, beyond the AF_XDP drops it counts too), "kernel/REASON"
	// (AF_XDP's XDP_STATISTICS: rx_ring_full, rx_dropped, ...), the
	// engine's DropReasons (ring/full, consumer/codel, ...) and
	// "unaccounted" (lost but counted nowhere: still in flight at the end).
	Drops map[string]uint64 `json:"drops"`
	// CPU is what the trial's traffic cost, by kind of thread.
	CPU         SearchCPU `json:"cpu"`
	Interrupted bool      `json:"interrupted,omitempty"`
}

// SearchCPU is a trial's CPU time by kind of thread, from /proc: the
// generator's sending threads, the pipeline (Pipeline "process": xdphash's
// receive loops, workers and Go runtime; "guest": the virtio lab's QEMU)
// and the softirqs of every CPU. Valid is false when /proc could not be
// read.
type SearchCPU struct {
	GeneratorNs int64  `json:"generator_ns"`
	PipelineNs  int64  `json:"pipeline_ns"`
	SoftirqNs   int64  `json:"softirq_ns"`
	Pipeline    string `json:"pipeline"`
	Valid       bool   `json:"valid"`
}
