package queues

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/runstats"
)

// TestFQLimits offers one flow's packets all at once: the first 8 take the
// fast path (nothing else is queued), the flow holds flow_limit more, and
// the band's limit counts only packets in flows.
func TestFQLimits(t *testing.T) {
	tests := []struct {
		name                 string
		cfg                  ConsumerConfig
		offered              int
		flowLimit, overlimit uint64
	}{
		{name: "flow limit", cfg: ConsumerConfig{}, offered: 150, flowLimit: 150 - 8 - 100},
		{name: "small flow limit", cfg: ConsumerConfig{FlowLimit: 3}, offered: 20, flowLimit: 20 - 8 - 3},
		{name: "band limit", cfg: ConsumerConfig{Limit: 20}, offered: 40, overlimit: 40 - 8 - 20},
		{name: "within limits", cfg: ConsumerConfig{}, offered: 108},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := newFQFrom(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			q.Enqueue(fairRecs(6, tt.offered, 500), 0)
			s := q.Stats()
			if s.Drops[runstats.DropFQFlowLimit] != tt.flowLimit || s.Drops[runstats.DropOverlimit] != tt.overlimit {
				t.Errorf("drops %v, want flow_limit %d, overlimit %d", s.Drops, tt.flowLimit, tt.overlimit)
			}
			if q.internalLen != fqInternalMax {
				t.Errorf("%d packets took the fast path, want %d", q.internalLen, fqInternalMax)
			}
			out := q.Dequeue(0, Budget{}, nil)
			if want := tt.offered - int(tt.flowLimit+tt.overlimit); len(out) != want {
				t.Errorf("served %d, want %d", len(out), want)
			}
			checkConsumerAccounting(t, q, uint64(tt.offered))
		})
	}
}

// TestFQInitialQuantum checks a new flow's precedence and credit: it starts
// with the initial quantum (15140 bytes: 16 packets of 1000) ahead of an old
// flow, which then gets its quantum of 3028 bytes (3 packets) per round.
func TestFQInitialQuantum(t *testing.T) {
	q, err := newFQFrom(ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	q.Enqueue(fairRecs(1, 100, 1000), 0)
	first := servedBy(q.Dequeue(0, Budget{Packets: 8 + 16}, nil))
	if first[1] != 24 {
		t.Fatalf("served %v, want 24 of flow 1", first)
	}
	q.Enqueue(fairRecs(2, 50, 1000), 0)
	var order []int
	for _, r := range q.Dequeue(0, Budget{Packets: 16 + 3 + 3}, nil) {
		order = append(order, int(r.Hash&1023))
	}
	want := []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2}
	if len(order) != len(want) {
		t.Fatalf("served %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("served %v, want %v", order, want)
		}
	}
}

// TestFQRefill checks flow_refill_delay: a detached flow in debt that comes
// back within 40 ms keeps its debt, one that comes back later gets at least
// a quantum.
func TestFQRefill(t *testing.T) {
	for _, tt := range []struct {
		back   time.Duration
		credit int32
	}{
		{back: 40 * time.Millisecond, credit: -500}, // not after the delay: time_after is strict
		{back: 41 * time.Millisecond, credit: 3028},
	} {
		q, err := newFQFrom(ConsumerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		q.Enqueue(fairRecs(9, fqInternalMax, 100), 0) // fill the fast path: later packets go to flows
		f := &q.flows[5]
		f.allocated, f.credit, f.state, f.age = true, -500, fqDetached, 0 // drained and in debt at 0
		q.known++
		q.inactive++
		q.Enqueue(fairRecs(5, 1, 100), int64(tt.back))
		if f.credit != tt.credit || f.state != fqNew {
			t.Errorf("back after %v: credit %d, state %d, want %d on new_flows", tt.back, f.credit, f.state, tt.credit)
		}
	}
}
