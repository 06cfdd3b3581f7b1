package hash

import (
	"slices"
	"testing"
)

func TestWeightsOf(t *testing.T) {
	for _, weights := range [][]int{{1, 1}, {3, 1}, {1, 2, 5, 0}, {7}} {
		r, err := NewRETA(128, len(weights), weights)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := WeightsOf(r.AppendEntries(nil), len(weights))
		// Weights are recovered up to their common factor: as entry counts.
		again, err := NewRETA(128, len(weights), got)
		if !ok || err != nil || !slices.Equal(again.AppendEntries(nil), r.AppendEntries(nil)) {
			t.Errorf("weights %v: WeightsOf gave %v, %t (%v)", weights, got, ok, err)
		}
	}
	// Round robin over 2 queues: no weights fill a table that way.
	if _, ok := WeightsOf([]uint16{0, 1, 0, 1}, 2); ok {
		t.Error("an interleaved table taken for a weighted one")
	}
	if _, ok := WeightsOf([]uint16{0, 2}, 2); ok {
		t.Error("an entry past the queues accepted")
	}
}
