// Package fairness holds the pure measures xdphash reports about how fairly
// traffic is spread: Jain's index, the max/mean imbalance and what hashing
// alone would give (balls into bins), and the bounded-memory sketches that
// summarise a stream of packets whatever its number of flows: a heavy-hitter
// sketch ([SpaceSaving]), a distinct counter ([Distinct], a HyperLogLog) and a
// log-scale histogram ([LogHistogram]).
//
// The sketches are written for the per-packet path: their Add methods take no
// lock, allocate nothing and make no interface call. None of them is safe for
// concurrent use; give each worker its own.
//
// It imports nothing else of xdphash, so that both the consumers (package
// queues) and the reports can use it.
package fairness
