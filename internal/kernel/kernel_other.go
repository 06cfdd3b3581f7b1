//go:build !linux

package kernel

import "fmt"

// HashOracle asks the running kernel for its skb_get_hash of a frame; it
// needs Linux.
type HashOracle struct{}

// NewHashOracle fails with ErrNotSupported: the oracle needs Linux.
func NewHashOracle() (*HashOracle, error) {
	return nil, fmt.Errorf("load hash oracle: %w: needs Linux", ErrNotSupported)
}

// Hash fails with ErrNotSupported.
func (o *HashOracle) Hash(frame []byte) (uint32, error) {
	return 0, fmt.Errorf("kernel test run of %d-byte frame: %w", len(frame), ErrNotSupported)
}

// Close does nothing.
func (o *HashOracle) Close() error { return nil }

// MissingCapabilities fails with ErrNotSupported: capabilities are a Linux
// notion.
func MissingCapabilities() ([]string, error) {
	return nil, fmt.Errorf("read capabilities: %w", ErrNotSupported)
}
