//go:build !linux

package xdptest

// OwnLabs lists nothing: labs exist on Linux only.
func OwnLabs() []string { return nil }
