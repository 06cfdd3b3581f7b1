package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/runstats"
)

// TestRebalanceHoldSeveralLoopsEnds runs the hold on the virtual clock with
// two receive loops, the case where a worker waiting in its hold for an old
// worker's clock, and a loop waiting for room in that worker's ring, waited
// on each other: every run must receive and account for all its frames. A
// run that never ends fails the test at the bound rather than hang it.
func TestRebalanceHoldSeveralLoopsEnds(t *testing.T) {
	tests := []struct {
		profile string
		count   uint64
		key     byte // the hash key's first byte
		stepped bool // the receive loops step the workers
	}{
		{"hotset", 200000, 0, true},
		{"hotset", 200000, 7, false},
		{"hotset", 100000, 0x5a, true},
		{"datacenter", 20000, 0, true},
		{"datacenter", 20000, 0x33, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d/key%x/stepped=%v", tt.profile, tt.count, tt.key, tt.stepped), func(t *testing.T) {
			key := testKey
			key[0] = tt.key
			src, err := NewSynthetic(profileFrames(t, tt.profile), source.SyntheticConfig{Count: tt.count},
				RSSConfig{Key: hash.DefaultRSSKey[:], Queues: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			plan := stepPlan(2, tt.stepped)
			e, err := NewEngine(EngineConfig{
				Plan: &plan, Source: src,
				Steering:  hash.SteerConfig{Workers: 2, Key: key, Steer: hash.SteerRETA},
				Flags:     dissect.DefaultFlags,
				Gates:     dissect.AllGates,
				Virtual:   true,
				Rebalance: RebalanceConfig{Interval: time.Millisecond, Hold: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := xdptest.Go(func() (*runstats.RunStats, error) { return e.Run(ctx) })
			bound := time.NewTimer(2 * time.Minute)
			defer bound.Stop()
			select {
			case r := <-done:
				if r.Err != nil {
					t.Fatalf("run: %v", r.Err)
				}
				checkAccounting(t, r.Value, tt.count)
				rr := r.Value.Steering.Rebalance
				if rr.Hold == nil || rr.Hold.Buckets != rr.Moves {
					t.Errorf("moves %d, hold %+v: want every move held", rr.Moves, rr.Hold)
				}
				if got := r.Value.Steering.Reorder; got.Reordered != 0 {
					t.Errorf("with the hold, reordered %+v; want 0", got)
				}
			case <-bound.C:
				cancel()
				t.Fatalf("the run has not ended in %s: the loops and the workers wait on each other", 2*time.Minute)
			}
		})
	}
}

// TestRunStopsWhileWaiting stops a virtual run whose one worker takes
// nothing: the receive loop waits for room in the worker's full ring, and
// the stop must end that wait, with every frame accounted for.
func TestRunStopsWhileWaiting(t *testing.T) {
	src, err := source.NewSynthetic(profileFrames(t, "datacenter"), source.SyntheticConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	plan := stepPlan(1, false)
	e, err := NewEngine(EngineConfig{
		Plan: &plan, Source: src,
		Steering: hash.SteerConfig{Workers: 1, Key: testKey},
		Flags:    dissect.DefaultFlags,
		Gates:    dissect.AllGates,
		RingSize: 16,
		Virtual:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The worker's lock, held here, keeps it from taking anything.
	w := e.workers[0]
	w.mu.Lock()
	ctx, cancel := context.WithCancel(context.Background())
	done := xdptest.Go(func() (*runstats.RunStats, error) { return e.Run(ctx) })
	// Len, not Free: Free is the producer's own, and this is not the producer.
	for ring := e.recv[0].out[0].ring; ring.Len() < ring.Cap(); {
		runtime.Gosched() // until the ring is full
	}
	cancel()
	// The loop ends before the worker can take a record: Run's receive
	// loops end, then the worker drains.
	bound := time.After(time.Minute)
	for !e.producersDone() {
		select {
		case <-bound:
			t.Fatal("the receive loop still waits for room a minute after the stop")
		default:
			runtime.Gosched()
		}
	}
	w.mu.Unlock()
	r := <-done
	if r.Err != nil {
		t.Fatalf("run: %v", r.Err)
	}
	acc := r.Value.Accounting
	if !acc.Balanced || acc.Received == 0 || acc.Dropped[runstats.DropRingFull] == 0 {
		t.Errorf("accounting %+v: want balanced, with the frames of the stop counted as ring-full drops", acc)
	}
}
