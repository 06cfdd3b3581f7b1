package reorder

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// packet is a packet in a worker's queue.
type packet struct {
	flow uint64
	seq  Seq
}

// fifo is a worker serving its packets in arrival order, as a worker's ring
// and a per-flow qdisc queue do.
type fifo []packet

func (q *fifo) push(p packet) { *q = append(*q, p) }

func (q *fifo) pop() packet {
	p := (*q)[0]
	*q = (*q)[1:]
	return p
}

// TestMoveReordersK builds the case a table change makes: flow 7's first
// packets queue on worker A, its bucket moves to worker B, and B serves k of
// the newer packets before A serves its last old one. Exactly k packets are
// reordered; with A drained first (RSS++'s remedy), none.
func TestMoveReordersK(t *testing.T) {
	const flow, old, newer = 7, 5, 6
	for k := 0; k <= newer; k++ {
		c, err := New(16)
		if err != nil {
			t.Fatal(err)
		}
		var a, b fifo
		for range old {
			a.push(packet{flow, c.Arrive(flow)})
		}
		for range newer { // the bucket now steers to B
			b.push(packet{flow, c.Arrive(flow)})
		}
		// A serves all but its last packet, then B serves k, then A its
		// last, then B the rest. Another flow on B stays in order.
		for range old - 1 {
			p := a.pop()
			c.Serve(p.flow, p.seq)
		}
		for range k {
			p := b.pop()
			c.Serve(p.flow, p.seq)
			other := c.Arrive(99)
			if c.Serve(99, other) {
				t.Errorf("k=%d: a lone packet of another flow counted as reordered", k)
			}
		}
		p := a.pop()
		if c.Serve(p.flow, p.seq) {
			t.Errorf("k=%d: the late packet itself counted as reordered", k)
		}
		for len(b) > 0 {
			p := b.pop()
			c.Serve(p.flow, p.seq)
		}
		s := c.Stats()
		if s.Reordered != uint64(k) || s.Served != old+newer+uint64(k) || !s.Exact() {
			t.Errorf("k=%d: stats %+v, want %d reordered of %d served, exact", k, s, k, old+newer+k)
		}
		if c.InFlight() != 0 {
			t.Errorf("k=%d: %d flows still in flight after every packet was served", k, c.InFlight())
		}
	}
}

// TestDropReleasesLaterPackets: a dropped packet is finished; packets after
// it are served in order.
func TestDropReleasesLaterPackets(t *testing.T) {
	c, err := New(4)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2, s3 := c.Arrive(1), c.Arrive(1), c.Arrive(1)
	c.Drop(1, s1)
	if c.Serve(1, s2) || c.Serve(1, s3) {
		t.Error("packets after a dropped one counted as reordered")
	}
	// Finishing a packet twice, or one never numbered, changes nothing.
	c.Serve(1, s2)
	c.Drop(1, 42)
	c.Serve(1, 0)
	if s := c.Stats(); s != (Stats{Served: 2, Dropped: 1}) {
		t.Errorf("stats %+v, want 2 served, 1 dropped", s)
	}
}

// reference is the slow exact counter: every unfinished packet, by flow and
// arrival number.
type reference struct {
	open      map[[2]uint64]bool
	reordered uint64
}

func (r *reference) serve(flow, arrival uint64) {
	delete(r.open, [2]uint64{flow, arrival})
	for q := range r.open {
		if q[0] == flow && q[1] < arrival {
			r.reordered++
			return
		}
	}
}

// TestCounterAgainstReference runs random traffic over workers whose table
// changes now and then, serving and dropping in random worker order, and
// compares with the reference count.
func TestCounterAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 3))
	exact := 0
	for round := range 50 {
		const workers, buckets, flows = 4, 16, 40
		c, err := New(flows)
		if err != nil {
			t.Fatal(err)
		}
		ref := reference{open: map[[2]uint64]bool{}}
		table := make([]int, buckets)
		for b := range table {
			table[b] = b % workers
		}
		type queued struct {
			packet
			arrival uint64
		}
		queues := make([][]queued, workers)
		for arrival := range uint64(3000) {
			switch x := rng.IntN(100); {
			case x < 3: // a bucket moves
				table[rng.IntN(buckets)] = rng.IntN(workers)
			case x < 50: // a packet arrives
				f := uint64(rng.IntN(flows))
				ref.open[[2]uint64{f, arrival}] = true
				w := table[f%buckets]
				queues[w] = append(queues[w], queued{packet{f, c.Arrive(f)}, arrival})
			default: // a worker serves (or drops) its oldest packet
				w := rng.IntN(workers)
				if len(queues[w]) == 0 {
					continue
				}
				p := queues[w][0]
				queues[w] = queues[w][1:]
				if rng.IntN(10) == 0 {
					c.Drop(p.flow, p.seq)
					delete(ref.open, [2]uint64{p.flow, p.arrival})
					continue
				}
				c.Serve(p.flow, p.seq)
				ref.serve(p.flow, p.arrival)
			}
		}
		s := c.Stats()
		if !s.Exact() {
			t.Logf("round %d: not exact (%+v), skipped", round, s)
			continue
		}
		exact++
		if s.Reordered != ref.reordered {
			t.Errorf("round %d: %d reordered, reference %d", round, s.Reordered, ref.reordered)
		}
	}
	if exact < 40 {
		t.Errorf("only %d of 50 rounds counted exactly", exact)
	}
}

