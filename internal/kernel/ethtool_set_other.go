//go:build !linux

package kernel

import "fmt"

// WriteRSS fails: it writes Linux's ethtool interface.
func WriteRSS(name string, key []byte, table []uint32) error {
	return fmt.Errorf("write RSS configuration of %s: %w: needs Linux", name, ErrNotSupported)
}

// SetCombinedChannels fails: it writes Linux's ethtool interface.
func SetCombinedChannels(name string, n int) (int, error) {
	return 0, fmt.Errorf("set channels of %s: %w: needs Linux", name, ErrNotSupported)
}

// RXHash fails: it reads Linux's ethtool interface.
func RXHash(name string) (bool, error) {
	return false, fmt.Errorf("read the offload flags of %s: %w: needs Linux", name, ErrNotSupported)
}

// RXVLANStrip fails: it reads Linux's ethtool interface.
func RXVLANStrip(name string) (bool, error) {
	return false, fmt.Errorf("read the offload flags of %s: %w: needs Linux", name, ErrNotSupported)
}

// SetRXHash fails: it writes Linux's ethtool interface.
func SetRXHash(name string, on bool) error {
	return fmt.Errorf("set the offload flags of %s: %w: needs Linux", name, ErrNotSupported)
}

// DriverStats fails: it reads Linux's ethtool interface.
func DriverStats(name string) (map[string]uint64, error) {
	return nil, fmt.Errorf("read driver statistics of %s: %w: needs Linux", name, ErrNotSupported)
}

// WriteRSSHashFields fails: it writes Linux's ethtool interface.
func WriteRSSHashFields(name string, flow RSSFlowType, fields RXHashFields) error {
	return fmt.Errorf("write RSS hash fields of %s: %w: needs Linux", name, ErrNotSupported)
}
