package runstats

import (
	"time"

	"github.com/xdphash/xdphash/dissect"
)

// SchemaVersion is the version of the run statistics JSON (RunStats). Bump it
// when a field changes meaning or disappears; adding fields keeps it.
// docs/report-schema.md says what each version changed.
const SchemaVersion = 4

// RunStats is what one run of the pipeline measured: written by `xdphash run
// --out`, read by `xdphash report`. The engine fills the receive, steering and
// worker parts; each worker's consumer fills its Consumer part.
type RunStats struct {
	SchemaVersion int       `json:"schema_version"`
	Started       time.Time `json:"started"`
	Host          Host      `json:"host"`
	DurationNs    int64     `json:"duration_ns"` // on the run's clock: wall time, or from 0 to the last arrival (Config.Clock "virtual")
	Config        RunConfig `json:"config"`

	Queues  []QueueReport    `json:"queues"`  // one per receive queue
	Workers []WorkerReport   `json:"workers"` // one per worker
	Shapes  dissect.Counters `json:"shapes"`  // dissector counters, all receive loops together
	Windows []WindowReport   `json:"windows"` // per time window, in order

	Steering *SteeringReport `json:"steering,omitempty"` // --steer reta: the table and its buckets' load

	Accounting Accounting `json:"accounting"`

	HashSources HashSources       `json:"hash_sources"`           // frames by where their hash came from
	DeviceHash  *DeviceHashCheck  `json:"device_hash,omitempty"`  // --check-device-hash
	DeviceQueue *DeviceQueueCheck `json:"device_queue,omitempty"` // --check-device-queue

	// Search is the rate search these statistics are one trial of (soak
	// --search), versioned by its own schema_version.
	Search *SearchReport `json:"search,omitempty"`
}

// RunConfig records how the run was set up.
type RunConfig struct {
	Source      string `json:"source"` // "afxdp:IFACE", "pcap:FILE", "synthetic:PROFILE"
	Hash        string `json:"hash"`   // "kernel" or "toeplitz"
	Symmetric   string `json:"symmetric,omitempty"`
	Steer       string `json:"steer"`    // "rps" or "reta"
	Consumer    string `json:"consumer"` // "fifo", "fq", "fq_codel"
	Gates       string `json:"gates"`
	Descent     string `json:"descent,omitempty"` // the opt-in UDP tunnel descent (dissect.Descent), when on
	CPUs        []int  `json:"cpus"`
	RingSize    int    `json:"ring_size"`
	FlowLimit   int    `json:"flow_limit,omitempty"`
	ServiceRate string `json:"service_rate,omitempty"`
	RxMode      string `json:"rx_mode,omitempty"` // what AF_XDP receive chose: "spin" or "poll"
	Flows       int    `json:"flows,omitempty"`   // consumer flow buckets (fq_codel flows, fq orphan_mask+1)

	Workers  int    `json:"workers"`
	HashKey  string `json:"hash_key,omitempty"` // the kernel hash's SipHash key, 32 hex digits: --hash-key reproduces the run
	Clock    string `json:"clock"`              // "wall", or "virtual": timed by the source's arrival stamps
	Replay   string `json:"replay,omitempty"`   // how a file or synthetic source was paced: "max", "recorded" or a rate
	WindowNs int64  `json:"window_ns"`          // length of each WindowReport
	CPUPlan  string `json:"cpu_plan,omitempty"` // what the CPU plan chose and why
	// QueueSpread says what put each frame on its receive queue: "device"
	// (a NIC's RSS), "rss" (the model of it, for files and synthetic
	// traffic over virtual queues), "sender" (a veth's sending thread: each
	// generator thread sends on its own queue) or "" (one queue).
	QueueSpread string `json:"queue_spread,omitempty"`

	XDPProgram string `json:"xdp_program,omitempty"` // AF_XDP: which XDP program fed the sockets, and why
}

// QueueReport is one receive queue.
type QueueReport struct {
	Queue int        `json:"queue"`
	Stats QueueStats `json:"stats"`
	// Steered[w] is the packets this queue's receive loop sent to worker w.
	Steered []uint64 `json:"steered"`
	// Drops are the frames this queue's receive loop dropped on their way
	// to the workers, by reason (DropRingFull, DropFlowLimit): its part of
	// the workers' Drops. Absent in a run.json from before them.
	Drops map[DropReason]uint64 `json:"drops,omitempty"`
}

