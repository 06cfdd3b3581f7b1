package source

import (
	"strconv"
	"time"
)

// ReplayMode is how fast a file (or synthetic traffic) is handed out.
type ReplayMode uint8

const (
	// ReplayMax hands frames out as fast as they are taken.
	ReplayMax ReplayMode = iota
	// ReplayRecorded keeps the capture's gaps between frames.
	ReplayRecorded
	// ReplayRate hands frames out at Replay.PPS frames a second.
	ReplayRate
)

// Replay is the pace of a file or synthetic source.
type Replay struct {
	Mode ReplayMode
	PPS  float64 // frames per second, for ReplayRate
}

func (r Replay) String() string {
	switch r.Mode {
	case ReplayRecorded:
		return "recorded"
	case ReplayRate:
		return strconv.FormatFloat(r.PPS, 'g', -1, 64) + "pps"
	}
	return "max"
}

// interval is the gap between frames at rate pps, in nanoseconds.
func interval(pps float64) float64 { return 1e9 / pps }

// pacer sleeps a paced source's goroutine until a frame is due, or until the
// source closes (done). It reuses one timer: a frame costs no allocation.
// The capture replay and the synthetic source share it.
type pacer struct {
	clock Clock
	done  <-chan struct{}
	timer *time.Timer
}

// sleep waits d nanoseconds; false when the source was closed first.
func (p *pacer) sleep(d int64) bool {
	if p.timer == nil {
		p.timer = time.NewTimer(time.Duration(d))
	} else {
		p.timer.Reset(time.Duration(d))
	}
	select {
	case <-p.timer.C:
		return true
	case <-p.done:
		p.timer.Stop()
		return false
	}
}

// until sleeps until the clock reads t, calling before first when it has
// to wait (a capture's reader hands out its partly filled batches: a paced
// frame must not wait for a batch to fill); false when the source was
// closed.
func (p *pacer) until(t int64, before func()) bool {
	d := t - p.clock()
	if d <= 0 {
		return true
	}
	if before != nil {
		before()
	}
	return p.sleep(d)
}

// isClosed reports whether done, a source's Close signal, is closed.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
