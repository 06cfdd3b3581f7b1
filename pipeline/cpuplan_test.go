package pipeline

import (
	"slices"
	"testing"

	"github.com/xdphash/xdphash/pipeline/source"
)

func TestPlanCPUsRxMode(t *testing.T) {
	cpus := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	tests := []struct {
		name                  string
		mode                  source.RxMode
		queues, workers, ncpu int
		want                  source.RxMode
	}{
		{"spin asked", source.RxSpin, 4, 4, 2, source.RxSpin},
		{"poll asked", source.RxPoll, 1, 0, 64, source.RxPoll},
		{"a queue and its softirq on 2 CPUs", source.RxAuto, 1, 0, 2, source.RxPoll},
		{"a queue and its softirq on 3 CPUs", source.RxAuto, 1, 0, 3, source.RxSpin},
		{"a queue, its softirq and a worker on 3 CPUs", source.RxAuto, 1, 1, 3, source.RxPoll},
		{"2 queues on 2 CPUs", source.RxAuto, 2, 0, 2, source.RxPoll},
		{"4 queues, 7 workers on 16 CPUs", source.RxAuto, 4, 7, 16, source.RxSpin},
		{"4 queues, 8 workers on 16 CPUs", source.RxAuto, 4, 8, 16, source.RxPoll},
		{"unset is auto", "", 1, 0, 3, source.RxSpin},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanCPUs(CPUInput{Procs: 2, Allowed: cpus(tt.ncpu), Loops: tt.queues, Workers: tt.workers, KernelFed: true, RxMode: tt.mode})
			if p.RxMode != tt.want {
				t.Errorf("rx mode %s, want %s (%s)", p.RxMode, tt.want, p)
			}
		})
	}
	if p := PlanCPUs(CPUInput{Procs: 2, Loops: 1, Workers: 1}); p.RxMode != "" {
		t.Errorf("a source the kernel does not feed got rx mode %q", p.RxMode)
	}
}

func TestPlanCPUsWorkers(t *testing.T) {
	tests := []struct {
		name       string
		in         CPUInput
		wantYields bool
		wantStep   bool
	}{
		{"one processor, one loop", CPUInput{Procs: 1, Loops: 1, Workers: 2}, false, true},
		{"two processors, two loops", CPUInput{Procs: 2, Loops: 2, Workers: 2}, false, true},
		{"two processors, one loop", CPUInput{Procs: 2, Loops: 1, Workers: 2}, true, false},
		// The kernel's receive work takes the second processor.
		{"two processors, one kernel-fed loop", CPUInput{Procs: 2, Loops: 1, Workers: 2, KernelFed: true}, false, false},
		// ... unless it runs on a CPU of its own, away from the pipeline.
		{"kernel work apart", CPUInput{Procs: 2, Allowed: []int{0, 1, 2}, Loops: 1, Workers: 2, KernelFed: true, KernelCPUs: []int{2}}, true, false},
		{"pinned workers are never stepped", CPUInput{Procs: 1, Loops: 1, Workers: 1, WorkerCPUs: []int{0}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanCPUs(tt.in)
			if (p.WorkerYields > 0) != tt.wantYields || p.LoopsStepWorkers != tt.wantStep {
				t.Errorf("yields %d, loops step workers %v; want yields %v, step %v (%s)", p.WorkerYields, p.LoopsStepWorkers, tt.wantYields, tt.wantStep, p)
			}
			if p.String() == "" {
				t.Error("the plan says nothing of why")
			}
		})
	}
}

func TestPlanCPUsPlacement(t *testing.T) {
	tests := []struct {
		name    string
		allowed []int
		kernel  []int
		want    []int
	}{
		{"kernel work on CPU 0", []int{0, 1, 2, 3}, []int{0}, []int{1, 2, 3}},
		{"one CPU left", []int{0, 1}, []int{0}, []int{1}},
		{"kernel work on CPUs outside the mask", []int{2, 3}, []int{0, 1}, []int{2, 3}},
		{"kernel work everywhere", []int{0, 1}, []int{0, 1}, nil},
		{"kernel work unknown", []int{0, 1}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanCPUs(CPUInput{Procs: 2, Allowed: tt.allowed, Loops: 1, Workers: 1, KernelFed: true, KernelCPUs: tt.kernel})
			if !slices.Equal(p.PlaceCPUs, tt.want) {
				t.Errorf("placed on %v, want %v (%s)", p.PlaceCPUs, tt.want, p)
			}
			// As many Go processors as CPUs to run on, no more.
			want := 2
			if tt.want != nil {
				want = min(2, len(tt.want))
			}
			if p.Procs != want {
				t.Errorf("%d Go processors, want %d (%s)", p.Procs, want, p)
			}
		})
	}
}