// QueueStats counts one receive queue's traffic: the frames its receive loop
// took, and the kernel's drops before the loop saw them, where the source
// can learn of them (AF_XDP's XDP_STATISTICS); other sources leave those
// zero. The engine fills it from the source's own counters.
type QueueStats struct {
	Frames uint64 `json:"frames"` // frames the receive loop took
	Bytes  uint64 `json:"bytes"`  // their wire bytes
	// AF_XDP socket statistics (struct xdp_statistics).
	RxDropped      uint64 `json:"rx_dropped"`       // dropped by the kernel for other reasons
	RxInvalidDescs uint64 `json:"rx_invalid_descs"` // dropped: invalid descriptor
	RxRingFull     uint64 `json:"rx_ring_full"`     // dropped: the RX ring was full
	FillRingEmpty  uint64 `json:"fill_ring_empty"`  // times the fill ring had no frame for the kernel
	TxInvalidDescs uint64 `json:"tx_invalid_descs"` // (transmit side, unused here)
	TxRingEmpty    uint64 `json:"tx_ring_empty"`    // (transmit side, unused here)
	// ReplayRingFull is the frames a capture replay dropped because the
	// queue's receive loop fell behind the replay's pace and its ring of
	// batches was full: only a replay asked to drop (--replay-drops, the
	// model of a NIC's full RX ring) does; no kernel is involved.
	ReplayRingFull uint64 `json:"replay_ring_full"`
	// Unreceived is the frames a capture replay read and queued that no
	// receive loop took before the run stopped (the ready batches left when
	// the source was closed).
	Unreceived uint64 `json:"unreceived"`
	// RxLeftOnRing is the frames the kernel had put on the AF_XDP RX ring
	// that were still there when the source closed: the receive loops take
	// what their rings hold when a run stops (up to one ring's worth), so
	// only a ring refilled faster than that leaves any.
	RxLeftOnRing uint64 `json:"rx_left_on_ring"`
}

// KernelDrops is the kernel's drops before the queue's receive loop took
// the frames: AF_XDP's XDP_STATISTICS, and the frames left on the RX ring
// at the stop.
func (s QueueStats) KernelDrops() uint64 {
	return s.RxDropped + s.RxInvalidDescs + s.RxRingFull + s.RxLeftOnRing
}

// ReplayDrops is a capture replay's drops before the queue's receive loop
// took the frames: its full ring, and the frames left unreceived when the
// run stopped.
func (s QueueStats) ReplayDrops() uint64 { return s.ReplayRingFull + s.Unreceived }

// LostBeforeLoop is every frame lost before the queue's receive loop took
// it: the kernel's drops and a capture replay's.
func (s QueueStats) LostBeforeLoop() uint64 { return s.KernelDrops() + s.ReplayDrops() }

// Add adds o's counts to s.
func (s *QueueStats) Add(o QueueStats) {
	s.Frames += o.Frames
	s.Bytes += o.Bytes
	s.RxDropped += o.RxDropped
	s.RxInvalidDescs += o.RxInvalidDescs
	s.RxRingFull += o.RxRingFull
	s.FillRingEmpty += o.FillRingEmpty
	s.TxInvalidDescs += o.TxInvalidDescs
	s.TxRingEmpty += o.TxRingEmpty
	s.ReplayRingFull += o.ReplayRingFull
	s.Unreceived += o.Unreceived
	s.RxLeftOnRing += o.RxLeftOnRing
}

// WorkerReport is one worker (one modelled CPU).
type WorkerReport struct {
	Worker   int                   `json:"worker"`
	CPU      int                   `json:"cpu"` // -1 when not pinned
	Packets  uint64                `json:"packets"`
	Bytes    uint64                `json:"bytes"`
	Drops    map[DropReason]uint64 `json:"drops"` // before the consumer: DropRingFull, DropFlowLimit
	Consumer ConsumerReport        `json:"consumer"`
}

// ConsumerReport is what a worker's consumer saw: its counters and the
// fairness among the flows it served.
type ConsumerReport struct {
	ConsumerStats
	Flows FlowReport `json:"flows"`
	// Sojourn time percentiles (ns) of served packets: p50, p90, p99, max.
	SojournNs map[string]int64 `json:"sojourn_ns,omitempty"`
	// MaxBacklog is the most records the consumer held at once.
	MaxBacklog int `json:"max_backlog,omitempty"`
}

