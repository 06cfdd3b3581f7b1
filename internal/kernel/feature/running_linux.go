package feature

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Running is the running kernel's version, from its release (uname -r).
func Running() (Version, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return Version{}, fmt.Errorf("read kernel version: uname: %w", err)
	}
	return ParseVersion(unix.ByteSliceToString(u.Release[:]))
}
