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
// [PlanCPUs] computes, once per run, how the loops and workers share the
// processors: AF_XDP's receive mode, how idle workers wait, whether receive
// loops step the workers themselves (as a CPU's softirq processes its own
// RPS backlog) and where the goroutines run, away from the CPUs that run the
// queues' kernel receive work.
package pipeline
