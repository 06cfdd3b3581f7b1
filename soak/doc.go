// Package soak runs the whole receive side against generated traffic and
// checks it: it builds a network namespace and a multi-queue veth pair
// (internal/vethlab), receives on the host end with AF_XDP through the
// engine (package queues), sends a pktgen profile from the peer end inside the
// namespace, and at the end checks that every frame sent is accounted for at
// every stage, that sampled frames hash and steer as the offline dissector and
// hash say, and that memory and goroutines stay flat. `xdphash soak` is its
// command.
package soak
