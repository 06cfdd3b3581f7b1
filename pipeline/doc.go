// Package pipeline is xdphash's pipeline: the engine that runs one receive
// loop per receive queue of a source (package pipeline/source) and one
// worker per modelled CPU, and the CPU plan that decides how they share the
// machine.
//
// A receive loop takes a batch of frames off its queue, dissects each frame
// once (package dissect), hashes it and picks its worker (package hash), and
// writes a 64-byte queues.Record straight into the ring to that worker, as
// the kernel's RPS does; nothing downstream parses the frame again. A worker
// drains its rings into its consumer, a model of the queueing discipline
// behind the CPU (package queues), and serves it at the service rate. Every
// counter is published once; [Engine.Stats] derives the run's statistics
// (package runstats) from them for the status line, the live metrics and the
// final report alike.
//
// A capture or synthetic source is one stream; [OpenPcap], [NewPcap] and
// [NewSynthetic] put the pipeline's first stage in front of it, which
// spreads it over virtual receive queues by the RSS model of a NIC
// ([RSSConfig], hash.NewRSSSpread): the sources themselves neither dissect
// nor hash.
//
// Steered by an indirection table (hash.SteerRETA), the loops also count the
// load of each table bucket and, with [RebalanceConfig], hand it to a
// rebalance.Rebalancer at each interval, whose new table they pick up with
// one atomic load per batch; every such run counts the packets a move
// reorders (docs/rebalance.md).
//
// [PlanCPUs] computes, once per run, how the loops and workers share the
// processors: AF_XDP's receive mode, how idle workers wait, whether receive
// loops step the workers themselves (as a CPU's softirq processes its own
// RPS backlog) and where the goroutines run, away from the CPUs that run the
// queues' kernel receive work. [OpenPlannedAFXDP] makes the plan of a run on
// an AF_XDP source from the queues' IRQ CPUs and opens the source in the
// receive mode the plan chose.
//
// [EngineConfig.Check] is the one place of the engine's limits; a caller
// runs it before it opens a source, and NewEngine runs it again. A limit is
// reported as a [LimitError] that names the field, for a caller to put in
// its own words (the CLI names the flag).
package pipeline
