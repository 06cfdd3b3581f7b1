package report

import "errors"

// Errors of this package.
var (
	// ErrSchema reports run statistics of a schema version this package
	// does not read.
	ErrSchema = errors.New("unsupported run statistics schema")
)
