package report

import "github.com/xdphash/xdphash/runstats"

// activeNs is the part of a run that had traffic: from the start of the
// first window in which a receive queue took a frame to the end of the last
// one, within the run's duration. A run without windows, or without
// traffic, is active for its whole duration. Rates over it say how fast the
// pipeline went while it had work, not how long the run waited for it.
func activeNs(st *runstats.RunStats) int64 {
	first, last := int64(-1), int64(-1)
	for _, w := range st.Windows {
		if !anyNonZero(w.QueuePackets) {
			continue
		}
		if first < 0 {
			first = w.StartNs
		}
		last = w.StartNs + st.Config.WindowNs
	}
	if first < 0 || st.Config.WindowNs <= 0 {
		return st.DurationNs
	}
	return max(0, min(last, st.DurationNs)-first)
}

func anyNonZero(v []uint64) bool {
	for _, n := range v {
		if n != 0 {
			return true
		}
	}
	return false
}
