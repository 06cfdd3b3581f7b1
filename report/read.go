package report

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"slices"

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
		f := w.Consumer.Flows
		for _, n := range []int{f.Active, f.Buckets, f.Collisions, f.Slots, f.Served} {
			if n < 0 || n > MaxFlows {
				return fmt.Errorf("worker %d counts %d flows or flow buckets, want 0 to %d (distinct 32-bit hashes)", i, n, MaxFlows)
			}
		}
	}
	if err := checkAccounting(st); err != nil {
		return err
	}
	if err := checkSearch(st.Search); err != nil {
		return err
	}
	for i, q := range st.Queues {
		if len(q.Steered) > workers {
			return fmt.Errorf("queue %d steered to %d workers, the run had %d", i, len(q.Steered), workers)
		}
	}
	if err := checkQueueDrops(st); err != nil {
		return err
	}
	for i, w := range st.Windows {
		switch {
		case max(len(w.QueuePackets), len(w.QueueBytes), len(w.QueueKernelDrops)) > nq:
			return fmt.Errorf("window %d counts %d queues, the run had %d", i, max(len(w.QueuePackets), len(w.QueueBytes), len(w.QueueKernelDrops)), nq)
		case max(len(w.WorkerPackets), len(w.WorkerBytes), len(w.WorkerBacklog), len(w.WorkerDrops)) > workers:
			return fmt.Errorf("window %d counts %d workers, the run had %d", i, max(len(w.WorkerPackets), len(w.WorkerBytes), len(w.WorkerBacklog), len(w.WorkerDrops)), workers)
		case w.StartNs < 0:
			return fmt.Errorf("window %d starts at %d ns, before the run", i, w.StartNs)
		}
	}
	return nil
}

// MaxFlows bounds a worker's flow counts: flows are told apart by a 32-bit
// hash.
const MaxFlows = 1 << 32

// checkAccounting recomputes the accounting from the queues' and workers'
// counters (runstats.RunStats.Account), which the report then shows: a
// file's balanced flag or totals are never taken on trust. It refuses
// counters whose sums overflow, totals that differ from the counters they
// sum, and more frames processed than received.
func checkAccounting(st *runstats.RunStats) error {
	var received, processed, dropped uint64
	var over bool
	add := func(sum *uint64, n uint64) {
		var carry uint64
		*sum, carry = bits.Add64(*sum, n, 0)
		over = over || carry != 0
	}
	for _, q := range st.Queues {
		add(&received, q.Stats.Frames)
	}
	for _, w := range st.Workers {
		if w.Consumer.Backlog < 0 {
			return fmt.Errorf("worker %d's consumer holds %d records", w.Worker, w.Consumer.Backlog)
		}
		add(&processed, w.Consumer.Dequeued)
		add(&processed, uint64(w.Consumer.Backlog))
		for _, n := range w.Drops {
			add(&dropped, n)
		}
		for _, n := range w.Consumer.Drops {
			add(&dropped, n)
		}
	}
	add(&dropped, processed)
	if over {
		return errors.New("the frame counters overflow when added up")
	}
	file := st.Accounting
	st.Account()
	acc := st.Accounting
	switch {
	case acc.Processed > acc.Received:
		return fmt.Errorf("%d frames processed of %d received", acc.Processed, acc.Received)
	case file.Unserved == 0 && file.Processed == acc.Processed+acc.Unserved:
		// A run.json from before "unserved": its processed counted the
		// frames consumers still held.
		if file.Received != acc.Received || !maps.Equal(file.Dropped, acc.Dropped) {
			return fmt.Errorf("the accounting says %d received, drops %v; the queues and workers add up to %d, %v",
				file.Received, file.Dropped, acc.Received, acc.Dropped)
		}
	case file.Received != acc.Received || file.Processed != acc.Processed || file.Unserved != acc.Unserved || !maps.Equal(file.Dropped, acc.Dropped):
		return fmt.Errorf("the accounting says %d received, %d processed, drops %v; the queues and workers add up to %d, %d, %v",
			file.Received, file.Processed, file.Dropped, acc.Received, acc.Processed, acc.Dropped)
	}
	return nil
}

// checkQueueDrops refuses receive loops' ring drops (QueueReport.Drops)
// that do not add up to the workers' by reason: the loss per queue and per
// worker count the same frames. A run.json from before them has none.
func checkQueueDrops(st *runstats.RunStats) error {
	queues, workers := map[runstats.DropReason]uint64{}, map[runstats.DropReason]uint64{}
	with := 0
	for _, q := range st.Queues {
		if q.Drops == nil {
			continue
		}
		with++
		for r, n := range q.Drops {
			sum, carry := bits.Add64(queues[r], n, 0)
			if carry != 0 {
				return errors.New("the queues' drop counters overflow when added up")
			}
			queues[r] = sum
		}
	}
	if with == 0 {
		return nil
	}
	for _, w := range st.Workers {
		for r, n := range w.Drops {
			workers[r] += n // checkAccounting checked these add up
		}
	}
	for _, r := range slices.Sorted(maps.Keys(queues)) {
		if queues[r] != workers[r] {
			return fmt.Errorf("the receive queues count %d %s drops, the workers %d", queues[r], r, workers[r])
		}
	}
	for _, r := range slices.Sorted(maps.Keys(workers)) {
		if _, ok := queues[r]; !ok && workers[r] > 0 {
			return fmt.Errorf("the receive queues count no %s drops, the workers %d", r, workers[r])
		}
	}
	if with != len(st.Queues) {
		return fmt.Errorf("%d of %d receive queues count their ring drops", with, len(st.Queues))
	}
	return nil
}
