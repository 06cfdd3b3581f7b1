// Package vethlab builds the test network xdphash's tests, soaks and benchmarks
// run on: a network namespace of its own and a multi-queue veth pair, one end
// (Host) in the caller's namespace, the other (Peer) inside the new one. Names
// are unique (they carry the process id), and Close removes everything. The
// namespace is held by a file descriptor only, so a process that dies (kill -9)
// leaves nothing: the kernel frees the namespace with its last reference, and
// the veth pair with it. A lab that asks for a named namespace (for tools that
// enter it by name) leaves its mount behind on kill -9; the next New sweeps it.
//
// xdphash never sends on an interface it did not create: traffic generators
// send from Peer, the pipeline receives on Host.
package vethlab
