package kernel

import "golang.org/x/sys/unix"

// Release is the running kernel's release (uname -r), for reports that name the
// kernel an oracle answered for; "unknown" when uname fails.
func Release() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
