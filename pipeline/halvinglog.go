package pipeline

// halvingLog is a log of at most limit entries, each of which covers span on
// the run's clock (0 for a log not indexed by time). When one more entry
// would not fit, halve merges neighbours in pairs and doubles span, so that
// a run of any length, window or interval keeps a bounded log, at a coarser
// grain the longer it runs.
type halvingLog[T any] struct {
	entries []T
	span    int64
	limit   int
	// merge is the entry that covers a and b, a just before b: a sum of
	// counts, or the later of two cumulative snapshots. It may reuse a's
	// storage.
	merge func(a, b T) T
}

// newHalvingLog returns an empty log of at most limit entries (at least 2)
// of span each.
func newHalvingLog[T any](limit int, span int64, merge func(a, b T) T) halvingLog[T] {
	return halvingLog[T]{span: span, limit: max(limit, 2), merge: merge}
}

// push appends x, halving the log first when it is full.
func (l *halvingLog[T]) push(x T) {
	if len(l.entries) >= l.limit {
		l.halve()
	}
	l.entries = append(l.entries, x)
}

// halve merges entries 2i and 2i+1 into entry i, keeps an odd last entry as
// it is (it covers the first half of its doubled span), and doubles span.
func (l *halvingLog[T]) halve() {
	n := len(l.entries)
	for i := range n / 2 {
		l.entries[i] = l.merge(l.entries[2*i], l.entries[2*i+1])
	}
	if n%2 == 1 {
		l.entries[n/2] = l.entries[n-1]
	}
	m := (n + 1) / 2
	clear(l.entries[m:])
	l.entries = l.entries[:m]
	l.span *= 2
}
