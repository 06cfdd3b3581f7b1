package pipeline

import (
	"errors"
	"fmt"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline/source"
)

// AFXDPSourceConfig is an AF_XDP source to open with the CPU plan of the run
// on it.
type AFXDPSourceConfig struct {
	// AFXDP is the source: Queues nil opens every receive queue of the
	// interface; RxMode is the receive mode asked for, which the plan
	// resolves when it is auto.
	AFXDP source.AFXDPConfig
	// Workers is the run's workers; WorkerCPUs pins worker w to
	// WorkerCPUs[w] (nil pins none).
	Workers    int
	WorkerCPUs []int
	// KernelCPUs is the CPUs that run the queues' kernel receive work; nil
	// reads each queue's IRQ affinity.
	KernelCPUs []int
}

// AFXDPSource is an open AF_XDP source and the CPU plan made for it.
type AFXDPSource struct {
	Source source.Source
	// Queues is the receive queues opened.
	Queues []int
	// IRQCPUs is, per queue, the CPUs its IRQs may run on, as read; empty
	// for a device with no IRQ of its own (veth) and when KernelCPUs was
	// given.
	IRQCPUs map[int][]int
	// Plan is the run's CPU plan, made before the source opened: its
	// RxMode is the source's.
	Plan CPUPlan
	// PlacementErr, when set, is why the plan places nothing: the allowed
	// CPUs or the IRQs could not be read. The source opened all the same.
	PlacementErr error
}

// OpenPlannedAFXDP plans the CPUs of a run on an AF_XDP source, from the
// CPUs this process may use and the CPUs of the queues' kernel receive
// work, and opens the source in the receive mode the plan chose. The
// caller closes AFXDPSource.Source.
func OpenPlannedAFXDP(cfg AFXDPSourceConfig) (*AFXDPSource, error) {
	iface := cfg.AFXDP.Iface
	qs := cfg.AFXDP.Queues
	if qs == nil {
		n, err := source.InterfaceQueues(iface)
		if err != nil {
			return nil, fmt.Errorf("open AF_XDP on %s: %w", iface, err)
		}
		for q := range n {
			qs = append(qs, q)
		}
	}
	s := &AFXDPSource{Queues: qs, IRQCPUs: map[int][]int{}}
	allowed, err := kernel.AllowedCPUs()
	if err != nil {
		s.PlacementErr = err
	}
	kernelCPUs := cfg.KernelCPUs
	if kernelCPUs == nil {
		irqs, err := kernel.QueueIRQCPUs(iface, qs)
		if err != nil {
			s.PlacementErr = errors.Join(s.PlacementErr, err)
		}
		for _, q := range qs {
			if cpus := irqs[q]; len(cpus) > 0 {
				s.IRQCPUs[q] = cpus
				kernelCPUs = append(kernelCPUs, cpus...)
			}
		}
	}
	s.Plan = PlanCPUs(CPUInput{
		Allowed: allowed, Loops: len(qs), Workers: cfg.Workers, KernelFed: true,
		KernelCPUs: kernelCPUs, WorkerCPUs: cfg.WorkerCPUs, RxMode: cfg.AFXDP.RxMode,
	})
	acfg := cfg.AFXDP
	acfg.Queues, acfg.RxMode = qs, s.Plan.RxMode
	if s.Source, err = source.OpenAFXDP(acfg); err != nil {
		return nil, err
	}
	return s, nil
}
