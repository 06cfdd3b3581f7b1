// Package pktgen is xdphash's traffic generator: profiles of traffic, the
// frames they make, and senders that put those frames on an interface fast
// enough to load an AF_XDP receiver.
//
// # Profiles
//
// A Profile names a mix of shapes (header stacks such as "vlan/ipv4/tcp",
// "qinq/pppoe/ipv6/udp", "ipv4/gre/eth/ipv4/tcp", and frames only the slow
// path dissects: "ipv4+frag/udp", "ipv6+hbh/tcp", "ipv6+label/tcp"), a number
// of flows, a flow-size distribution (uniform, Zipf, elephants and mice),
// frame lengths (fixed, a range, IMIX or any weighted list), the share of
// reply-direction frames, and optionally a hot set: a few flows at a time
// carrying a share of the frames, shifting over the cycle (HotSet).
// Profiles come built in (simple, datacenter, isp, tunnels, and elephants,
// collide and hotset for rebalancing; see Builtin) or from YAML
// (ParseProfile):
//
//	name: campus
//	flows: 4096
//	cycle: 16384            # frames before the traffic repeats
//	seed: 7
//	reply_share: 0.3
//	flow_sizes: {dist: zipf, exponent: 1.2}   # or uniform, or
//	                        # {dist: elephants, flows: 0.05, share: 0.8}
//	frame_sizes: imix       # or 64, or 64-1500, or {64: 7, 576: 4, 1500: 1}
//	mix:
//	  ipv4/tcp: 60
//	  vlan/ipv6/udp: 30
//	  ipv6+frag/udp: 10
//
// A hot set is one more field, hot_set: {flows: 16, share: 0.5, phases: 8,
// step: 4}: in each eighth of the cycle 16 flows carry half the frames, and
// from one eighth to the next the hot set moves on by 4 flows.
//
// Addresses come only from 198.18.0.0/15 and 2001:db8::/32 and source MACs
// are locally administered; the destination MAC is the receiver's.
//
// # Schedules and streams
//
// NewSchedule turns a profile into one cycle of frames in mix order: shapes
// interleaved evenly by weight, each shape's flows shuffled by their sizes,
// reply frames and frame lengths spread over them. Each distinct frame is
// built once with package corpus's layer builder; since all payload bytes are
// zero, a frame is its first kernel.HeadLen (128) bytes and a length, and a
// buffer becomes any frame by a 128-byte copy. Frames returns the cycle as
// slices (for an in-memory source), Stream yields it without allocating, and
// the senders rewrite the same heads in place: in a page of the kernel's page
// pool (xdp), an AF_XDP UMEM frame (afxdp) or a socket buffer (packet).
//
// # Senders
//
// Run sends a schedule out of one interface, from threads pinned to CPUs,
// always bounded by a count or a duration, optionally at a rate:
//
//   - xdp: BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES (Linux 5.18), like
//     xdp-tools' xdp-trafficgen: an XDP program writes each frame's head into
//     a recycled page and returns XDP_TX. On a veth the receiving end must run
//     NAPI (an XDP program, or GRO on) or the kernel drops every frame
//     silently. A run of more than one frame has a fixed start-up cost (the
//     test run swaps the program into the XDP dispatcher and out again;
//     docs/pktgen-pacing.md), so runs are long, a count or duration ends them by
//     signalling the thread, and a rate is kept by the program itself, frame
//     by frame (kernel.XDPSender.Pace): short runs could only send bursts,
//     and bursts overrun a receiver that keeps up with the rate.
//   - afxdp: AF_XDP transmit in copy mode (no XDP program needed). It and
//     packet keep a rate in batches of 50 µs's worth of frames.
//   - packet: AF_PACKET with sendmmsg and PACKET_QDISC_BYPASS.
//   - kernel: the kernel's pktgen module through /proc/net/pktgen, when the
//     kernel has it: IPv4/UDP with the profile's flows and frame lengths only.
//
// On a veth, frames sent with XDP_TX arrive on the other end's receive
// queue numbered by the sending CPU (modulo the queue count), and afxdp's on
// the queue its socket is bound to: pinning threads to different CPUs (and
// binding them to different queues) spreads them over queues.
package pktgen
