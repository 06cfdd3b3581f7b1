package main

import (
	"fmt"
	"io"
	"time"
)

// pktgenProgress prints a line for each tick on w until stop closes: the
// frames iface has transmitted since start and the rate since the line
// before, as xdp-bench and xdp-trafficgen do. read returns the interface's
// transmit counter; a failed read ends the lines with one saying why.
func pktgenProgress(w io.Writer, iface string, read func() (uint64, error), start time.Time, ticks <-chan time.Time, stop <-chan struct{}) {
	base, err := read()
	if err != nil {
		fmt.Fprintf(w, "pktgen: no progress lines: %v\n", err)
		return
	}
	prev, prevAt := base, start
	for {
		select {
		case <-stop:
			return
		case now := <-ticks:
			n, err := read()
			if err != nil {
				fmt.Fprintf(w, "pktgen: no more progress lines: %v\n", err)
				return
			}
			pps := 0.0
			if secs := now.Sub(prevAt).Seconds(); secs > 0 && n >= prev {
				pps = float64(n-prev) / secs
			}
			fmt.Fprintf(w, "pktgen: %s: %d frames transmitted by %s, %.3f Mpps\n", now.Sub(start).Round(time.Second), n-base, iface, pps/1e6)
			prev, prevAt = n, now
		}
	}
}
