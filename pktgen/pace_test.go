package pktgen

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
)

// fakeClock is a clock that moves only when pacedSend sleeps (to the time
// asked, plus oversleep) or a sender sends (cost per call).
type fakeClock struct {
	t         time.Duration
	oversleep time.Duration
	// stallAt, when set, makes the first sleep that ends after it end
	// stall later.
	stallAt, stall time.Duration
}

func (c *fakeClock) now() time.Duration { return c.t }

func (c *fakeClock) sleepUntil(t time.Duration, _ <-chan struct{}) bool {
	c.t = max(c.t, t) + c.oversleep
	if c.stall > 0 && c.t >= c.stallAt {
		c.t += c.stall
		c.stall = 0
	}
	return true
}

// sendCall is one Send: when, and how many frames.
type sendCall struct {
	at time.Duration
	n  uint64
}

// fakeSender records its Sends on a fake clock; each costs cost.
type fakeSender struct {
	clk   *fakeClock
	cost  time.Duration
	calls []sendCall
	paced float64 // the rate Pace was given
}

func (s *fakeSender) Send(n uint64) (uint64, error) {
	s.calls = append(s.calls, sendCall{s.clk.t, n})
	s.clk.t += s.cost
	return n, nil
}
func (s *fakeSender) Stop()        {}
func (s *fakeSender) Close() error { return nil }

// selfPacingSender is a fakeSender that paces itself, as the XDP sender does.
type selfPacingSender struct{ fakeSender }

func (s *selfPacingSender) Pace(pps float64) error { s.paced = pps; return nil }

// TestPacedSend paces senders on a fake clock: frames go out in batches of
// pacePeriod's worth (tens of microseconds, not the 100 ms bursts that
// overran a receiver), never ahead of their due time, all of the quota; a
// stall is caught up by at most kernel.PaceCatchUp's worth; a sender that paces
// itself is handed the rate and the whole quota.
func TestPacedSend(t *testing.T) {
	const pps = 200e3 // 5 µs between frames, 10 per 50 µs batch
	per := time.Duration(float64(time.Second) / pps)
	batch := uint64(pps * pacePeriod.Seconds())
	tests := []struct {
		name     string
		clk      fakeClock
		cost     time.Duration
		maxBatch uint64
	}{
		{"exact clock", fakeClock{}, 0, batch},
		{"sends cost time", fakeClock{}, 3 * time.Microsecond, batch + 1},
		{"oversleeps 20 µs", fakeClock{oversleep: 20 * time.Microsecond}, 0, batch + 4},
		{"a 10 ms stall", fakeClock{stallAt: 30 * time.Millisecond, stall: 10 * time.Millisecond}, 0, uint64(pps * kernel.PaceCatchUp(pps).Seconds())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := tt.clk
			snd := &fakeSender{clk: &clk, cost: tt.cost}
			const quota = 20000 // 100 ms
			sent, err := pacedSend(snd, quota, pps, &clk, nil)
			if err != nil || sent != quota {
				t.Fatalf("sent %d, %v; want %d", sent, err, quota)
			}
			var total, biggest uint64
			for i, c := range snd.calls {
				total += c.n
				biggest = max(biggest, c.n)
				if due := uint64(c.at/per) + 1; total > due {
					t.Fatalf("call %d at %v sends frames up to %d, only %d due", i, c.at, total, due)
				}
			}
			if total != quota {
				t.Errorf("Sends add up to %d frames, want %d", total, quota)
			}
			if biggest > tt.maxBatch {
				t.Errorf("a Send of %d frames, want at most %d", biggest, tt.maxBatch)
			}
		})
	}

	clk := fakeClock{}
	self := &selfPacingSender{fakeSender{clk: &clk}}
	if sent, err := pacedSend(self, 1000, pps, &clk, nil); err != nil || sent != 1000 {
		t.Fatalf("self-paced: sent %d, %v", sent, err)
	}
	if self.paced != pps || len(self.calls) != 1 || self.calls[0].n != 1000 {
		t.Errorf("self-paced sender: paced at %g, calls %v; want %g and one Send of 1000", self.paced, self.calls, pps)
	}
	// Slower than a selfPacer keeps: paced here, a frame at a time.
	clk = fakeClock{}
	self = &selfPacingSender{fakeSender{clk: &clk}}
	if sent, _ := pacedSend(self, 3, 0.5, &clk, nil); sent != 3 || self.paced != 0 || len(self.calls) != 3 || clk.t != 4*time.Second {
		t.Errorf("0.5 pps: sent %d, paced %g, calls %v, ended at %v", sent, self.paced, self.calls, clk.t)
	}
}
