package queues

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/runstats"
)

func TestFIFO(t *testing.T) {
	recs := make([]Record, 6)
	for i := range recs {
		recs[i] = Record{Arrival: int64(i), Len: 100}
	}
	tests := []struct {
		name      string
		limit     int
		budget    Budget
		wantOut   []int64 // arrivals served
		wantDrops uint64
	}{
		{name: "all", limit: 10, wantOut: []int64{0, 1, 2, 3, 4, 5}},
		{name: "tail drop", limit: 4, wantOut: []int64{0, 1, 2, 3}, wantDrops: 2},
		{name: "packet budget", limit: 10, budget: Budget{Packets: 2}, wantOut: []int64{0, 1}},
		// 150 bytes: the second 100-byte packet overdraws the budget.
		{name: "byte budget", limit: 10, budget: Budget{Bytes: 150}, wantOut: []int64{0, 1}},
		{name: "both budgets", limit: 10, budget: Budget{Packets: 1, Bytes: 1000}, wantOut: []int64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewFIFO(tt.limit)
			q.Enqueue(recs, 0)
			out := q.Dequeue(0, tt.budget, nil)
			var got []int64
			for _, r := range out {
				got = append(got, r.Arrival)
			}
			st := q.Stats()
			if !slices.Equal(got, tt.wantOut) || st.Drops[runstats.DropOverlimit] != tt.wantDrops {
				t.Errorf("served %v, dropped %d; want %v, %d", got, st.Drops[runstats.DropOverlimit], tt.wantOut, tt.wantDrops)
			}
			if st.Enqueued != st.Dequeued+uint64(q.Backlog()) || uint64(len(recs)) != st.Enqueued+st.Drops[runstats.DropOverlimit] {
				t.Errorf("stats %+v with backlog %d do not add up", st, q.Backlog())
			}
		})
	}
}

// TestFIFOWrap keeps a small queue cycling past its end.
func TestFIFOWrap(t *testing.T) {
	q := NewFIFO(3)
	var next int64
	var out []Record
	for i := range int64(20) {
		q.Enqueue([]Record{{Arrival: 2 * i}, {Arrival: 2*i + 1}}, 0)
		out = q.Dequeue(0, Budget{Packets: 2}, out[:0])
		for _, r := range out {
			if r.Arrival != next {
				t.Fatalf("served %d, want %d", r.Arrival, next)
			}
			next++
		}
	}
}

// TestFIFOMatchesModel runs a small FIFO through random batches and budgets
// (packets, bytes, both, none) with records of random length, wrapping its
// ring again and again, against a slice that serves one record at a time by
// the rules of Dequeue's doc: the same records served, in the same order,
// the same drops and counters.
func TestFIFOMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const limit = 7
	q := NewFIFO(limit)
	var model []Record
	var arrival int64
	var dropped uint64
	for step := range 5000 {
		in := make([]Record, rng.IntN(limit+3))
		for i := range in {
			in[i] = Record{Arrival: arrival, Len: uint32(1 + rng.IntN(200))}
			arrival++
		}
		q.Enqueue(in, 0)
		fit := min(len(in), limit-len(model))
		model = append(model, in[:fit]...)
		dropped += uint64(len(in) - fit)

		var budget Budget
		if rng.IntN(2) == 0 {
			budget.Packets = rng.IntN(limit + 2)
		}
		if rng.IntN(2) == 0 {
			budget.Bytes = int64(rng.IntN(600))
		}
		got := q.Dequeue(0, budget, nil)
		var want []Record
		bytes := budget.Bytes
		for len(model) > 0 && (budget.Packets <= 0 || len(want) < budget.Packets) && (budget.Bytes <= 0 || bytes > 0) {
			bytes -= int64(model[0].Len)
			want, model = append(want, model[0]), model[1:]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d, budget %+v: served %v, want %v", step, budget, got, want)
		}
		st := q.Stats()
		if q.Backlog() != len(model) || st.Drops[runstats.DropOverlimit] != dropped || st.Enqueued != st.Dequeued+uint64(len(model)) {
			t.Fatalf("step %d: backlog %d, stats %+v; want backlog %d, %d dropped", step, q.Backlog(), st, len(model), dropped)
		}
	}
}

func TestConsumerNames(t *testing.T) {
	mk, err := ConsumerConfig{}.New("fifo")
	if err != nil || !slices.Contains(ConsumerNames, "fifo") {
		t.Fatalf("fifo: %v (names %v)", err, ConsumerNames)
	}
	if _, ok := mk().(*FIFO); !ok {
		t.Errorf("fifo maker made a %T", mk())
	}
	if _, err := (ConsumerConfig{}).New("red"); err == nil || !strings.Contains(err.Error(), "fq_codel") {
		t.Errorf("New(red): %v, want an error naming the consumers", err)
	}
}
