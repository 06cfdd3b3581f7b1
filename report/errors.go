package report

import "errors"

// Errors of this package.
var (
	// ErrSchema reports run statistics of a schema version this package
	// does not read.
	ErrSchema = errors.New("unsupported run statistics schema")

	// ErrRun reports run statistics that are not what xdphash run writes:
	// empty, too large, or parts that do not fit together (a queue that
	// steered to more workers than the run had, say).
	ErrRun = errors.New("invalid run statistics")
)
