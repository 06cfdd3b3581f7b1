package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/xdphash/xdphash/dissect"
)

// writeDissectorStats prints a Dissector's per-shape counters as a table, with
// auto mode's view of each gate when it is on.
func writeDissectorStats(w io.Writer, d *dissect.Dissector) {
	c := d.Counters()
	auto, isAuto := d.AutoState()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "shape\tgate\tfast\tdeclined\tslow\t")
	if isAuto {
		fmt.Fprintf(tw, "auto p\tp_be\tflips\t")
	}
	fmt.Fprintln(tw)
	var fast, slow uint64
	for s := range dissect.NumShapes {
		sc := c.Shape[s]
		gate := "closed"
		if d.Gates().Has(s) {
			gate = "open"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t", s, gate, sc.Fast, sc.Declined, sc.Slow)
		if isAuto {
			fmt.Fprintf(tw, "%.3f\t%.3f\t%d\t", auto[s].Share, auto[s].BreakEven, auto[s].Flips)
		}
		fmt.Fprintln(tw)
		fast += sc.Fast
		slow += sc.Slow
	}
	fmt.Fprintf(tw, "other\t-\t-\t-\t%d\t\n", c.Other)
	tw.Flush()
	fmt.Fprintf(w, "total: %d fast, %d slow-path runs, %d gate flips\n", fast, slow+c.Other, c.Flips)
}
