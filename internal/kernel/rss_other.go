//go:build !linux

package kernel

import "fmt"

// ReadRSS fails: it reads Linux's ethtool interface.
func ReadRSS(name string) (RSSConfig, error) {
	return RSSConfig{}, fmt.Errorf("read RSS configuration of %s: %w: needs Linux", name, ErrNotSupported)
}

// ReadRSSHashFields fails: it reads Linux's ethtool interface.
func ReadRSSHashFields(name string, flow RSSFlowType) (RXHashFields, error) {
	return 0, fmt.Errorf("read RSS hash fields of %s: %w: needs Linux", name, ErrNotSupported)
}
