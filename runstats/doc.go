// Package runstats is the schema of a pipeline run's statistics: what the
// engine measured per receive queue, per worker and per consumer, the
// windows, and the accounting that ties them together ([RunStats]). The
// engine (package pipeline) fills it, the consumers (package queues) report
// in its types, `xdphash run --out` writes it as JSON, and the reports and
// metrics read it; it has no behaviour beyond adding its own counters up
// ([RunStats.Account]).
//
// Every drop is counted once, under one spelling: a [DropReason],
// "stage/reason", the same in a worker's drops, a consumer's drops and the
// run's accounting.
package runstats
