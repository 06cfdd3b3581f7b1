package hash

import (
	"errors"
	"slices"
	"testing"
)

func TestRETAFrom(t *testing.T) {
	entries := []uint16{3, 0, 1, 1, 2, 0, 3, 2}
	r, err := RETAFrom(entries, 4)
	if err != nil {
		t.Fatal(err)
	}
	entries[0] = 1 // the table keeps its own copy
	if got, want := r.Table(), []int{3, 0, 1, 1, 2, 0, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("RETAFrom table = %v, want %v", got, want)
	}
	if got := r.AppendEntries([]uint16{9}); !slices.Equal(got, []uint16{9, 3, 0, 1, 1, 2, 0, 3, 2}) {
		t.Errorf("AppendEntries = %v", got)
	}
	// Hash 0x1234567e: low three bits 6, entry 6 is queue 3.
	if b, q := r.Bucket(0x1234567e), r.Queue(0x1234567e); b != 6 || q != 3 {
		t.Errorf("Bucket, Queue(0x1234567e) = %d, %d; want 6, 3", b, q)
	}
	for _, tt := range []struct {
		name    string
		entries []uint16
		queues  int
	}{
		{"empty", nil, 4},
		{"not a power of two", make([]uint16, 6), 4},
		{"entry beyond the queues", []uint16{0, 4}, 4},
		{"no queue", []uint16{0, 0}, 0},
	} {
		if _, err := RETAFrom(tt.entries, tt.queues); !errors.Is(err, ErrRETA) {
			t.Errorf("%s: RETAFrom error = %v, want ErrRETA", tt.name, err)
		}
	}
}

func TestLiveRETA(t *testing.T) {
	if (&LiveRETA{}).Load() != nil {
		t.Error("zero LiveRETA holds a table")
	}
	for _, size := range []int{128, 512, 2048} {
		a, err := NewRETA(size, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		entries := a.AppendEntries(nil)
		entries[5] = 0 // round robin had queue 1 there
		b, err := RETAFrom(entries, 4)
		if err != nil {
			t.Fatal(err)
		}
		live := NewLiveRETA(a)
		held := live.Load()
		live.Store(b)
		if held.Queue(5) != 1 || live.Load().Queue(5) != 0 {
			t.Errorf("size %d: the held table reads %d, the new one %d; want 1 and 0", size, held.Queue(5), live.Load().Queue(5))
		}
		var sum int
		allocs := testing.AllocsPerRun(100, func() {
			r := live.Load()
			for h := range uint32(64) {
				sum += r.Queue(h*0x9e3779b1) + r.Bucket(h)
			}
		})
		if allocs != 0 {
			t.Errorf("size %d: a batch of look-ups allocates %g times", size, allocs)
		}
	}
}

// TestLiveRETAConcurrent publishes tables whose entries are all alike while
// readers steer with them: every table a reader loads must be whole (all
// its entries alike), and every reader must end on the last one.
func TestLiveRETAConcurrent(t *testing.T) {
	const queues, tables, readers = 4, 200, 2
	uniform := func(q uint16) *RETA {
		e := make([]uint16, 128)
		for i := range e {
			e[i] = q
		}
		r, err := RETAFrom(e, queues)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	all := make([]*RETA, tables)
	for i := range all {
		all[i] = uniform(uint16(i % queues))
	}
	live := NewLiveRETA(all[0])
	errs := make(chan string, readers)
	for range readers {
		go func() {
			for {
				r := live.Load()
				first := r.Queue(0)
				for h := range uint32(128) {
					if r.Queue(h) != first {
						errs <- "a loaded table changed under its reader"
						return
					}
				}
				if r == all[tables-1] {
					errs <- ""
					return
				}
			}
		}()
	}
	for _, r := range all[1:] {
		live.Store(r)
	}
	for range readers {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
}
