package queues

import "errors"

// ErrConfig reports a consumer, ring or rate configuration that cannot run.
var ErrConfig = errors.New("invalid configuration")
