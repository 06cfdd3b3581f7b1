package pipeline

// MaxWindows bounds the windows a run keeps: when a run outgrows them, each
// loop merges its windows in pairs and doubles their length, so that the
// memory a run takes and the size of its statistics stay bounded whatever
// its length, its --window or the stamps of its frames.
const MaxWindows = 4096

// windowLog is one loop's cumulative counters at the end of each window,
// windows of length starting at 0 on the run's clock: snaps[k] is the state
// at the end of window k, end the end of the window still open.
type windowLog[S any] struct {
	length, end int64
	snaps       []S
}

func newWindowLog[S any](length int64) windowLog[S] {
	return windowLog[S]{length: length, end: length}
}

// due reports whether t is past the open window's end.
func (l *windowLog[S]) due(t int64) bool { return t >= l.end }

// closeUntil records s as the state at the end of every window that ended by
// t (the counters did not change in between).
func (l *windowLog[S]) closeUntil(t int64, s S) {
	for t >= l.end {
		l.push(s)
		l.end = int64(len(l.snaps)+1) * l.length
	}
}

// push records s as the state at the end of the open window.
func (l *windowLog[S]) push(s S) {
	if len(l.snaps) == MaxWindows {
		// Merge pairs: the state at the end of a doubled window is the one
		// at the end of its second half.
		n := len(l.snaps) / 2
		for i := range n {
			l.snaps[i] = l.snaps[2*i+1]
		}
		clear(l.snaps[n:])
		l.snaps = l.snaps[:n]
		l.length *= 2
	}
	l.snaps = append(l.snaps, s)
}

// at returns the state at the end of window k of length length (a multiple
// of the log's): the last state for k past the end (the counters stopped),
// and the zero state for k < 0.
func (l *windowLog[S]) at(k int, length int64) S {
	var zero S
	if k < 0 || len(l.snaps) == 0 {
		return zero
	}
	i := (k+1)*int(length/l.length) - 1
	if i >= len(l.snaps) {
		return l.snaps[len(l.snaps)-1]
	}
	return l.snaps[i]
}

// windows is how many windows of length length the log covers.
func (l *windowLog[S]) windows(length int64) int {
	per := int(length / l.length)
	return (len(l.snaps) + per - 1) / per
}
