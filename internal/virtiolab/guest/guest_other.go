//go:build !linux

package guest

// IsInit is false: the lab's guest runs Linux.
func IsInit() bool { return false }

// Main is never called off Linux.
func Main() { panic("virtiolab guest: Linux only") }