// FlowReport describes the flows inside one consumer, with memory bounded
// whatever the number of flows: exact per-bucket counts, a heavy-hitter sketch
// for the top flows.
type FlowReport struct {
	Active     int       `json:"active"`           // flows (distinct hashes, estimated when large) served
	Buckets    int       `json:"buckets"`          // buckets in use (fq_codel flow slots, fq orphan flows)
	Collisions int       `json:"collisions"`       // buckets shared by more than one flow
	Jain       float64   `json:"jain"`             // Jain's index of per-flow throughput over active flows
	Shares     []float64 `json:"shares,omitempty"` // per-flow byte shares, largest first, capped
	Top        []TopFlow `json:"top,omitempty"`

	// Slots is the consumer's flow slots (fq_codel flows, fq orphan_mask+1),
	// the bins its flows are hashed into; 0 for a consumer without any.
	Slots int `json:"slots,omitempty"`
	// Served is the buckets that served traffic: the flows, as the
	// consumer's scheduler sees them, over which Jain and Shares are taken.
	Served int `json:"served,omitempty"`
}

// TopFlow is one heavy hitter.
type TopFlow struct {
	Hash    uint32 `json:"hash"`
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	SPort   uint16 `json:"sport"`
	DPort   uint16 `json:"dport"`
	Proto   uint8  `json:"proto"`
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	// ErrorBytes bounds the sketch's overestimate of Bytes.
	ErrorBytes uint64 `json:"error_bytes,omitempty"`
	// ErrorPackets bounds the sketch's overestimate of Packets.
	ErrorPackets uint64 `json:"error_packets,omitempty"`
}

// WindowReport is one time window of the run.
type WindowReport struct {
	StartNs       int64    `json:"start_ns"` // from the run's start
	QueuePackets  []uint64 `json:"queue_packets"`
	QueueBytes    []uint64 `json:"queue_bytes"`
	WorkerPackets []uint64 `json:"worker_packets"` // served by the worker's consumer
	WorkerBytes   []uint64 `json:"worker_bytes"`
	WorkerBacklog []int    `json:"worker_backlog"` // consumer queue depth at the window's end
	WorkerDrops   []uint64 `json:"worker_drops"`   // every drop after the receive loops in the window, by worker
	// QueueKernelDrops are the drops before each receive loop in the
	// window, the kernel's (AF_XDP ring full, ...) or a capture replay's
	// (QueueStats.LostBeforeLoop): no worker had the frame yet.
	QueueKernelDrops []uint64 `json:"queue_kernel_drops"`
}

// Accounting adds up: Received = Processed + the sum of Dropped, exactly.
type Accounting struct {
	Received  uint64 `json:"received"`  // frames the receive loops took off the sources
	Processed uint64 `json:"processed"` // frames a consumer served
	// Unserved are the frames still held in a consumer at the end (its
	// backlog), never served: a slow --service-rate leaves them.
	Unserved uint64                `json:"unserved"`
	Dropped  map[DropReason]uint64 `json:"dropped"` // every drop after the receive loop took the frame, by reason
	// KernelDrops are the kernel's drops before the receive loops (AF_XDP's
	// rx_ring_full, rx_dropped, rx_invalid_descs), not part of Received.
	KernelDrops map[string]uint64 `json:"kernel_drops"`
	// ReplayDrops are a capture replay's drops before the receive loops
	// (ring_full: a receive loop fell behind a replay asked to drop;
	// unreceived: queued, but not taken when the run stopped), not part of
	// Received.
	ReplayDrops map[string]uint64 `json:"replay_drops"`
	// Balanced is true when Received = Processed + Unserved + the drops, and each
	// consumer's counters account for every record its worker gave it.
	Balanced bool `json:"balanced"`
}

// Host is the machine a run ran on.
type Host struct {
	Kernel   string `json:"kernel"`    // uname -r
	CPUModel string `json:"cpu_model"` // /proc/cpuinfo's model name
	CPUs     int    `json:"cpus"`      // CPUs the process may use (GOMAXPROCS's default)
	Go       string `json:"go"`        // the Go release that built xdphash
}
