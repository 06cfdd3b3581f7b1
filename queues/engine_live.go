package queues

// LiveStats is a RunStats of the run so far, for live metrics: the receive
// queues, the workers and their drops, the dissector counters and the
// accounting of what has passed the rings, from the counters the loops
// publish once per batch. The consumers' inner measures (flows, sojourn) and
// the windows are filled in only by Run's final report. It is safe to call
// from any goroutine during and after Run.
func (e *Engine) LiveStats() *RunStats {
	st := &RunStats{
		SchemaVersion: SchemaVersion, // Started is Run's to write: not read here
		Accounting:    Accounting{Dropped: map[string]uint64{}, KernelDrops: map[string]uint64{}},
	}
	nw := len(e.workers)
	st.Workers = make([]WorkerReport, nw)
	for w := range st.Workers {
		st.Workers[w] = WorkerReport{Worker: w, CPU: -1, Drops: map[string]uint64{dropRingFull: 0, dropFlowLimit: 0}}
	}
	acc := &st.Accounting
	for _, r := range e.recv {
		qs := r.src.Stats()
		qs.Frames, qs.Bytes = r.pub.frames.Load(), r.pub.bytes.Load()
		st.Queues = append(st.Queues, QueueReport{Queue: r.src.Queue(), Stats: qs})
		acc.Received += qs.Frames
		acc.KernelDrops["rx_dropped"] += qs.RxDropped
		acc.KernelDrops["rx_invalid_descs"] += qs.RxInvalidDescs
		acc.KernelDrops["rx_ring_full"] += qs.RxRingFull
		for w := range st.Workers {
			full, limited := r.pub.drops[w].full.Load(), r.pub.drops[w].limited.Load()
			st.Workers[w].Drops[dropRingFull] += full
			st.Workers[w].Drops[dropFlowLimit] += limited
			acc.Dropped["ring/full"] += full
			acc.Dropped["worker/flow_limit"] += limited
		}
		r.pub.shapesMu.Lock()
		c := r.pub.shapes
		r.pub.shapesMu.Unlock()
		st.Shapes.Add(&c)
	}
	for w, wk := range e.workers {
		st.Workers[w].CPU = wk.cpu
		st.Workers[w].Packets = wk.pub.taken.Load()
		st.Workers[w].Bytes = wk.pub.servedBytes.Load()
		st.Workers[w].Consumer.Dequeued = wk.pub.served.Load()
		st.Workers[w].Consumer.Backlog = int(wk.pub.backlog.Load())
		acc.Processed += wk.pub.served.Load() + uint64(wk.pub.backlog.Load())
	}
	return st
}
