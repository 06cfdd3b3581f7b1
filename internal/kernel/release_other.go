//go:build !linux

package kernel

// Release is "unknown" off Linux.
func Release() string { return "unknown" }
