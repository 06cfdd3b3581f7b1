// Package queues is the receive side after the parse: the receive loop that
// dissects, hashes and steers each frame of a pipeline source to a worker, like
// RPS; the bounded single-producer/single-consumer rings between them; the
// per-core workers; and the fairness consumers behind them (fifo, fq, fq_codel).
package queues
