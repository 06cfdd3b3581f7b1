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
