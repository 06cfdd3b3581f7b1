package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/xdphash/xdphash/fairness"
	"github.com/xdphash/xdphash/runstats"
)

// WriteText writes the report of st as terminal tables: the run, the load
// per receive queue and per worker with their fairness against the
// balls-into-bins expectation, the flows inside each consumer, the top
// flows, and the drops.
func WriteText(w io.Writer, st *runstats.RunStats) error {
	m := Compute(st)
	return m.WriteText(w)
}

// WriteTextPage writes the report of st as text with what p adds: its
// title, status and facts first, then the loss, the tables, p's sections
// and p's checks.
func WriteTextPage(w io.Writer, st *runstats.RunStats, p Page) error {
	m := p.measures(st)
	return m.writeText(w, p)
}

// WriteText writes m as terminal tables.
func (m *Measures) WriteText(w io.Writer) error { return m.writeText(w, Page{}) }

func (m *Measures) writeText(w io.Writer, p Page) error {
	ew := &errWriter{w: w}
	if p.Title != "" {
		ew.printf("%s\n", p.Title)
	}
	if p.Status != "" {
		ew.printf("status: %s", p.Status)
		if p.StatusDetail != "" {
			ew.printf(": %s", p.StatusDetail)
		}
		ew.printf("\n")
	}
	for _, f := range p.Facts {
		ew.printf("%s\n", f)
	}
	if p.Title != "" || p.Status != "" || len(p.Facts) > 0 {
		ew.printf("\n")
	}
	ew.writeLoss(&m.Loss)
	ew.printf("\n")
	r := &m.Run
	descent := ""
	if r.Descent != "" && r.Descent != "none" {
		descent = ", descend " + r.Descent // opt-in: changes the hashes
	}
	ew.printf("run: source %s, hash %s, steer %s, consumer %s%s, %v\n",
		cmp.Or(r.Source, "?"), cmp.Or(r.Hash, "?"), cmp.Or(r.Steer, "?"), cmp.Or(r.Consumer, "?"), descent, time.Duration(r.DurationNs).Round(time.Millisecond))
	flows := "n/a (the consumer counts none)"
	if m.Flows > 0 {
		flows = strconv.Itoa(m.Flows)
	}
	ew.printf("flows: %s; received %d, processed %d, unserved %d, dropped %d after receive%s; %d dropped by the kernel before it\n\n",
		flows, m.Received, m.Processed, m.Unserved, sumDrops(m.Drops, false), map[bool]string{true: "", false: " (accounting does not balance)"}[m.Balanced],
		sumDrops(m.Drops, true))
	m.writeSearchText(ew)

	ew.printf("receive queues\n")
	tw := ew.table()
	cellf(tw, "queue\tpackets\tbytes\tshare\t\n")
	shares := fairness.Shares(m.Queues.Bytes)
	for i := range m.Queues.Packets {
		cellf(tw, "%d\t%d\t%d\t%.1f%%\t\n", i, m.Queues.Packets[i], m.Queues.Bytes[i], 100*shares[i])
	}
	ew.flush(tw)
	ew.spread(&m.Queues)

	ew.printf("\nworkers\n")
	tw = ew.table()
	cellf(tw, "worker\tpackets\tbytes\tshare\tflows\tdrops\tmax backlog\t\n")
	shares = fairness.Shares(m.Workers.Bytes)
	for i, c := range m.Consumers {
		cellf(tw, "%d\t%d\t%d\t%.1f%%\t%d\t%d\t%d\t\n", c.Worker, m.Workers.Packets[i], m.Workers.Bytes[i], 100*shares[i],
			c.Flows, sum(c.Drops), c.MaxBacklog)
	}
	ew.flush(tw)
	ew.spread(&m.Workers)
	if m.Flows > 0 {
		ew.printf("  flows per worker: Jain %.4f (expected %.4f), max/mean %.3f (expected %.3f)\n",
			m.WorkerFlows.Jain, m.WorkerFlows.ExpectedJain, m.WorkerFlows.MaxMean, m.WorkerFlows.ExpectedMaxMean)
	}

	ew.printf("\nflows inside each worker's consumer (%s)\n", cmp.Or(r.Consumer, "?"))
	tw = ew.table()
	cellf(tw, "worker\tflows\tslots used\treachable\tcollisions\texpected\tJain\tmax share\tfair share\tdrops\tCE\tsojourn p50\tp99\tmax\t\n")
	for _, c := range m.Consumers {
		cellf(tw, "%d\t%d\t%d/%d\t%d\t%d\t%.1f\t%.4f\t%.2f%%\t%.2f%%\t%s\t%d\t%s\t%s\t%s\t\n",
			c.Worker, c.Flows, c.Buckets, c.Slots, c.ReachableSlots, c.Collisions, c.ExpectedCollisions, c.Jain, 100*c.MaxShare, 100*c.FairShare,
			dropList(c.Drops, "consumer/"), c.CEMarks,
			sojourn(c.SojournNs, "p50"), sojourn(c.SojournNs, "p99"), sojourn(c.SojournNs, "max"))
	}
	ew.flush(tw)

	for _, c := range m.Consumers {
		if len(c.Top) == 0 {
			continue
		}
		ew.printf("\ntop flows of worker %d\n", c.Worker)
		tw = ew.table()
		cellf(tw, "bytes\tshare\t±bytes\tpackets\tproto\tsource\tdestination\thash\t\n")
		for _, f := range c.Top {
			share := 0.0
			if c.Bytes > 0 {
				share = float64(f.Bytes) / float64(c.Bytes)
			}
			cellf(tw, "%d\t%.2f%%\t%d\t%d\t%s\t%s\t%s\t%08x\t\n", f.Bytes, 100*share, f.ErrorBytes, f.Packets, protoName(f.Proto),
				hostPort(f.Src, f.SPort), hostPort(f.Dst, f.DPort), f.Hash)
		}
		ew.flush(tw)
		ew.printf("(±bytes: how much the heavy-hitter sketch may overstate a flow's bytes)\n")
	}

	m.writeSteeringText(ew)
	for _, n := range m.Notes {
		ew.printf("\nnote: %s\n", n)
	}
	for _, sec := range p.Sections {
		ew.printf("\n%s\n", strings.ToLower(sec.Heading))
		if len(sec.Header) > 0 {
			tw = ew.table()
			for _, row := range append([][]string{sec.Header}, sec.Rows...) {
				for _, cell := range row {
					cellf(tw, "%s\t", cell)
				}
				cellf(tw, "\n")
			}
			ew.flush(tw)
		}
		for _, l := range sec.Lines {
			ew.printf("%s\n", l)
		}
	}
	if len(p.Checks) > 0 {
		ew.printf("\nchecks\n")
		for _, c := range p.Checks {
			ew.printf("%s  %s\n", c.Verdict, c.Name)
			for l := range strings.SplitSeq(c.Detail, "\n") {
				ew.printf("      %s\n", l)
			}
		}
	}
	return ew.err
}

