package pipeline

// MaxWindows bounds the windows a run keeps: when a run outgrows them, each
// loop merges its windows in pairs and doubles their length, so that the
// memory a run takes and the size of its statistics stay bounded whatever
// its length, its --window or the stamps of its frames.
const MaxWindows = 4096

// windowLog is one loop's cumulative counters at the end of each window,
// windows of length starting at 0 on the run's clock: snaps.entries[k] is
// the state at the end of window k, end the end of the window still open.
type windowLog[S any] struct {
	snaps halvingLog[S]
	end   int64
}

func newWindowLog[S any](length int64) windowLog[S] {
	// The state at the end of a doubled window is the one at the end of
	// its second half.
	later := func(_, b S) S { return b }
	return windowLog[S]{snaps: newHalvingLog(MaxWindows, length, later), end: length}
}

// length is the log's window length now.
func (l *windowLog[S]) length() int64 { return l.snaps.span }

// due reports whether t is past the open window's end.
func (l *windowLog[S]) due(t int64) bool { return t >= l.end }

// closeUntil records s as the state at the end of every window that ended by
// t (the counters did not change in between). A full log halves first; the
// window that ended is then the first half of a doubled one, whose state is
// recorded at its end.
func (l *windowLog[S]) closeUntil(t int64, s S) {
	for t >= l.end {
		if len(l.snaps.entries) == l.snaps.limit {
			l.snaps.halve()
		}
		if l.end%l.snaps.span == 0 {
			l.snaps.push(s)
		}
		l.end = int64(len(l.snaps.entries)+1) * l.snaps.span
	}
}

// push records s as the state at the end of the run, in the open window.
func (l *windowLog[S]) push(s S) { l.snaps.push(s) }

// at returns the state at the end of window k of length length (a multiple
// of the log's): the last state for k past the end (the counters stopped),
// and the zero state for k < 0.
func (l *windowLog[S]) at(k int, length int64) S {
	var zero S
	snaps := l.snaps.entries
	if k < 0 || len(snaps) == 0 {
		return zero
	}
	i := (k+1)*int(length/l.snaps.span) - 1
	if i >= len(snaps) {
		return snaps[len(snaps)-1]
	}
	return snaps[i]
}

// windows is how many windows of length length the log covers.
func (l *windowLog[S]) windows(length int64) int {
	per := int(length / l.snaps.span)
	return (len(l.snaps.entries) + per - 1) / per
}
