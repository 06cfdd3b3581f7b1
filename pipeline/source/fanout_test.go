package source

import (
	"runtime"
	"testing"
)

// TestFanoutMemoryBound: a batch of 16384 jumbo frames would hold 147 MB,
// four of them per queue; the Fanout hands a batch out at its share of
// MaxFanoutMemory instead, so a dropping Fanout that nothing drains holds at
// most that much and drops the rest.
func TestFanoutMemoryBound(t *testing.T) {
	const frames, size = 20000, 9000
	data := make([]byte, size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := NewFanout(1, 1<<14, true) // pipeline.MaxBatch
	for i := range frames {
		if !f.Add(0, data, size, int64(i), nil) {
			t.Fatal("closed")
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := f.queues[0].Stats()
	if st.ReplayRingFull == 0 {
		t.Errorf("all %d frames of %d bytes held in 4 batches, want drops past %d MB", frames, size, MaxFanoutMemory>>20)
	}
	// The batches' arenas, and the frames' lists.
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > MaxFanoutMemory+4<<20 {
		t.Errorf("the Fanout holds %d MB, want at most %d", held>>20, MaxFanoutMemory>>20)
	}
	runtime.KeepAlive(f)
}
