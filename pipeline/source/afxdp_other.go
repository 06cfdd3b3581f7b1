//go:build !linux

package source

import (
	"fmt"

	"github.com/xdphash/xdphash/internal/kernel"
)

// AFXDP is a Source of AF_XDP sockets; it needs Linux.
type AFXDP struct{}

// OpenAFXDP fails: AF_XDP is Linux's.
func OpenAFXDP(cfg AFXDPConfig) (Source, error) {
	return nil, fmt.Errorf("open AF_XDP on %s: %w: AF_XDP needs Linux", cfg.Iface, kernel.ErrNotSupported)
}

// InterfaceQueues fails: it reads Linux's interfaces.
func InterfaceQueues(iface string) (int, error) {
	return 0, fmt.Errorf("count RX queues of %s: %w: needs Linux", iface, kernel.ErrNotSupported)
}

// Queues is nil.
func (s *AFXDP) Queues() []QueueSource { return nil }

// RxMode is RxAuto: nothing was chosen.
func (s *AFXDP) RxMode() RxMode { return RxAuto }

// Info describes nothing.
func (s *AFXDP) Info() Info { return Info{} }

// Close does nothing.
func (s *AFXDP) Close() error { return nil }

// Stop does nothing.
func (s *AFXDP) Stop() {}

// Iface is "".
func (s *AFXDP) Iface() string { return "" }

// Mode is XDPNative, the default: nothing was attached.
func (s *AFXDP) Mode() XDPMode { return XDPNative }

// ViaLink is false: nothing was attached.
func (s *AFXDP) ViaLink() bool { return false }
