package pipeline

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
)

// benchEngine is an engine on an endless synthetic source whose loops a
// benchmark drives by hand, on one goroutine.
func benchEngine(b *testing.B, profile string) *Engine {
	b.Helper()
	src := syntheticSource(b, profile, source.SyntheticConfig{})
	e, err := NewEngine(EngineConfig{
		Source: src, Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour,
	})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkReceiveLoop is one receive loop's cost per frame (ns/op): the
// synthetic source, dissect, hash, steer and the ring slot, with the rings
// emptied behind it at no cost. It bounds the rate one receive queue can
// take, whatever the workers do.
func BenchmarkReceiveLoop(b *testing.B) {
	for _, p := range []string{"default", "ipv4-tcp"} {
		b.Run(p, func(b *testing.B) {
			e := benchEngine(b, p)
			r := e.recv[0]
			b.ResetTimer()
			for i := 0; i < b.N; i += r.batch.Len() {
				drive(e)
			}
		})
	}
}

// BenchmarkWorkerPoll is a worker's cost per record (ns/op): taking records
// off its ring and through fifo at "max".
func BenchmarkWorkerPoll(b *testing.B) {
	e := benchEngine(b, "default")
	r := e.recv[0]
	r.src.Receive(r.batch)
	r.process(r.batch)
	w := e.workers[0]
	var recs []queues.Record
	for _, wk := range e.workers {
		a, c := wk.rings[0].Peek()
		recs = append(append(recs, a...), c...)
		wk.rings[0].Release(len(a) + len(c))
	}
	ring := w.rings[0]
	b.ResetTimer()
	for i := 0; i < b.N; i += len(recs) {
		for j := range recs {
			*ring.Slot(j) = recs[j]
		}
		ring.Commit(len(recs))
		w.poll()
	}
}
