package rebalance

import (
	"errors"
	"slices"
	"testing"

	"github.com/xdphash/xdphash/hash"
)

func TestApply(t *testing.T) {
	const size, workers = 128, 4
	start, err := hash.NewRETA(size, workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := hash.NewLiveRETA(start)
	r, err := New(Config{Size: size, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	// Balanced: nothing moves, the same table stays in force, no allocation.
	even := filled(size, 10)
	allocs := testing.AllocsPerRun(10, func() {
		if res, err := r.Apply(live, even); err != nil || res.Moves != 0 {
			t.Fatalf("even load: %+v, %v", res, err)
		}
	})
	if live.Load() != start || allocs != 0 {
		t.Errorf("even load: table replaced or %g allocations", allocs)
	}
	// Worker 0 twice as busy: the moves are published, the old table is
	// untouched for a reader that still holds it.
	cur, load := skewed(size, workers)
	want := make([]uint16, size)
	ref, err := New(Config{Size: size, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	wantRes, err := ref.Rebalance(want, cur, load)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Apply(live, load)
	if err != nil || res != wantRes || res.Moves == 0 {
		t.Fatalf("skewed load: %+v, %v; want %+v", res, err, wantRes)
	}
	if got := live.Load().AppendEntries(nil); !slices.Equal(got, want) {
		t.Errorf("published table %v, want %v", got, want)
	}
	if !slices.Equal(start.AppendEntries(nil), cur) {
		t.Error("the table a reader held changed")
	}
	if _, err := r.Apply(hash.NewLiveRETA(nil), load); !errors.Is(err, ErrInput) {
		t.Errorf("no table in force: error %v, want ErrInput", err)
	}
	small, _ := hash.NewRETA(64, workers, nil)
	if _, err := r.Apply(hash.NewLiveRETA(small), load); !errors.Is(err, ErrInput) {
		t.Errorf("table of 64 entries for a rebalancer of 128: error %v, want ErrInput", err)
	}
}
