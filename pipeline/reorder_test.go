package pipeline

import (
	"testing"

	"github.com/xdphash/xdphash/queues"
)

// TestReorderMoveCountsK builds the case a table change makes, on the
// reordering count alone: flow h's first packets queue on worker A, its
// bucket moves to worker B, and B serves k of the newer packets before A
// finishes its last old one. Exactly k packets are reordered, whether A's
// last packet is served or dropped; with A drained first (k = 0), none. A
// flow of another bucket served on B meanwhile is never reordered.
func TestReorderMoveCountsK(t *testing.T) {
	const (
		size              = 4
		h          uint32 = 0x1235 // bucket 1
		other      uint32 = 0x2222 // bucket 2, never moved
		old, newer        = 5, 6
		a, b              = 0, 1 // workers
	)
	recs := func(hash uint32, n int) []queues.Record {
		r := make([]queues.Record, n)
		for i := range r {
			r[i].Hash = hash
		}
		return r
	}
	// arrive commits n records of hash to worker w, steered by the table of
	// generation gen.
	arrive := func(s *reorderState, w int, hash uint32, n int, gen uint64) {
		out := []outRing{{ring: queues.NewRing(16)}, {ring: queues.NewRing(16)}}
		out[w].n = n
		for i := range n {
			out[w].ring.Slot(i).Hash = hash
		}
		s.arrive(0, gen, out)
	}
	for _, lastDropped := range []bool{false, true} {
		for k := 0; k <= newer; k++ {
			s := newReorderState(&EngineConfig{RingSize: DefaultRingSize}, size, 1, 2)
			arrive(s, a, h, old, 0)
			// The bucket of h moves from A to B at t=5.
			s.mu.Lock()
			s.moveLocked([]uint16{a, a, b, a}, []uint16{a, b, b, a}, 1, 5)
			s.mu.Unlock()
			arrive(s, b, h, newer, 1)
			arrive(s, b, other, k, 1)

			// A serves all but its last packet, then B serves k of the
			// newer packets (and k of the other flow), then A finishes its
			// last, then B serves the rest.
			s.finish(a, recs(h, old-1), nil, 10)
			for i := range k {
				s.finish(b, recs(h, 1), nil, int64(20+i))
				s.finish(b, recs(other, 1), nil, int64(20+i))
			}
			if lastDropped {
				s.finish(a, nil, recs(h, 1), 30)
			} else {
				s.finish(a, recs(h, 1), nil, 30)
			}
			s.finish(b, recs(h, newer-k), nil, 40)

			got, flows := s.report()
			wantServed := uint64(old + newer + k)
			var wantDropped uint64
			if lastDropped {
				wantServed, wantDropped = wantServed-1, 1
			}
			if got.Reordered != uint64(k) || got.Served != wantServed || got.Dropped != wantDropped || !got.Exact {
				t.Errorf("last dropped %v, k=%d: %+v, want %d reordered of %d served and %d dropped, exact",
					lastDropped, k, got, k, wantServed, wantDropped)
			}
			if flows != 1 {
				t.Errorf("last dropped %v, k=%d: %d flows moved, want 1 (h in flight at the move)", lastDropped, k, flows)
			}
			for w := range 2 {
				for bucket := range size {
					if n := s.inflight[w*size+bucket]; n != 0 {
						t.Errorf("last dropped %v, k=%d: worker %d bucket %d has %d in flight after every packet finished", lastDropped, k, w, bucket, n)
					}
				}
			}
		}
	}
}

// TestReorderWaitsForOldTable: a serve on the new worker is not judged
// while a receive loop may still steer the bucket's packets to the old
// worker by the old table; it is judged once the loop commits with the new
// one.
func TestReorderWaitsForOldTable(t *testing.T) {
	const h uint32 = 0x1 // bucket 1 of 4
	s := newReorderState(&EngineConfig{RingSize: DefaultRingSize}, 4, 1, 2)
	s.batch(0, true) // the loop is inside a batch, steering by generation 0
	s.mu.Lock()
	s.moveLocked([]uint16{0, 0, 0, 0}, []uint16{0, 1, 0, 0}, 1, 5)
	s.mu.Unlock()
	rec := []queues.Record{{Hash: h}}
	// A served the bucket's last packet before the move: nothing in flight
	// on A, but the loop has not taken the new table.
	s.finish(1, rec, nil, 10)
	if tr := s.trans[1]; tr == nil || tr.drained || len(tr.pending) != 1 {
		t.Fatalf("transition %+v: want it open, undrained, with B's serve kept", tr)
	}
	// The loop commits a late packet of h to A by the old table; A serves
	// it after B's serve: B's serve was reordered.
	out := []outRing{{ring: queues.NewRing(4), n: 1}, {ring: queues.NewRing(4)}}
	out[0].ring.Slot(0).Hash = h
	s.arrive(0, 0, out)
	s.batch(0, false)
	s.finish(0, rec, nil, 20)
	got, _ := s.report()
	if got.Reordered != 1 || !got.Exact {
		t.Errorf("%+v: want B's serve at 10 reordered behind A's at 20, exact", got)
	}
}
