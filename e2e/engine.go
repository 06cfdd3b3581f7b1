package e2e

import (
	"context"

	"github.com/xdphash/xdphash/queues"
)

// RunResult is what queues.Engine.Run returned.
type RunResult struct {
	Stats *queues.RunStats
	Err   error
}

// Start runs e in a goroutine of its own until its source ends or ctx is
// done, and returns the channel that gets what Run returned. Run may deliver
// before the Close it started on the source is done: close the source again
// to wait for it (a second Close waits for the first).
func Start(ctx context.Context, e *queues.Engine) <-chan RunResult {
	done := make(chan RunResult, 1)
	go func() {
		st, err := e.Run(ctx)
		done <- RunResult{st, err}
	}()
	return done
}
