package soak

import (
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pktgen"
)

// CPUUse is the CPU time a soak's traffic cost while the generator sent and
// (on veth) the frames in flight drained, by kind of thread, from /proc: the
// generator's sending threads (their own /proc/thread-self), the pipeline
// (this process's time less the generator's: receive loops, workers and the
// Go runtime; in the virtio lab the whole QEMU guest), and the softirqs of
// every CPU (the kernel's receive work where it runs outside a task). A
// kind that could not be read is 0 and its Valid flag false.
type CPUUse struct {
	GeneratorNs int64 `json:"generator_ns"`
	PipelineNs  int64 `json:"pipeline_ns"`
	SoftirqNs   int64 `json:"softirq_ns"`
	// Pipeline says what PipelineNs covers: "process" (this process less
	// the generator's threads) or "guest" (the virtio lab's QEMU process).
	Pipeline string `json:"pipeline"`
	Valid    bool   `json:"valid"`
}

// PerFrame is each kind's CPU time per frame of n, in ns.
func (c CPUUse) PerFrame(n uint64) (generator, pipeline, softirq float64) {
	if n == 0 {
		return 0, 0, 0
	}
	f := float64(n)
	return float64(c.GeneratorNs) / f, float64(c.PipelineNs) / f, float64(c.SoftirqNs) / f
}

// cpuMeter reads the CPU times at a start and an end.
type cpuMeter struct {
	pid            int // the process whose time is the pipeline's; 0: this one
	proc, softirq  time.Duration
	procOK, softOK bool
}

func startCPU(pid int) cpuMeter {
	m := cpuMeter{pid: pid}
	var err error
	m.proc, err = kernel.ProcessCPUTime(pid)
	m.procOK = err == nil
	m.softirq, err = kernel.SoftirqTime()
	m.softOK = err == nil
	return m
}

// stop is the use since start, gen's threads being the generator's; the
// generator's time is taken out of the pipeline's when they share this
// process.
func (m cpuMeter) stop(gen pktgen.Report) CPUUse {
	c := CPUUse{Pipeline: "process", Valid: m.procOK && m.softOK}
	if m.pid != 0 {
		c.Pipeline = "guest"
	}
	for _, t := range gen.Threads {
		c.GeneratorNs += int64(t.CPUTime)
	}
	if p, err := kernel.ProcessCPUTime(m.pid); err == nil && m.procOK {
		c.PipelineNs = int64(p - m.proc)
		if m.pid == 0 {
			c.PipelineNs = max(0, c.PipelineNs-c.GeneratorNs)
		}
	} else {
		c.Valid = false
	}
	if s, err := kernel.SoftirqTime(); err == nil && m.softOK {
		c.SoftirqNs = int64(s - m.softirq)
	} else {
		c.Valid = false
	}
	return c
}
