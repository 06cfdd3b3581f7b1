package kernel

import "time"

// CPUTime is a CPU's time since boot as /proc/stat counts it, in its units
// of USER_HZ ticks.
type CPUTime struct {
	// Busy is every state but idle, iowait and steal: user, nice, system,
	// irq and softirq.
	Busy time.Duration
	// Softirq is the time in softirqs alone: where the kernel's receive
	// work runs (veth's NAPI poll, the XDP program, the copy into an
	// AF_XDP socket's UMEM), on the CPU that raised it.
	Softirq time.Duration
}
