package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report like the kernel proposal's table: shape, slow ns,
// fast ns, change, gopacket ns, fast's speed-up over gopacket, allocations.
func WriteTable(w io.Writer, rep Report) error {
	if rep.Descent != "" && rep.Descent != "none" {
		fmt.Fprintf(w, "descend %s (opt-in): the slow path and the Dissectors descend into these UDP tunnels\n\n", rep.Descent)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "case\tpath\tslow ns\tfast ns\tchange\tgopacket ns\tfast vs gopacket\tallocs (slow/fast)\t\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%+.1f%%\t%.2f\t%.1fx\t%g/%g\t\n",
			r.Case, r.Path, r.Ns[Slow], r.Ns[Fast], 100*r.Change(), r.Ns[Gopacket], r.Ns[Gopacket]/r.Ns[Fast],
			r.Allocs[Slow], r.Allocs[Fast])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ndecline cost of an open gate on a frame of its class it does not cover (medians of %d rounds):\n", rep.Rounds)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "gate\tclosed ns\topen ns\tdecline ns\t\n")
	for _, d := range rep.Declines {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t\n", d.Shape, d.ClosedNs, d.OpenNs, d.Cost())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Whole) > 0 {
		_, err := fmt.Fprintf(w, "(no decline: %s, whose fast path covers its whole class)\n", strings.Join(rep.Whole, ", "))
		return err
	}
	return nil
}
