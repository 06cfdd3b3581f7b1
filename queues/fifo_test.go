package queues

import (
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