// TestManyRuns: a flow whose finished packets scatter into more than Runs
// runs is no longer counted exactly, and says so.
func TestManyRuns(t *testing.T) {
	c, err := New(1)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []Seq
	for range 2*Runs + 3 {
		seqs = append(seqs, c.Arrive(5))
	}
	// Serve every other packet after the first: Runs+1 runs.
	for i := 2; i < len(seqs); i += 2 {
		if !c.Serve(5, seqs[i]) {
			t.Errorf("packet %d served before packet 1: not counted", seqs[i])
		}
	}
	if s := c.Stats(); s.Merged == 0 || s.Exact() {
		t.Errorf("stats %+v: want a merge, not exact", s)
	}
	for _, s := range seqs {
		c.Serve(5, s)
	}
	if c.InFlight() != 0 {
		t.Errorf("%d flows in flight after all were served", c.InFlight())
	}
}

// TestFullTable: a new flow that finds the table full goes untracked; once
// a flow's packets are all finished its slot serves another flow.
func TestFullTable(t *testing.T) {
	c, err := New(2)
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Arrive(1), c.Arrive(2)
	if s := c.Arrive(3); s != 0 {
		t.Errorf("third flow in a table of 2 got seq %d, want 0 (untracked)", s)
	}
	c.Serve(1, a)
	if s := c.Arrive(3); s != 1 {
		t.Errorf("after flow 1 finished, flow 3 got seq %d, want 1", s)
	}
	c.Serve(2, b)
	if st := c.Stats(); st.Untracked != 1 || st.Exact() || c.InFlight() != 1 {
		t.Errorf("stats %+v, %d in flight; want 1 untracked, not exact, 1 in flight", st, c.InFlight())
	}
	if _, err := New(0); !errors.Is(err, ErrConfig) {
		t.Errorf("New(0) error = %v, want ErrConfig", err)
	}
}

// TestProbeChains fills a small table to its limit with flows whose probe
// sequences overlap, frees them in an order that exercises the backward
// shift, and checks every flow is still found.
func TestProbeChains(t *testing.T) {
	const n = 64
	c, err := New(n)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	live := map[uint64][]Seq{}
	for round := range 20000 {
		id := uint64(rng.IntN(3 * n))
		if seqs := live[id]; len(seqs) > 0 && rng.IntN(2) == 0 {
			c.Serve(id, seqs[0])
			if len(seqs) == 1 {
				delete(live, id)
			} else {
				live[id] = seqs[1:]
			}
			continue
		}
		s := c.Arrive(id)
		if s == 0 {
			if len(live) < n {
				t.Fatalf("round %d: untracked with %d flows in flight of %d", round, len(live), n)
			}
			continue
		}
		live[id] = append(live[id], s)
		if c.InFlight() != len(live) {
			t.Fatalf("round %d: %d flows in flight, want %d", round, c.InFlight(), len(live))
		}
	}
	if st := c.Stats(); st.Reordered != 0 {
		t.Errorf("in-order service counted %d reordered", st.Reordered)
	}
}

func TestCounterAllocs(t *testing.T) {
	c, err := New(1024)
	if err != nil {
		t.Fatal(err)
	}
	var id uint64
	allocs := testing.AllocsPerRun(1000, func() {
		id++
		s1, s2 := c.Arrive(id), c.Arrive(id)
		c.Serve(id, s2)
		c.Drop(id, s1)
	})
	if allocs != 0 {
		t.Errorf("%g allocations per packet pair", allocs)
	}
}

// BenchmarkCounter is one packet's arrival and service, over 4096 flows.
func BenchmarkCounter(b *testing.B) {
	c, err := New(4096)
	if err != nil {
		b.Fatal(err)
	}
	var id uint64
	b.ReportAllocs()
	for b.Loop() {
		id = (id + 0x9e3779b97f4a7c15) % 4096
		c.Serve(id, c.Arrive(id))
	}
}
