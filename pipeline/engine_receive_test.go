package pipeline

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
)

// TestReceiveLoopBatchHash: the receive loop, which dissects a batch and
// then hashes its keys together, writes for each frame the record that
// dissecting and hashing the frame on its own gives (keys, hash, l4, path,
// hash source), to the worker that hash steers it to, in order, for the
// kernel's hash and Toeplitz.
func TestReceiveLoopBatchHash(t *testing.T) {
	for _, kind := range []hash.Kind{hash.KindKernel, hash.KindToeplitz} {
		t.Run(kind.String(), func(t *testing.T) {
			e, err := NewEngine(EngineConfig{
				Source:   syntheticSource(t, "default", source.SyntheticConfig{}),
				Steering: hash.SteerConfig{Workers: 3, Key: testKey, Hash: kind},
				Flags:    dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour,
			})
			if err != nil {
				t.Fatal(err)
			}
			r := e.recv[0]
			d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
			for range 3 {
				if err := r.src.Receive(r.batch); err != nil {
					t.Fatal(err)
				}
				if r.batch.Len() < 5 {
					t.Fatalf("the source gave a batch of %d frames, want a full one", r.batch.Len())
				}
				want := make([][]queues.Record, len(e.workers))
				for _, frame := range r.batch.Frames {
					var keys dissect.FlowKeys
					_, path := d.DissectFrame(&keys, frame)
					var rec queues.Record
					rec.FromKeys(&keys)
					rec.Hash, rec.L4 = e.steer.Hash(&keys)
					rec.Path, rec.HashSource = path, e.steer.Own()
					w := e.steer.Worker(rec.Hash, r.queue)
					want[w] = append(want[w], rec)
				}
				r.process(r.batch)
				for w, wk := range e.workers {
					first, second := wk.rings[0].Peek()
					got := append(append([]queues.Record(nil), first...), second...)
					if len(got) != len(want[w]) {
						t.Fatalf("worker %d got %d records, want %d", w, len(got), len(want[w]))
					}
					for i := range got {
						g, x := got[i], want[w][i]
						x.Len, x.Arrival, x.Queue = g.Len, g.Arrival, g.Queue
						if g != x {
							t.Fatalf("worker %d record %d:\n got %+v\nwant %+v", w, i, g, x)
						}
					}
					wk.rings[0].Release(len(got))
				}
			}
		})
	}
}
