package queues

import (
	"fmt"
	"strings"
	"time"
)

// Kernel defaults of the fair consumers (sch_fq_codel.c, sch_fq.c, codel.h),
// for a 1500-byte MTU Ethernet device.
const (
	DefaultMTU            = 1500     // device MTU; quanta and CoDel's "mtu" add the 14-byte Ethernet header
	DefaultFlows          = 1024     // fq_codel flows; fq orphan_mask + 1
	DefaultFQCodelLimit   = 10240    // fq_codel limit, packets
	DefaultFQLimit        = 10000    // fq limit, packets
	DefaultMemoryLimit    = 32 << 20 // fq_codel memory_limit, bytes
	DefaultTarget         = 5 * time.Millisecond
	DefaultInterval       = 100 * time.Millisecond
	DefaultDropBatch      = 64  // fq_codel drop_batch_size
	DefaultFQFlowLimit    = 100 // fq flow_limit, packets per flow
	DefaultRefillDelay    = 40 * time.Millisecond
	DefaultTopFlows       = 64      // counters of each consumer's heavy-hitter sketch
	maxFlows              = 65536   // fq_codel refuses more flows
	minFQCodelQuantum     = 256     // fq_codel raises a smaller quantum to this
	maxQuantum            = 1 << 20 // both refuse a larger quantum
	ethHeaderLen          = 14      // hard_header_len of Ethernet
	minMTU                = 68      // IPv4's minimum MTU, Ethernet's minimum in the kernel
	maxTopFlows           = 4096    // a larger sketch would not be "bounded memory"
	defaultFQQuantumMTUs  = 2       // fq quantum = 2 × (MTU + header)
	defaultFQInitialRatio = 10      // fq initial_quantum = 10 × (MTU + header)
)

// ConsumerConfig holds the parameters of the fair consumers, as the CLI sets
// them from flags (--flows, --quantum, --target, ...). A zero field means
// the kernel's default for the consumer it configures, so the zero
// ConsumerConfig is "tc qdisc add ... fq_codel" (or fq) with no options.
type ConsumerConfig struct {
	// MTU is the device MTU the defaults derive from (quantum, CoDel's mtu).
	MTU int
	// Flows is fq_codel's flows (hash buckets, 1 to 65536) or fq's
	// orphan_mask + 1 (a power of two): how many flows forwarded traffic
	// can be told apart as.
	Flows int
	// Quantum is the bytes a flow may send per round: fq_codel's quantum
	// (default MTU+14, raised to at least 256) or fq's (default 2×(MTU+14)).
	Quantum int
	// InitialQuantum is the credit a new fq flow starts with (default
	// 10×(MTU+14)).
	InitialQuantum int
	// Limit is the packets the whole consumer holds (fq_codel 10240, fq
	// 10000, fifo 1000).
	Limit int
	// MemoryLimit is fq_codel's memory_limit in bytes of skb truesize
	// (default 32 MiB): a packet is charged its length plus skbOverhead.
	MemoryLimit int64
	// Target and Interval are CoDel's (fq_codel): 5 ms and 100 ms.
	Target, Interval time.Duration
	// ECN makes CoDel mark packets CE instead of dropping them, every packet
	// being taken as ECN-capable. The kernel's fq_codel has ECN on by
	// default; the model has it off, to show drops, unless asked.
	ECN bool
	// DropBatch is fq_codel's drop_batch_size: the most packets dropped from
	// the fattest flow at once when over a limit (default 64).
	DropBatch int
	// FlowLimit is fq's flow_limit, packets per flow (default 100).
	FlowLimit int
	// RefillDelay is fq's flow_refill_delay (default 40 ms): a flow idle for
	// longer comes back with at least one quantum of credit.
	RefillDelay time.Duration
	// TopFlows is the number of counters of each consumer's heavy-hitter
	// sketch (default 64).
	TopFlows int
	// StampArrival makes fq and fq_codel take each packet's Arrival as its
	// enqueue time, instead of the time Enqueue is given: on a virtual
	// clock, where a worker takes a chunk of records at once and real
	// timing cuts the chunks, a packet then enters its queue when it
	// arrives, whatever the cut.
	StampArrival bool
}

// fqCodelParams are a ConsumerConfig resolved for fq_codel.
type fqCodelParams struct {
	flows, limit, dropBatch int
	quantum                 int32
	memoryLimit             int64
	codel                   codelParams
	topFlows                int
	stampArrival            bool
}

// fqParams are a ConsumerConfig resolved for fq.
type fqParams struct {
	orphanMask              uint32
	limit, flowLimit        int
	quantum, initialQuantum int32
	refillDelay             int64
	topFlows                int
	stampArrival            bool
}

