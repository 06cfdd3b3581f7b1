//go:build !linux

package kernel

import (
	"fmt"
	"time"
)

// ThreadCPUTime fails with ErrNotSupported: it reads Linux's /proc.
func ThreadCPUTime() (time.Duration, error) {
	return 0, fmt.Errorf("read CPU time: %w", ErrNotSupported)
}

// ProcessCPUTime fails with ErrNotSupported: it reads Linux's /proc.
func ProcessCPUTime(int) (time.Duration, error) {
	return 0, fmt.Errorf("read CPU time: %w", ErrNotSupported)
}

// SoftirqTime fails with ErrNotSupported: it reads Linux's /proc.
func SoftirqTime() (time.Duration, error) {
	return 0, fmt.Errorf("read softirq time: %w", ErrNotSupported)
}

// CPUTimeOf fails with ErrNotSupported: it reads Linux's /proc.
func CPUTimeOf(int) (CPUTime, error) {
	return CPUTime{}, fmt.Errorf("read the time of a CPU: %w", ErrNotSupported)
}
