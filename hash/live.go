package hash

import (
	"fmt"
	"sync/atomic"
)

// RETAFrom returns the table whose entry i steers to queue entries[i], over
// queues receive queues: a table a rebalancer computed, or one read from a
// device. The entries are copied, so the table stays immutable whatever the
// caller does with entries afterwards. As for [NewRETA], the size must be a
// power of two up to 65536.
func RETAFrom(entries []uint16, queues int) (*RETA, error) {
	size := len(entries)
	if size == 0 || size > maxRETASize || size&(size-1) != 0 {
		return nil, fmt.Errorf("create RETA from entries: %w: size %d is not a power of two up to %d", ErrRETA, size, maxRETASize)
	}
	if queues < 1 || queues > maxRETASize {
		return nil, fmt.Errorf("create RETA from entries: %w: %d queues, want 1 to %d", ErrRETA, queues, maxRETASize)
	}
	for i, q := range entries {
		if int(q) >= queues {
			return nil, fmt.Errorf("create RETA from entries: %w: entry %d is queue %d of %d", ErrRETA, i, q, queues)
		}
	}
	r := &RETA{table: make([]uint16, size), mask: uint32(size - 1)}
	copy(r.table, entries)
	return r, nil
}

// AppendEntries appends the table's entries to dst and returns the result:
// [RETA.Table] without the allocation, for a caller that keeps a buffer.
func (r *RETA) AppendEntries(dst []uint16) []uint16 { return append(dst, r.table...) }

// Bucket returns the entry the NIC reads for hash: hash % size. Counting load
// per bucket is what lets a rebalancer move part of a queue's traffic.
func (r *RETA) Bucket(hash uint32) int { return int(hash & r.mask) }

// LiveRETA is the indirection table in force while a rebalancer replaces it:
// receive loops read it, one goroutine writes it. A reader takes the table
// with one atomic load per batch of packets ([LiveRETA.Load]) and steers the
// whole batch with it; a writer publishes a new table with [LiveRETA.Store].
// There is no lock, and readers allocate nothing.
//
// A published table is never modified (a [RETA] has no mutators), so a
// reader holding the previous one until its batch ends reads a consistent
// table; the garbage collector frees it once no reader holds it. The zero
// LiveRETA holds no table: Load returns nil until the first Store.
type LiveRETA struct{ p atomic.Pointer[RETA] }

// NewLiveRETA returns a LiveRETA holding r.
func NewLiveRETA(r *RETA) *LiveRETA {
	l := new(LiveRETA)
	l.p.Store(r)
	return l
}

// Load returns the table in force.
func (l *LiveRETA) Load() *RETA { return l.p.Load() }

// Store makes r the table in force for every Load that follows.
func (l *LiveRETA) Store(r *RETA) { l.p.Store(r) }