// or returns v, or def when v is zero.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// common resolves and checks what both fair consumers share.
func (c ConsumerConfig) common() (mtu, flows, topFlows int, err error) {
	mtu = or(c.MTU, DefaultMTU) + ethHeaderLen
	flows = or(c.Flows, DefaultFlows)
	topFlows = or(c.TopFlows, DefaultTopFlows)
	switch {
	case c.MTU != 0 && (c.MTU < minMTU || c.MTU > maxQuantum):
		err = fmt.Errorf("%w: MTU %d, want %d to %d", ErrConfig, c.MTU, minMTU, maxQuantum)
	case flows < 1 || flows > maxFlows:
		err = fmt.Errorf("%w: %d flows, want 1 to %d", ErrConfig, flows, maxFlows)
	case topFlows < 1 || topFlows > maxTopFlows:
		err = fmt.Errorf("%w: %d top flows, want 1 to %d", ErrConfig, topFlows, maxTopFlows)
	case c.Quantum < 0 || c.Quantum > maxQuantum:
		err = fmt.Errorf("%w: quantum %d, want 1 to %d bytes", ErrConfig, c.Quantum, maxQuantum)
	case c.Limit < 0:
		err = fmt.Errorf("%w: limit %d packets (hint: leave it 0 for the default)", ErrConfig, c.Limit)
	}
	return mtu, flows, topFlows, err
}

func (c ConsumerConfig) fqCodel() (fqCodelParams, error) {
	mtu, flows, top, err := c.common()
	if err == nil {
		switch {
		case c.MemoryLimit < 0 || c.MemoryLimit > 1<<31:
			err = fmt.Errorf("%w: memory limit %d, want up to 2 GiB", ErrConfig, c.MemoryLimit)
		case c.Target < 0 || c.Interval < 0 || c.DropBatch < 0:
			err = fmt.Errorf("%w: negative target, interval or drop batch", ErrConfig)
		}
	}
	if err != nil {
		return fqCodelParams{}, fmt.Errorf("configure fq_codel: %w", err)
	}
	return fqCodelParams{
		flows:       flows,
		limit:       or(c.Limit, DefaultFQCodelLimit),
		dropBatch:   or(c.DropBatch, DefaultDropBatch),
		quantum:     int32(max(or(c.Quantum, mtu), minFQCodelQuantum)),
		memoryLimit: or(c.MemoryLimit, DefaultMemoryLimit),
		codel: codelParams{
			target:   toCodelTime(int64(or(c.Target, DefaultTarget))),
			interval: toCodelTime(int64(or(c.Interval, DefaultInterval))),
			mtu:      uint32(mtu),
			ecn:      c.ECN,
		},
		topFlows:     top,
		stampArrival: c.StampArrival,
	}, nil
}

func (c ConsumerConfig) fq() (fqParams, error) {
	mtu, flows, top, err := c.common()
	if err == nil {
		switch {
		case flows&(flows-1) != 0:
			err = fmt.Errorf("%w: %d flows is not a power of two (fq's orphan_mask + 1)", ErrConfig, flows)
		case c.InitialQuantum < 0 || c.FlowLimit < 0 || c.RefillDelay < 0:
			err = fmt.Errorf("%w: negative initial quantum, flow limit or refill delay", ErrConfig)
		}
	}
	if err != nil {
		return fqParams{}, fmt.Errorf("configure fq: %w", err)
	}
	return fqParams{
		orphanMask:     uint32(flows - 1),
		limit:          or(c.Limit, DefaultFQLimit),
		flowLimit:      or(c.FlowLimit, DefaultFQFlowLimit),
		quantum:        int32(or(c.Quantum, defaultFQQuantumMTUs*mtu)),
		initialQuantum: int32(or(c.InitialQuantum, defaultFQInitialRatio*mtu)),
		refillDelay:    int64(or(c.RefillDelay, DefaultRefillDelay)),
		topFlows:       top,
		stampArrival:   c.StampArrival,
	}, nil
}

// ConsumerNames are the consumers New builds, the values of --consumer.
var ConsumerNames = []string{"fifo", "fq", "fq_codel"}

// New returns a maker of consumer name configured by c, one consumer per
// call: fifo (which takes only Limit), fq or fq_codel. It checks c once, so
// that the maker cannot fail.
func (c ConsumerConfig) New(name string) (func() Consumer, error) {
	switch name {
	case "fq_codel":
		p, err := c.fqCodel()
		if err != nil {
			return nil, err
		}
		return func() Consumer { return newFQCodel(p) }, nil
	case "fq":
		p, err := c.fq()
		if err != nil {
			return nil, err
		}
		return func() Consumer { return newFQ(p) }, nil
	case "fifo":
		if c.Limit < 0 {
			return nil, fmt.Errorf("configure fifo: %w: limit %d packets", ErrConfig, c.Limit)
		}
		limit := or(c.Limit, DefaultFIFOLimit)
		return func() Consumer { return NewFIFO(limit) }, nil
	}
	return nil, fmt.Errorf("configure consumer: %w: no consumer %q (hint: one of %s)", ErrConfig, name, strings.Join(ConsumerNames, ", "))
}
