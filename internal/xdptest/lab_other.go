//go:build !linux

package xdptest

// labLeftovers lists nothing: labs exist on Linux only.
func labLeftovers() []string { return nil }
