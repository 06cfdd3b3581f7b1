package main

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestPktgenProgress: one line per tick with the frames transmitted since
// the start and the rate since the line before; a failed read ends the
// lines with the reason; stop ends them.
func TestPktgenProgress(t *testing.T) {
	counts := []uint64{1000, 1_501_000, 2_001_000}
	var reads int
	read := func() (uint64, error) {
		if reads == len(counts) {
			return 0, errors.New("link gone")
		}
		reads++
		return counts[reads-1], nil
	}
	start := time.Unix(100, 0)
	ticks := make(chan time.Time)
	stop := make(chan struct{})
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		pktgenProgress(&out, "veth1", read, start, ticks, stop)
	}()
	ticks <- start.Add(time.Second)
	ticks <- start.Add(2 * time.Second)
	ticks <- start.Add(3 * time.Second)
	<-done // the third tick's read failed
	want := "pktgen: 1s: 1500000 frames transmitted by veth1, 1.500 Mpps\n" +
		"pktgen: 2s: 2000000 frames transmitted by veth1, 0.500 Mpps\n" +
		"pktgen: no more progress lines: link gone\n"
	if out.String() != want {
		t.Errorf("lines\n%s\nwant\n%s", out.String(), want)
	}

	reads, out = 0, bytes.Buffer{}
	done = make(chan struct{})
	go func() {
		defer close(done)
		pktgenProgress(&out, "veth1", read, start, ticks, stop)
	}()
	close(stop)
	<-done
	if out.Len() != 0 {
		t.Errorf("lines after stop without a tick: %q", out.String())
	}
}
