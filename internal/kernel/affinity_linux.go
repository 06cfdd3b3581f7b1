package kernel

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cpuSetSize is the number of CPUs a unix.CPUSet holds (glibc's CPU_SETSIZE,
// 1024), which x/sys/unix does not export.
const cpuSetSize = int(unsafe.Sizeof(unix.CPUSet{})) * 8

// SetAffinity pins the calling OS thread to cpu with sched_setaffinity (pid 0
// is the calling thread, not the process). Call it from a goroutine that
// holds runtime.LockOSThread and never unlocks it: when such a goroutine
// exits, the runtime ends its thread instead of handing the pinned thread to
// other goroutines.
func SetAffinity(cpu int) error {
	if cpu < 0 || cpu >= cpuSetSize {
		return fmt.Errorf("pin thread to CPU %d: want a CPU number from 0 to %d", cpu, cpuSetSize-1)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin thread to CPU %d: %w (hint: --cpus takes CPUs of this process's affinity mask, see taskset -p %d)", cpu, err, unix.Getpid())
	}
	return nil
}

// SetAffinityMask restricts the calling OS thread to cpus (a set, not one
// CPU); the same rules as SetAffinity apply.
func SetAffinityMask(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= cpuSetSize {
			return fmt.Errorf("set thread affinity to CPUs %v: want CPU numbers from 0 to %d", cpus, cpuSetSize-1)
		}
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("set thread affinity to CPUs %v: %w", cpus, err)
	}
	return nil
}

// AllowedCPUs returns the CPUs the calling thread may run on, in ascending
// order (sched_getaffinity): the CPUs a worker can be pinned to.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	var cpus []int
	for c := range cpuSetSize {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
