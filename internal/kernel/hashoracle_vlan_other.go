//go:build !linux

package kernel

import "fmt"

// HashTagged fails with ErrNotSupported.
func (o *HashOracle) HashTagged(frame []byte, tpid, tci uint16) (uint32, error) {
	return 0, fmt.Errorf("kernel test run of %d-byte frame with VLAN tag %#04x:%#04x: %w", len(frame), tpid, tci, ErrNotSupported)
}
