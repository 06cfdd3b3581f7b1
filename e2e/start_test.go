package e2e

import (
	"context"

	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/runstats"
)

// RunResult is what pipeline.Engine.Run returned.
type RunResult struct {
	Stats *runstats.RunStats
	Err   error
}

// Start runs e in a goroutine of its own until its source ends or ctx is
// done, and returns the channel that gets what Run returned. Run may deliver
// before the Close it started on the source is done: close the source again
// to wait for it (a second Close waits for the first).
func Start(ctx context.Context, e *pipeline.Engine) <-chan RunResult {
	done := make(chan RunResult, 1)
	go func() {
		st, err := e.Run(ctx)
		done <- RunResult{st, err}
	}()
	return done
}
