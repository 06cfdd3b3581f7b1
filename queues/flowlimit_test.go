package queues

import "testing"

func TestFlowLimit(t *testing.T) {
	const maxBacklog = 100
	tests := []struct {
		name   string
		hashes func(i int) uint32 // the i-th packet's hash
		qlen   int
		n      int
		drops  int // packets dropped
		first  int // index of the first drop, -1 for none
	}{
		{name: "below half never counts", hashes: func(int) uint32 { return 7 }, qlen: maxBacklog/2 - 1, n: 1000, first: -1},
		// At half full the history counts: the 65th packet of one flow is
		// more than half of the 128-packet history, and so is every later
		// one.
		{name: "elephant at half", hashes: func(int) uint32 { return 7 }, qlen: maxBacklog / 2, n: 1000, drops: 1000 - 64, first: 64},
		// The kernel's quirk: the zeroed history stands for bucket 0, so
		// each packet of a bucket-0 flow (hash 0 here) ages out one of those
		// zeros as it counts itself, and its count never passes 1.
		{name: "bucket 0 is never limited", hashes: func(int) uint32 { return 0 }, qlen: maxBacklog, n: 1000, first: -1},
		// Two flows of equal rate hold 64 each: neither is ever dropped.
		{name: "two equal flows", hashes: func(i int) uint32 { return uint32(i % 2) }, qlen: maxBacklog, n: 1000, first: -1},
		// One flow in three packets: 2/3 of the history belongs to the
		// elephant once the history is full.
		{name: "elephant and mice", hashes: func(i int) uint32 {
			if i%3 != 0 {
				return 99
			}
			return uint32(i)
		}, qlen: maxBacklog, n: 300, first: 97},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewFlowLimit(DefaultFlowLimitTableLen)
			first, drops := -1, 0
			for i := range tt.n {
				if f.Limited(tt.hashes(i), tt.qlen, maxBacklog) {
					if first < 0 {
						first = i
					}
					drops++
				}
			}
			if first != tt.first || (tt.drops != 0 && drops != tt.drops) || f.Count() != uint64(drops) {
				t.Errorf("first drop at %d, %d drops (count %d), want %d and %d", first, drops, f.Count(), tt.first, tt.drops)
			}
		})
	}
}

// TestFlowLimitBucket checks hash_32 and the table length rounding.
func TestFlowLimitBucket(t *testing.T) {
	f := NewFlowLimit(3000) // rounded up to 4096: 12 bits
	if len(f.buckets) != 4096 {
		t.Fatalf("%d buckets, want 4096", len(f.buckets))
	}
	// hash_32(1, 12) = 0x61C88647 >> 20 = 0x61c.
	f.Limited(1, 1, 2)
	if f.buckets[0x61c] != 1 || f.history[0] != 0x61c || f.head != 1 {
		t.Errorf("bucket 0x61c = %d, history[0] = %#x: want 1 and 0x61c", f.buckets[0x61c], f.history[0])
	}
}
