package hash

import "errors"

// Errors returned by the constructors of this package. Per-packet methods never
// return errors.
var (
	// ErrKeySyntax reports a kernel hash key string that is not 32 hex digits.
	ErrKeySyntax = errors.New("want 32 hex digits")
	// ErrRSSKeyLength reports a Toeplitz key of a length NICs do not use.
	ErrRSSKeyLength = errors.New("want a 40- or 52-byte RSS key")
	// ErrRETA reports indirection table parameters ethtool would refuse.
	ErrRETA = errors.New("invalid indirection table")
	// ErrCPU reports a negative CPU number in an RPS map.
	ErrCPU = errors.New("negative CPU number")
	// ErrSteering reports a steering configuration that cannot run.
	ErrSteering = errors.New("invalid steering configuration")
	// ErrName reports a hash kind or symmetry name ParseKind or
	// ParseSymmetry does not know.
	ErrName = errors.New("unknown name")
)
