package pktgen

import "errors"

// Errors returned by this package, wrapped with what failed; test for them
// with errors.Is.
var (
	// ErrInvalidProfile means a profile (a file or Go values) breaks a rule;
	// the wrapping error names the field and the rule.
	ErrInvalidProfile = errors.New("invalid profile")

	// ErrUnknownProfile means a name is neither a built-in profile nor a file.
	ErrUnknownProfile = errors.New("unknown profile")

	// ErrUnbounded means a run was asked for without a frame count or a
	// duration: the generator never runs unbounded.
	ErrUnbounded = errors.New("no count and no duration")

	// ErrModeUnavailable means the generator mode cannot run on this kernel
	// or platform (the kernel's pktgen module is missing, say); the wrapping
	// error says what is missing.
	ErrModeUnavailable = errors.New("generator mode unavailable")
)
