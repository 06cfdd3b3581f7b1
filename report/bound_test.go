package report

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// TestHTMLBoundedForLargeRun: the page of a run whose workers report far
// more flow shares and windows than a page can show is as large, and costs
// as much memory, as what its charts can draw: the lines are thinned to the
// chart's width and the workers to the first few, whatever the input.
func TestHTMLBoundedForLargeRun(t *testing.T) {
	const workers, shares = 24, 100_000
	st := simulatedRun(t, 64, workers, 2, 50*time.Millisecond)
	for w := range st.Workers {
		s := make([]float64, shares)
		for i := range s {
			s[i] = 1 / float64(i+2) / 12
		}
		st.Workers[w].Consumer.Flows.Shares = s
	}
	m := Compute(st)
	var page bytes.Buffer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := m.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	const maxPage, maxAlloc = 4 << 20, 64 << 20
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d workers × %d shares: a %d-byte page, %d bytes allocated", workers, shares, page.Len(), alloc)
	if page.Len() > maxPage {
		t.Errorf("the page has %d bytes, want at most %d", page.Len(), maxPage)
	}
	if alloc > maxAlloc {
		t.Errorf("writing the page allocated %d bytes, want at most %d", alloc, maxAlloc)
	}
	if !bytes.Contains(page.Bytes(), []byte("the first 16 of 24 workers shown")) {
		t.Error("the page does not say that it shows only some workers")
	}
}
