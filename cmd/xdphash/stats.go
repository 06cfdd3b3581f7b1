package main

import (
	"fmt"
	"io"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/report"
)

// writeDissectorStats prints a Dissector's per-shape counters as a table,
// after the path that dissected the frames, with the gates where the path
// has them and, when it is on, auto mode's view of each gate.
func writeDissectorStats(w io.Writer, d *dissect.Dissector, path dissectPath) {
	s := report.Shapes{Counters: d.Counters()}
	switch path {
	case pathSlow:
		fmt.Fprintln(w, "path slow: the reference dissector for every frame (--path fast or auto tries the fast paths)")
	case pathFast:
		fmt.Fprintln(w, "path fast: the fast path of each shape whose gate is open (--gates), else the slow path")
	case pathAuto:
		fmt.Fprintln(w, "path auto: the gates open and close from the traffic")
	}
	if path != pathSlow {
		gates := d.Gates()
		s.Gates = &gates
	}
	if auto, ok := d.AutoState(); ok {
		s.Auto = &auto
	}
	_ = report.WriteShapes(w, s)
}
