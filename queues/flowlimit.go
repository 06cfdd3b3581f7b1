package queues

// FlowLimitHistory is FLOW_LIMIT_HISTORY (include/linux/netdevice.h): the
// number of recent packets a flow limit table remembers.
const FlowLimitHistory = 1 << 7

// DefaultFlowLimitTableLen is the default of sysctl
// net.core.flow_limit_table_len.
const DefaultFlowLimitTableLen = 4096

// MaxFlowLimitTableLen bounds the table: the kernel's history holds bucket
// numbers as u16.
const MaxFlowLimitTableLen = 1 << 16

// goldenRatio32 is GOLDEN_RATIO_32 of include/linux/hash.h.
const goldenRatio32 = 0x61C88647

// FlowLimit is the kernel's RPS flow limit (struct sd_flow_limit and
// skb_flow_limit in net/core/dev.c, CONFIG_NET_FLOW_LIMIT), which protects a
// backlog from elephant flows: once the target backlog is at least half full,
// every packet's flow hash is remembered in a history of the last
// FlowLimitHistory packets, counted per bucket, and a packet whose bucket then
// holds more than half of the history is dropped.
//
// Precisely, for a packet whose backlog length before enqueueing is qlen
// (skb_flow_limit, Linux 6.10+):
//
//	if qlen < max_backlog/2: accept, history untouched
//	new := hash_32(hash, log2(table_len))   // (hash * 0x61C88647) >> (32 - log)
//	old := history[head]; history[head] = new; head = (head+1) % FlowLimitHistory
//	if buckets[old] > 0: buckets[old]--
//	buckets[new]++; drop when buckets[new] > FlowLimitHistory/2
//
// The history starts as zeros with empty buckets (the kernel's kzalloc).
// Those zeros stand for bucket 0 without having been counted in it, and
// aging one out takes a count from bucket 0 all the same, so bucket 0 is
// under-counted: a bucket-0 flow alone from the start never counts above 1
// and is never limited. The kernel's quirk, kept. Like the kernel's, the table
// belongs to the CPU that enqueues (this_cpu_ptr in skb_flow_limit): with RPS
// that is the receiving CPU, so here the receive loop owns one table for all
// the workers it feeds, and qlen is the occupancy of the ring to the target
// worker. A FlowLimit is used by one goroutine only.
type FlowLimit struct {
	log     uint8
	head    int
	history [FlowLimitHistory]uint16
	buckets []uint8
	count   uint64 // packets dropped
}

// NewFlowLimit returns a table of tableLen buckets, rounded up to a power of
// two as the kernel does (flow_limit_table_len_sysctl), and at least 2.
func NewFlowLimit(tableLen int) *FlowLimit {
	tableLen = min(max(tableLen, 2), MaxFlowLimitTableLen)
	log := uint8(0)
	for 1<<log < tableLen {
		log++
	}
	return &FlowLimit{log: log, buckets: make([]uint8, 1<<log)}
}

// Limited applies skb_flow_limit to a packet of flow hash h arriving at a
// backlog that holds qlen packets and may hold maxBacklog: true means drop it.
func (f *FlowLimit) Limited(h uint32, qlen, maxBacklog int) bool {
	if qlen < maxBacklog>>1 {
		return false
	}
	// hash_32 keeps the high bits of the product: the bucket masks nothing.
	nb := uint16((h * goldenRatio32) >> (32 - uint32(f.log)))
	old := f.history[f.head]
	f.history[f.head] = nb
	f.head = (f.head + 1) & (FlowLimitHistory - 1)
	if f.buckets[old] > 0 {
		f.buckets[old]--
	}
	f.buckets[nb]++
	if f.buckets[nb] > FlowLimitHistory>>1 {
		f.count++
		return true
	}
	return false
}

// Count is the number of packets the table has dropped (sd_flow_limit.count,
// the flow_limit_count column of /proc/net/softnet_stat).
func (f *FlowLimit) Count() uint64 { return f.count }
