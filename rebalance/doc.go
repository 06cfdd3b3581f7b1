// Package rebalance computes load-aware indirection tables in the manner of
// RSS++ (Barbette, Katsikas, Maguire, Kostic, CoNEXT 2019): given how much
// load each bucket of a NIC's RSS indirection table ([hash.RETA]) carried in
// the last interval, it moves the fewest buckets it can from overloaded to
// underloaded workers so that every worker's load falls under a threshold on
// max/mean imbalance, and says how close the result is to the best any table
// could do with that load.
//
// A [Rebalancer] is called once per interval (RSS++ uses about 100 ms), off
// the per-packet path: it reuses its buffers and allocates nothing per call.
// [Rebalancer.Apply] does a whole interval for a table in force: it reads the
// table from a [hash.LiveRETA], rebalances it and, when a bucket moved,
// publishes the new one ([hash.RETAFrom], [hash.LiveRETA.Store]); receive
// loops read it with one atomic load per batch.
//
// The unit of movement is the bucket: all flows whose hash falls in a bucket
// move together, and a bucket carrying one elephant flow cannot be split, so
// no table can bring the busiest worker below the heaviest bucket
// ([Result.Bound]). docs/rebalance.md describes the model, the algorithm and
// its limits.
package rebalance
