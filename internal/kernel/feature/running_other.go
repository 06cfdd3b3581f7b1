//go:build !linux

package feature

import "fmt"

// Running fails off Linux, where no kernel version applies.
func Running() (Version, error) {
	return Version{}, fmt.Errorf("read kernel version: %w: not Linux", ErrNotSupported)
}
