package main

import (
	"io"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/report"
)

// writeDissectorStats prints a Dissector's per-shape counters as a table,
// with its gates and, when it is on, auto mode's view of each gate. The
// table goes to stderr beside the output, so a failed write loses nothing.
func writeDissectorStats(w io.Writer, d *dissect.Dissector) {
	s := report.Shapes{Counters: d.Counters()}
	gates := d.Gates()
	s.Gates = &gates
	if auto, ok := d.AutoState(); ok {
		s.Auto = &auto
	}
	_ = report.WriteShapes(w, s)
}
