package kernel

import (
	"errors"

	"github.com/xdphash/xdphash/internal/kernel/feature"
)

// Errors returned by this package. They are wrapped with the step that failed;
// test for them with errors.Is.
var (
	// ErrNotPermitted means the kernel refused an operation for lack of privilege.
	// The wrapping error names the missing capabilities.
	ErrNotPermitted = errors.New("not permitted")

	// ErrNotSupported means the running kernel lacks a feature this package needs
	// (BPF_PROG_TEST_RUN for SCHED_CLS programs, or the bpf_get_hash_recalc helper),
	// a driver lacks one (native XDP, RSS, AF_XDP zero-copy), or the platform is
	// not Linux. It is feature.ErrNotSupported, the one identity of the project;
	// the probes' errors (LiveFramesSupported, HaveXDPLinks,
	// HaveXDPMetadataKfuncs) are a *feature.UnsupportedFeatureError, which names
	// the first Linux version with the feature.
	ErrNotSupported = feature.ErrNotSupported

	// ErrFrameRefused means BPF_PROG_TEST_RUN refused a frame with EINVAL before
	// running the program; see the package documentation for the frames it refuses.
	ErrFrameRefused = errors.New("frame refused by the kernel")

	// ErrClosed means the object was used after Close.
	ErrClosed = errors.New("use after close")

	// ErrInterfaceGone reports a socket whose interface was deleted.
	ErrInterfaceGone = errors.New("the interface is gone")

	// ErrReceiverStalled means a sender gave up because the interface
	// refused every frame for a while: whatever reads it took nothing (an
	// emulator behind a tap that stopped reading, say).
	ErrReceiverStalled = errors.New("the interface's receiver takes no frames")
)
