package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/xdphash/xdphash/runstats"
)

// MaxRunBytes bounds the run statistics Read takes: a run writes a few
// hundred bytes per window and worker, far less than this even at the most
// windows a run keeps.
const MaxRunBytes = 256 << 20

// decodeError makes a JSON decoder's error say what was wrong with the file:
// an empty file, one cut short or over MaxRunBytes, at which byte.
func decodeError(err error, off int64) error {
	switch {
	case errors.Is(err, io.EOF) && off == 0:
		return fmt.Errorf("%w: the file is empty (want the JSON that xdphash run --out writes)", ErrRun)
	case off > MaxRunBytes:
		return fmt.Errorf("%w: larger than %d bytes", ErrRun, MaxRunBytes)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: the file ends at byte %d inside the statistics", ErrRun, off)
	}
	return fmt.Errorf("%w: at byte %d: %w", ErrRun, off, err)
}

// check refuses statistics whose parts do not fit together, which the
// report would otherwise show as if they did: every per-worker list has at
// most one entry per worker, every per-queue list one per queue, and no
// count of time is negative.
func check(st *runstats.RunStats) error {
	workers, nq := len(st.Workers), len(st.Queues)
	switch {
	case workers == 0:
		return errors.New("no workers (a run has at least one)")
	case st.Config.Workers != workers:
		return fmt.Errorf("config says %d workers, the statistics list %d", st.Config.Workers, workers)
	case st.DurationNs < 0 || st.Config.WindowNs < 0:
		return fmt.Errorf("negative duration (%d ns) or window (%d ns)", st.DurationNs, st.Config.WindowNs)
	}
	for i, w := range st.Workers {
		if w.Worker != i {
			return fmt.Errorf("worker %d is listed as worker %d", i, w.Worker)
		}
	}
	for i, q := range st.Queues {
		if len(q.Steered) > workers {
			return fmt.Errorf("queue %d steered to %d workers, the run had %d", i, len(q.Steered), workers)
		}
	}
	for i, w := range st.Windows {
		switch {
		case len(w.QueuePackets) > nq || len(w.QueueBytes) > nq:
			return fmt.Errorf("window %d counts %d queues, the run had %d", i, max(len(w.QueuePackets), len(w.QueueBytes)), nq)
		case max(len(w.WorkerPackets), len(w.WorkerBytes), len(w.WorkerBacklog), len(w.WorkerDrops)) > workers:
			return fmt.Errorf("window %d counts %d workers, the run had %d", i, max(len(w.WorkerPackets), len(w.WorkerBytes), len(w.WorkerBacklog), len(w.WorkerDrops)), workers)
		case w.StartNs < 0:
			return fmt.Errorf("window %d starts at %d ns, before the run", i, w.StartNs)
		}
	}
	return nil
}
