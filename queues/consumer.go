package queues

// Consumer is what a worker feeds: a model of the queueing discipline behind one
// CPU (fifo, fq, fq_codel). Calls come in batches, one interface call per batch,
// never per packet. A consumer is used by one worker goroutine only.
type Consumer interface {
	// Enqueue offers records that arrived at now (nanoseconds on the run's
	// clock). Records the consumer drops (its limits) are counted in its stats.
	Enqueue(recs []Record, now int64)
	// Dequeue serves records in the discipline's order while the budget lasts
	// and appends them to out. A budget field <= 0 means no limit on that unit.
	Dequeue(now int64, budget Budget, out []Record) []Record
	// Backlog is the number of records queued.
	Backlog() int
	// Stats returns the consumer's counters so far.
	Stats() ConsumerStats
}

// Budget is how much a worker may serve in one Dequeue call.
type Budget struct {
	Packets int
	Bytes   int64
}

// ConsumerStats counts what a consumer did; drops here are the consumer's own
// (queue limits, CoDel, flow limits), after the worker rings.
type ConsumerStats struct {
	Enqueued uint64            `json:"enqueued"`
	Dequeued uint64            `json:"dequeued"`
	Drops    map[string]uint64 `json:"drops"` // by reason, e.g. "overlimit", "codel", "flow_limit"
	CEMarks  uint64            `json:"ce_marks"`
	Backlog  int               `json:"backlog"`
}
