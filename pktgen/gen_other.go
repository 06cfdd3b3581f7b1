//go:build !linux

package pktgen

import (
	"context"
	"fmt"
	"net"
)

// defaultMode is ModeXDP, which fails off Linux like every mode.
func defaultMode() (Mode, string, error) { return ModeXDP, "", nil }

// checkTarget fails: the senders need Linux.
func checkTarget(Config) error {
	return fmt.Errorf("check generator: %w: needs Linux", ErrModeUnavailable)
}

// runThreads fails: the senders need Linux.
func runThreads(context.Context, *Schedule, Config) (Report, error) {
	return Report{}, fmt.Errorf("run generator: %w: needs Linux", ErrModeUnavailable)
}

// runKernelPktgen fails: pktgen is a Linux module.
func runKernelPktgen(context.Context, *Schedule, Config) (Report, error) {
	return Report{}, fmt.Errorf("run kernel pktgen: %w: needs Linux", ErrModeUnavailable)
}

// ReceiverMAC fails: it needs Linux.
func ReceiverMAC(iface, netns string, enter func(fn func() error) error) (net.HardwareAddr, error) {
	return nil, fmt.Errorf("find receiver of %s: %w: needs Linux", iface, ErrModeUnavailable)
}
