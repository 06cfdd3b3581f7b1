//go:build !linux

package kernel

import "fmt"

// SetAffinity fails with ErrNotSupported: pinning threads needs Linux.
func SetAffinity(cpu int) error {
	return fmt.Errorf("pin thread to CPU %d: %w: needs Linux", cpu, ErrNotSupported)
}

// AllowedCPUs fails with ErrNotSupported: it needs Linux.
func AllowedCPUs() ([]int, error) {
	return nil, fmt.Errorf("read CPU affinity: %w: needs Linux", ErrNotSupported)
}

// SetAffinityMask fails with ErrNotSupported: it needs Linux.
func SetAffinityMask(cpus []int) error {
	return fmt.Errorf("set thread affinity to CPUs %v: %w: needs Linux", cpus, ErrNotSupported)
}

// QueueIRQCPUs fails with ErrNotSupported: it needs Linux.
func QueueIRQCPUs(iface string, queues []int) (map[int][]int, error) {
	return nil, fmt.Errorf("read IRQ affinity of %s: %w: needs Linux", iface, ErrNotSupported)
}
