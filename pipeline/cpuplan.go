package pipeline

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/xdphash/xdphash/pipeline/source"
)

// Idle strategy of a worker whose rings are empty: poll spinPolls times;
// then, when the plan leaves a Go processor to spare (CPUPlan.WorkerYields),
// yield it between polls that many times; then sleep until a receive loop
// wakes it or parkTimeout passes. BenchmarkPipeline measures the trade-off:
// where every processor runs a receive loop, a yield takes one from a loop;
// where one is spare, sleeping costs a thread wake-up per batch.
const yieldPolls = 4096

// CPUInput is what the CPU plan is computed from.
type CPUInput struct {
	// Procs is the Go processors (GOMAXPROCS); 0 reads it.
	Procs int
	// Allowed is the CPUs this process may run on (its affinity mask); nil
	// places nothing.
	Allowed []int
	// Loops is the receive loops, one per receive queue; Workers the workers.
	Loops, Workers int
	// KernelFed says that the kernel's receive work for the queues (the
	// driver's NAPI poll, the XDP program, filling the AF_XDP ring) runs on
	// this machine's CPUs: true for AF_XDP, false for files and synthetic
	// traffic.
	KernelFed bool
	// KernelCPUs is the CPUs that run that work, when known (a NIC queue's
	// IRQ affinity); nil when unknown (veth, whose receive work runs on the
	// sending CPU).
	KernelCPUs []int
	// WorkerCPUs pins worker w to WorkerCPUs[w] (--cpus); nil pins none.
	WorkerCPUs []int
	// RxMode is the AF_XDP receive mode asked for: auto, spin or poll ("" is
	// auto).
	RxMode source.RxMode
}

// CPUPlan is how the pipeline's goroutines share the processors, decided
// once per run from a CPUInput (PlanCPUs): the AF_XDP receive mode, how idle
// workers wait, whether receive loops step workers, and where the loops and
// workers run. Every part of the pipeline reads it; none decides on its own.
type CPUPlan struct {
	// RxMode is how an AF_XDP receive loop waits: spin or poll.
	RxMode source.RxMode
	// WorkerYields is the yields an idle worker makes before it sleeps: 0
	// when no Go processor is spare beyond the receive side.
	WorkerYields int
	// LoopsStepWorkers lets receive loops step the unpinned workers on
	// their own goroutines (as a CPU's softirq processes its own RPS
	// backlog) when every Go processor runs a receive loop: a worker's
	// goroutine would otherwise run only when a loop yields its processor.
	// A loop steps a worker it owns (index modulo the loops) once its ring
	// from the loop is OwnStepAt full, any other once it is OtherStepAt
	// full, so that no worker waits on a busy owner.
	LoopsStepWorkers       bool
	OwnStepAt, OtherStepAt float64
	// PlaceCPUs is the CPUs receive loops and unpinned workers run on, away
	// from the kernel's receive work; nil leaves them to the scheduler.
	PlaceCPUs []int
	// Procs is the Go processors the plan was made for: GOMAXPROCS, or as
	// many as PlaceCPUs has when that is fewer (more would only take turns
	// on those CPUs). The caller sets GOMAXPROCS to it.
	Procs int
	// WorkerCPUs pins worker w to WorkerCPUs[w]; nil pins none.
	WorkerCPUs []int
	// Why says, in words, what was chosen and why, for the log.
	Why []string
}

// PlanCPUs computes the plan for in.
func PlanCPUs(in CPUInput) CPUPlan {
	procs := in.Procs
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	p := CPUPlan{OwnStepAt: 0.25, OtherStepAt: 0.5, WorkerCPUs: slices.Clone(in.WorkerCPUs)}

	// Placement: away from the CPUs that run the queues' kernel receive
	// work, when they are known and leave a CPU for the pipeline.
	kernelApart := false
	if len(in.KernelCPUs) > 0 && len(in.Allowed) > 0 {
		var free []int
		for _, c := range in.Allowed {
			if !slices.Contains(in.KernelCPUs, c) {
				free = append(free, c)
			}
		}
		switch {
		case len(free) == 0:
			p.Why = append(p.Why, fmt.Sprintf("the kernel's receive work runs on every allowed CPU (%s): no placement", formatCPUs(in.KernelCPUs)))
		default:
			p.PlaceCPUs = free
			kernelApart = true
			procs = min(procs, len(free))
			p.Why = append(p.Why, fmt.Sprintf("receive loops and workers on CPUs %s with %d Go processors, away from the kernel's receive work on %s", formatCPUs(free), procs, formatCPUs(in.KernelCPUs)))
		}
	} else if in.KernelFed {
		p.Why = append(p.Why, "the CPUs of the kernel's receive work are unknown (no IRQ of the device's own): no placement")
	}

	p.Procs = procs
	// A processor is busy per receive loop, and per queue's kernel receive
	// work when that shares the pipeline's CPUs.
	busy := in.Loops
	if in.KernelFed && !kernelApart {
		busy += in.Loops
	}
	if procs > busy {
		p.WorkerYields = yieldPolls
	}
	p.LoopsStepWorkers = procs <= in.Loops && len(in.WorkerCPUs) < in.Workers
	switch {
	case p.LoopsStepWorkers:
		p.Why = append(p.Why, fmt.Sprintf("%d Go processors for %d receive loops: the loops step the workers", procs, in.Loops))
	case p.WorkerYields > 0:
		p.Why = append(p.Why, fmt.Sprintf("%d Go processors, %d busy with receiving: idle workers yield before they sleep", procs, busy))
	default:
		p.Why = append(p.Why, fmt.Sprintf("%d Go processors, all busy with receiving: idle workers sleep at once", procs))
	}

	// AF_XDP's receive mode: spinning pays only where every loop, every
	// queue's kernel work, every worker and the rest of the system have a
	// CPU each; otherwise a spinning loop takes the CPU the kernel needs to
	// fill its ring.
	if in.KernelFed {
		p.RxMode = in.RxMode
		if p.RxMode == "" || p.RxMode == source.RxAuto {
			cpus := len(in.Allowed)
			if cpus == 0 {
				cpus = runtime.NumCPU()
			}
			p.RxMode = source.RxPoll
			if cpus >= 2*in.Loops+in.Workers+1 {
				p.RxMode = source.RxSpin
			}
			p.Why = append(p.Why, fmt.Sprintf("rx mode %s: %d CPUs for %d queues (and their kernel work) and %d workers", p.RxMode, cpus, in.Loops, in.Workers))
		}
	}
	return p
}

// String is the plan in one line.
func (p CPUPlan) String() string { return strings.Join(p.Why, "; ") }

func formatCPUs(cpus []int) string { return source.FormatQueues(cpus) }
