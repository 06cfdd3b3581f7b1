// Package queues is the receive side after the parse: the receive loop that
// dissects, hashes and steers each frame of a pipeline source to a worker, like
// RPS; the bounded single-producer/single-consumer rings between them; the
// per-core workers; and the fairness consumers behind them (fifo, fq, fq_codel).
//
// Each worker has a goroutine. When every Go processor runs a receive loop,
// the receive loops also step the workers themselves, as a CPU's softirq
// processes its own RPS backlog: a worker's goroutine would otherwise run
// only when a loop yields its processor.
package queues
