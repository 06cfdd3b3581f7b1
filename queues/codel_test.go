package queues

import (
	"math"
	"testing"
)

// TestCoDelNewton checks the kernel's fixed-point reciprocal square root: one
// Newton step per count from 1/sqrt(1) approaches 1/sqrt(count), and the
// control law spaces drops by interval/sqrt(count).
func TestCoDelNewton(t *testing.T) {
	v := codelVars{count: 1, recInvSqrt: ^uint16(0)}
	for v.count < 1000 {
		v.count++
		v.newtonStep()
	}
	for i := 0; i < 4; i++ { // a few more steps at the same count converge
		v.newtonStep()
	}
	got := float64(v.recInvSqrt) / 65536
	if want := 1 / math.Sqrt(1000); math.Abs(got-want) > 0.001 {
		t.Errorf("1/sqrt(1000) = %v, want %v", got, want)
	}
	// 100 ms is 97656 units; at count 1 (0xffff) the next drop is 97654
	// units later, at count 4 (0x8000) 48828.
	if d := codelControlLaw(1000, 97656, 0xffff) - 1000; d != 97654 {
		t.Errorf("control law at count 1: %d units, want 97654", d)
	}
	if d := codelControlLaw(1000, 97656, 0x8000) - 1000; d != 48828 {
		t.Errorf("control law at 1/2: %d units, want 48828", d)
	}
	// Times compare across the 32-bit wrap.
	if !codelAfter(5, math.MaxUint32-5) || codelBefore(5, math.MaxUint32-5) {
		t.Errorf("codel time comparisons do not wrap")
	}
}

// TestCoDelShouldDrop steps codel_should_drop through a sojourn time that
// rises above target, stays, dips below, and rises again.
func TestCoDelShouldDrop(t *testing.T) {
	p := codelParams{target: 5000, interval: 100000, mtu: 1514}
	var v codelVars
	steps := []struct {
		name       string
		enq, now   codelTime
		backlog    uint64
		drop       bool
		firstAbove codelTime
	}{
		{name: "below target", enq: 0, now: 4999, backlog: 10000, drop: false, firstAbove: 0},
		{name: "reaches target", enq: 0, now: 5000, backlog: 10000, drop: false, firstAbove: 105000},
		{name: "above, within the interval", enq: 0, now: 105000, backlog: 10000, drop: false, firstAbove: 105000},
		{name: "above for a whole interval", enq: 0, now: 105001, backlog: 10000, drop: true, firstAbove: 105000},
		{name: "one MTU left: never", enq: 0, now: 106000, backlog: 1514, drop: false, firstAbove: 0},
		{name: "above again", enq: 0, now: 107000, backlog: 1515, drop: false, firstAbove: 207000},
		{name: "dips below", enq: 200000, now: 204000, backlog: 9000, drop: false, firstAbove: 0},
		{name: "above once more", enq: 200000, now: 206000, backlog: 9000, drop: false, firstAbove: 306000},
	}
	for _, s := range steps {
		if got := v.shouldDrop(&p, s.enq, s.now, s.backlog); got != s.drop || v.firstAboveTime != s.firstAbove {
			t.Errorf("%s: drop %v, first_above_time %d; want %v, %d", s.name, got, v.firstAboveTime, s.drop, s.firstAbove)
		}
	}
}
