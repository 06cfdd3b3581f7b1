// Package dissect computes the kernel's flow keys of an Ethernet frame: the
// 80-byte struct flow_keys that skb_flow_dissect_flow_keys fills, byte for
// byte, as __skb_flow_dissect (net/core/flow_dissector.c) reads the frame.
//
// # Slow path
//
// [DissectFrame] is the reference: one state machine with the kernel's state
// variables (the ethertype, the network and transport offsets, the IP
// protocol, the re-dispatch count) and verdicts, a step per protocol named
// after its kernel counterpart, and one exit that writes the keys for a good
// and a bad end alike. Every read goes through a bounded header view
// (headers.go), so a truncated or malformed frame ends the dissection the way
// the kernel's does, never out of bounds. docs/kernel-fidelity.md lists the
// rules it follows, where the running kernel differs from the written
// specification, and how it is checked against the kernel itself
// (BPF_PROG_TEST_RUN, package verify).
//
// # Fast paths
//
// Per packet shape ([Shape]: eth_ip, vlan, qinq, pppoe, mpls, ipip, gre, and
// under a descent policy entering their tunnel vxlan and gtpu) a
// straight-line function checks the whole shape's length once and writes the
// keys at constant offsets. The contract: a fast path writes exactly the 80
// bytes the slow path writes, or declines, and the slow path then resumes
// where it stopped. The equivalence tests and the differential fuzzer
// (FuzzFastSlow) enforce it; docs/fast-paths.md describes the contract and
// the figures.
//
// # Dissector, gates and auto mode
//
// A [Dissector] classifies each frame ([ClassifyFrame]), runs the fast path
// of its shape when that shape's gate is open ([Gates]), and counts per shape
// what each path did ([Counters]). Auto mode ([Dissector.EnableAuto]) opens
// and closes the gates from the measured share of frames each fast path
// accepts, against the costs in [DefaultCosts]; it never changes a key byte.
//
// # UDP tunnel descent (opt-in)
//
// A [Descent] policy (off by default) makes the slow path enter VXLAN,
// Geneve, GTP-U, GUE and FOU tunnels and hash the inner flow, by the rules
// of the net-next v1 series that proposes it (descent.go,
// docs/kernel-fidelity.md): [DissectDescend], [Dissector.SetDescent]. No
// released kernel does this; without a policy not a key byte and not an
// instruction changes (walk_descend.go is walk generated with the
// descent's steps).
//
// Nothing here allocates per frame or returns an error per frame: failure is
// a value. [FlowKeys] is a plain 80-byte array with accessors named after the
// kernel's fields.
package dissect
