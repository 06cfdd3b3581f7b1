package queues

import "github.com/xdphash/xdphash/runstats"

// Consumer is what a worker feeds: a model of the queueing discipline behind one
// CPU (fifo, fq, fq_codel). Calls come in batches, one interface call per batch,
// never per packet. A consumer is not safe for concurrent use: whoever steps
// its worker holds the worker's lock.
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
	Stats() runstats.ConsumerStats
	// Report returns the counters and the fairness among the flows served
	// so far (a fifo has only the counters).
	Report() runstats.ConsumerReport
}

// Budget is how much a worker may serve in one Dequeue call.
type Budget struct {
	Packets int
	Bytes   int64
}