// errWriter keeps the first write error, so that the report reads as a list
// of lines.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, escapeArgs(args)...)
	}
}

func (e *errWriter) table() *tabwriter.Writer {
	return tabwriter.NewWriter(e, 0, 0, 2, ' ', tabwriter.AlignRight)
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) flush(tw *tabwriter.Writer) {
	if err := tw.Flush(); err != nil && e.err == nil {
		e.err = err
	}
}

// spread writes a Spread's fairness line and verdict.
// Without flow counts there is no expectation: n/a, not 0.
func (e *errWriter) spread(s *Spread) {
	if s.Flows == 0 {
		e.printf("  Jain %.4f (expected n/a: no flows counted), max/mean %.3f (expected n/a)\n  %s\n", s.Jain, s.MaxMean, s.Verdict)
		return
	}
	e.printf("  Jain %.4f (expected %.4f for %d flows), max/mean %.3f (expected %.3f)\n  %s\n",
		s.Jain, s.ExpectedJain, s.Flows, s.MaxMean, s.ExpectedMaxMean, s.Verdict)
}

// sumDrops adds the drops before the receive loops (kernel/...) or after them.
func sumDrops(m map[string]uint64, kernel bool) uint64 {
	var n uint64
	for reason, v := range m {
		if strings.HasPrefix(reason, "kernel/") == kernel {
			n += v
		}
	}
	return n
}

func sum[K comparable](m map[K]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// dropList is "reason=n,..." of the drops under prefix with n > 0, "-" for none.
func dropList(drops map[string]uint64, prefix string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(drops)) {
		if reason, ok := strings.CutPrefix(k, prefix); ok && drops[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", reason, drops[k]))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// sojourn prints percentile p of a consumer's sojourn times; "-" when the
// consumer does not measure them.
func sojourn(ns map[string]int64, p string) string {
	v, ok := ns[p]
	if !ok {
		return "-"
	}
	return nsString(v)
}

// nsString prints a duration to 3 significant digits ("5.25ms").
func nsString(ns int64) string {
	unit := int64(1)
	for ns/unit >= 1000 {
		unit *= 10
	}
	return time.Duration((ns + unit/2) / unit * unit).String()
}

func hostPort(addr string, port uint16) string {
	if addr == "" {
		return "-"
	}
	if strings.Contains(addr, ":") {
		return fmt.Sprintf("[%s]:%d", addr, port)
	}
	return fmt.Sprintf("%s:%d", addr, port)
}
