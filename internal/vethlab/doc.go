// Package vethlab builds the test network xdphash's tests, soaks and benchmarks
// run on: a network namespace of its own and a multi-queue veth pair, one end
// (Host) in the caller's namespace, the other (Peer) inside the new one. Names
// are unique (they carry the process id), and Close removes everything; labs left
// behind by a process that died (kill -9) are swept by the next New.
//
// xdphash never sends on an interface it did not create: traffic generators
// send from Peer, the pipeline receives on Host.
package vethlab
