package pktgen

// Built-in profiles for load-aware steering (docs/rebalance.md): traffic
// whose load a static indirection table spreads unevenly.

// elephantsProfile: 16 elephant flows carry half the frames, over 4080 mice.
// Each elephant is about 3% of the traffic, so with 4 workers (a mean of 25%
// each) a table that balances them exists, but which workers the elephants'
// buckets land on depends on the hash key, and a static table leaves some
// workers with several.
func elephantsProfile() Profile {
	return Profile{
		Name: "elephants", Flows: 4096, Cycle: 65536, Seed: 1,
		Mix: mix("ipv4/tcp", 3, "ipv6/tcp", 1),
		// 0.004 of each shape's flows: 12 of 3072 and 4 of 1024.
		FlowSizes:  FlowSizes{Dist: Elephants, ElephantFlows: 0.004, ElephantShare: 0.5},
		FrameSizes: IMIX(),
	}
}

// collideProfile: a few heavy flows that collide in one bucket whatever the
// hash key. 30% of the frames are IPv4/TCP behind an MPLS label; the
// kernel's flow dissector stops at MPLS, so every one of those flows (a few
// elephants among them) has the same flow keys, hence one hash and one
// bucket under any SipHash key. No table can split that bucket: with 4
// workers the busiest carries at least 30% against a mean of 25%, a bound of
// 1.2 on max/mean. (A NIC's Toeplitz hash sees no IP header behind MPLS and
// reports no hash: those frames stay on their receive queue.)
func collideProfile() Profile {
	return Profile{
		Name: "collide", Flows: 4096, Cycle: 65536, Seed: 1,
		Mix:        mix("ipv4/tcp", 70, "mpls/ipv4/tcp", 30),
		FlowSizes:  FlowSizes{Dist: Elephants, ElephantFlows: 0.01, ElephantShare: 0.5},
		FrameSizes: IMIX(),
	}
}

// hotSetProfile: a hot set of 16 flows carries half the frames, 4 of them
// replaced in each eighth of the cycle, over 4080 other flows. A cycle is
// 3,000,000 frames, so that at 1 Mpps the hot set moves on every 375 ms,
// a few of a rebalancer's 100 ms intervals: a table balanced for one phase
// is off for the next. Frames are 64 bytes: xdphash run --synthetic holds
// every frame of the cycle in memory.
func hotSetProfile() Profile {
	return Profile{
		Name: "hotset", Flows: 4096, Cycle: 3_000_000, Seed: 1,
		Mix:        mix("ipv4/tcp", 3, "ipv6/tcp", 1),
		FlowSizes:  FlowSizes{Dist: Uniform},
		FrameSizes: FixedSize(64),
		HotSet:     HotSet{Flows: 16, Share: 0.5, Phases: 8, Step: 4},
	}
}
