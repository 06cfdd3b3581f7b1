// Package hash turns dissected flow keys into the numbers that decide where a
// packet goes: the kernel's software flow hash, a NIC's RSS Toeplitz hash, and
// the tables that map either one to a CPU or a receive queue.
//
// # Kernel flow hash
//
// [Kernel] reproduces __flow_hash_from_keys (net/core/flow_dissector.c, 6.x),
// the hash skb_get_hash stores in skb->hash: sort the addresses and ports of a
// [dissect.FlowKeys] so both directions of a flow look alike ([Consistentify]),
// run SipHash-2-4 over the part of the keys that identifies the flow
// ([Region]), and keep the low 32 bits, with 0 replaced by 1. The kernel draws
// the SipHash key once per boot and never shows it, so values only match the
// kernel's when both use the same [Key]; what always matches is which packets
// share a hash.
//
// # NIC receive-side scaling
//
// [Toeplitz] is the hash a NIC computes over source and destination addresses
// and ports before it indexes its indirection table ([RETA]); the Microsoft
// verification suite pins it down. [Symmetry] names the ways NICs make it
// direction-independent.
//
// # Steering
//
// [RPSMap] is the kernel's software steering (get_rps_cpu, which scales the
// hash's high bits), [RETA] the NIC's (which masks its low bits). The same flow
// hash therefore lands on unrelated indices in the two tables. A table that
// changes while packets flow (package rebalance computes such tables) is
// built with [RETAFrom] and published through a [LiveRETA], which receive
// loops read with one atomic load per batch.
//
// [ParseKind] and [ParseSymmetry] read the names that [Kind.String] and
// [Symmetry.String] give (and the short symmetry names of [SymmetryNames]).
//
// Everything called per packet (hashing, CPU and queue look-ups) allocates
// nothing and reports failure as a value.
package hash
