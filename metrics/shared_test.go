package metrics

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xdphash/xdphash/runstats"
)

// TestCollectorSharesSnapshot: scrapes that come while a snapshot is being
// taken wait for it and share it, scrapes right after reuse it, and a scrape
// once it has aged takes a new one.
func TestCollectorSharesSnapshot(t *testing.T) {
	var calls atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	c := NewCollector(func() *runstats.RunStats {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
		return &runstats.RunStats{DurationNs: int64(calls.Load())}
	})
	const scrapers = 8
	joined := make(chan struct{}, scrapers)
	c.joined = func() { joined <- struct{}{} }

	got := make([]*runstats.RunStats, scrapers)
	var wg sync.WaitGroup
	wg.Go(func() { got[0] = c.current() })
	<-entered
	for i := 1; i < scrapers; i++ {
		wg.Go(func() { got[i] = c.current() })
	}
	for range scrapers - 1 {
		<-joined
	}
	close(release)
	wg.Wait()
	for i, st := range got {
		if st != got[0] {
			t.Errorf("scrape %d got another snapshot", i)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d snapshots for %d concurrent scrapes, want 1", n, scrapers)
	}
	if st := c.current(); st != got[0] || calls.Load() != 1 {
		t.Error("a scrape right after the shared one did not reuse it")
	}
	c.lastAt = c.lastAt.Add(-SnapshotMaxAge)
	if st := c.current(); st == got[0] || calls.Load() != 2 {
		t.Error("a scrape once the snapshot aged did not take a new one")
	}
}
