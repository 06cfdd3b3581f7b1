package xdptest

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// WithoutCapabilities runs fn on a locked OS thread whose effective
// capability set lacks drop (capabilities are per thread, so every system call
// fn makes on that thread runs without them), and waits for it. The thread
// ends locked, so the runtime discards it with its reduced capabilities. The
// error is a failure to read or set the capabilities; fn's results are the
// caller's to collect.
func WithoutCapabilities(drop []uint, fn func()) error {
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			done <- fmt.Errorf("capget: %w", err)
			return
		}
		for _, c := range drop {
			data[c/32].Effective &^= 1 << (c % 32)
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			done <- fmt.Errorf("capset: %w", err)
			return
		}
		fn()
		done <- nil
	}()
	return <-done
}
