package pipeline

import (
	"slices"
	"testing"
)

// TestHalvingLog pushes counts into a log of 4 entries that sums when it
// halves: each halving merges neighbours in pairs, keeps an odd last entry
// alone, doubles the span, and loses no count.
func TestHalvingLog(t *testing.T) {
	sum := func(a, b int) int { return a + b }
	l := newHalvingLog(4, 10, sum)
	steps := []struct {
		push int
		want []int
		span int64
	}{
		{1, []int{1}, 10},
		{2, []int{1, 2}, 10},
		{3, []int{1, 2, 3}, 10},
		{4, []int{1, 2, 3, 4}, 10},
		{5, []int{3, 7, 5}, 20}, // full: halved, then appended
		{6, []int{3, 7, 5, 6}, 20},
		{7, []int{10, 11, 7}, 40},
	}
	for _, s := range steps {
		l.push(s.push)
		if !slices.Equal(l.entries, s.want) || l.span != s.span {
			t.Fatalf("after push(%d): entries %v of span %d, want %v of span %d", s.push, l.entries, l.span, s.want, s.span)
		}
	}
	// An odd count halves with its last entry alone.
	l.halve()
	if want := []int{21, 7}; !slices.Equal(l.entries, want) || l.span != 80 {
		t.Errorf("halve of [10 11 7]: %v of span %d, want %v of span 80", l.entries, l.span, want)
	}
}

// TestHalvingLogBounded uses the log as the engine's bucket log does, over
// many unit windows: each window's count goes to the entry of its time,
// halving while the time is past the last entry's span. Beside it a window
// log records the cumulative count at each window's end. Neither holds more
// than its limit, the counts add up to what was added, and the window log's
// difference between consecutive windows is the bucket log's entry.
func TestHalvingLogBounded(t *testing.T) {
	const n = 3*MaxWindows + 5
	sums := newHalvingLog(MaxWindows, 1, func(a, b uint64) uint64 { return a + b })
	snaps := newWindowLog[uint64](1)
	var total uint64
	for i := range int64(n) {
		snaps.closeUntil(i, total) // window i-1 has ended
		count := uint64(i%7 + 1)   // window i's count
		row := int(i / sums.span)
		for row >= sums.limit {
			sums.halve()
			row = int(i / sums.span)
		}
		for len(sums.entries) <= row {
			sums.push(0)
		}
		sums.entries[row] += count
		total += count
		if len(sums.entries) > MaxWindows || len(snaps.snaps.entries) > MaxWindows {
			t.Fatalf("after window %d: %d and %d entries, limit %d", i, len(sums.entries), len(snaps.snaps.entries), MaxWindows)
		}
	}
	snaps.push(total)
	if sums.span != 4 || snaps.length() != 4 {
		t.Fatalf("spans %d and %d, want 4 (%d windows of 1 in at most %d)", sums.span, snaps.length(), n, MaxWindows)
	}
	var got uint64
	for k, v := range sums.entries {
		got += v
		if d := snaps.at(k, 4) - snaps.at(k-1, 4); d != v {
			t.Errorf("window %d of 4: the window log counts %d, the bucket log %d", k, d, v)
		}
	}
	if got != total || snaps.windows(4) != len(sums.entries) {
		t.Errorf("entries sum to %d over %d windows, want %d over %d", got, len(sums.entries), total, snaps.windows(4))
	}
}
