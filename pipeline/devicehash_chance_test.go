package pipeline

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/internal/kernel"
)

// poissonTail is P(X > k) for a Poisson X of the given mean, summed from
// above k (not as chanceCollisions does, from below).
func poissonTail(mean float64, k int) float64 {
	term := math.Exp(-mean)
	for i := 1; i <= k+1; i++ {
		term *= mean / float64(i)
	}
	sum := 0.0
	for i := k + 2; term > 1e-300 && i < k+1000; i++ {
		sum += term
		term *= mean / float64(i)
	}
	return sum
}

func TestChanceCollisions(t *testing.T) {
	if got := chanceCollisions(2); got != 0 {
		t.Errorf("2 flows: chance allows %d shared device hashes, want 0", got)
	}
	last := 0
	for _, flows := range []uint64{1e3, 16384, 1e5, 3e5, 1e6} {
		k := chanceCollisions(flows)
		mean := float64(flows) * float64(flows-1) / (1 << 33)
		if k < last {
			t.Errorf("%d flows: %d, fewer than %d for fewer flows", flows, k, last)
		}
		if k == maxChanceCollisions {
			continue
		}
		if p := poissonTail(mean, k); p > chanceTail {
			t.Errorf("%d flows (mean %.3g): %d allowed, but P(X > %d) = %.3g > %g", flows, mean, k, k, p, chanceTail)
		}
		if k > 0 && poissonTail(mean, k-1) <= chanceTail {
			t.Errorf("%d flows (mean %.3g): %d allowed, but %d already leaves P(X > k) <= %g", flows, mean, k, k-1, chanceTail)
		}
		last = k
	}
	if got := chanceCollisions(1e7); got != maxChanceCollisions {
		t.Errorf("10 million flows: %d, want the bound %d", got, maxChanceCollisions)
	}
}

// partitionFlow is one flow the partition check is shown: its keys, our
// hash and the device's.
type partitionFlow struct {
	keys     dissect.FlowKeys
	own, dev uint32
}

func newPartitionFlow(id uint32, own, dev uint32) partitionFlow {
	f := partitionFlow{own: own, dev: dev}
	binary.BigEndian.PutUint32(f.keys[40:], id)
	return f
}

func (f *partitionFlow) show(c *deviceCheck) {
	m := kernel.XDPMetadata{Valid: true, Hash: f.dev, HashType: kernel.RSSL4}
	c.frame([]byte{1}, &m, dissect.VLANTag{}, &f.keys, f.own)
}

// TestDeviceCheckPartitionChance: two flows whose device hashes, or whose
// hashes of ours, are equal by chance are collisions, not conflicts, while
// chance explains them; one flow with two device hashes, a third flow on a
// device hash, and more shared device hashes than chance gives are
// conflicts.
func TestDeviceCheckPartitionChance(t *testing.T) {
	const background = 20000 // flows: chance allows a few shared hashes
	withFlows := func() *deviceCheck {
		c := newDeviceCheck(0, false)
		for i := range uint32(background) {
			// Hashes of their own: none equals one of the flows below.
			f := newPartitionFlow(1e6+i, 0x10000000+i*7919, 0x20000000+i*104729)
			f.show(c)
		}
		if c.conflicts != 0 || c.collisions != 0 {
			t.Fatalf("background flows: %d conflicts, %d collisions", c.conflicts, c.collisions)
		}
		return c
	}
	allowed := chanceCollisions(background)
	if allowed < 2 {
		t.Fatalf("chance allows %d shared hashes among %d flows", allowed, background)
	}

	t.Run("device hash shared", func(t *testing.T) {
		c := withFlows()
		a, b := newPartitionFlow(1, 0xaaaa0001, 0xdddd0001), newPartitionFlow(2, 0xbbbb0001, 0xdddd0001)
		for range 3 {
			a.show(c)
			b.show(c)
		}
		if c.conflicts != 0 || c.collisions != 5 {
			t.Errorf("a pair of flows sharing a device hash, 6 frames: %d conflicts, %d collisions; want 0, 5", c.conflicts, c.collisions)
		}
		third := newPartitionFlow(3, 0xcccc0001, 0xdddd0001)
		third.show(c)
		if c.conflicts != 1 {
			t.Errorf("a third flow on the shared device hash: %d conflicts, want 1", c.conflicts)
		}
	})
	t.Run("more than chance", func(t *testing.T) {
		c := withFlows()
		for i := range uint32(allowed + 1) {
			a, b := newPartitionFlow(10+2*i, 0xaaaa0100+i, 0xdddd0100+i), newPartitionFlow(11+2*i, 0xbbbb0100+i, 0xdddd0100+i)
			a.show(c)
			b.show(c)
		}
		if c.collisions != uint64(allowed) || c.conflicts != 1 {
			t.Errorf("%d pairs sharing device hashes, chance allows %d: %d collisions, %d conflicts; want %d, 1", allowed+1, allowed, c.collisions, c.conflicts, allowed)
		}
	})
	// Two frames, each of its own flow or both of one.
	for _, tt := range []struct {
		name                        string
		background                  bool
		a, b                        partitionFlow
		wantConflicts, wantCollides uint64
	}{
		{"few flows", false, newPartitionFlow(1, 0xaaaa0001, 0xdddd0001), newPartitionFlow(2, 0xbbbb0001, 0xdddd0001), 1, 0},
		{"our hash shared", false, newPartitionFlow(1, 0xaaaa0001, 0xdddd0001), newPartitionFlow(2, 0xaaaa0001, 0xeeee0001), 0, 1},
		{"one flow, two device hashes", true, newPartitionFlow(1, 0xaaaa0001, 0xdddd0001), newPartitionFlow(1, 0xaaaa0001, 0xeeee0001), 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newDeviceCheck(0, false)
			if tt.background {
				c = withFlows()
			}
			tt.a.show(c)
			tt.b.show(c)
			if c.conflicts != tt.wantConflicts || c.collisions != tt.wantCollides {
				t.Errorf("%d conflicts, %d collisions; want %d, %d", c.conflicts, c.collisions, tt.wantConflicts, tt.wantCollides)
			}
		})
	}
}
