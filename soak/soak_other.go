//go:build !linux

package soak

import (
	"context"
	"fmt"
)

// Run needs Linux: AF_XDP, veth and network namespaces.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	return nil, fmt.Errorf("run soak: %w: the soak needs Linux (AF_XDP, veth and network namespaces)", ErrNotSupported)
}
