package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/runstats"
)

// WriteSummary writes the tables `xdphash run` and `xdphash soak` print at
// the end of a run: the loss (WriteLoss), the run's setup, per receive
// queue, per worker, the dissector's shapes (WriteShapes), and the
// accounting with its drops by reason.
func WriteSummary(w io.Writer, st *runstats.RunStats) error { return WriteSummaryWith(w, st, nil) }

// WriteSummaryWith is WriteSummary with the loss of the frames up says were
// sent, where the caller knows them (a soak's generator).
func WriteSummaryWith(w io.Writer, st *runstats.RunStats, up *Upstream) error {
	ew := &errWriter{w: w}
	l := computeLoss(st, up)
	ew.writeLoss(&l)
	ew.printf("\n")
	c := st.Config
	secs := float64(st.DurationNs) / 1e9
	ew.printf("xdphash run %s: %s, %s, hash %s, steer %s, consumer %s, service %s, %s clock, %.3fs\n",
		c.Source, plural(len(st.Queues), "queue"), plural(len(st.Workers), "worker"), c.Hash, c.Steer, c.Consumer, c.ServiceRate, c.Clock, secs)
	// The rates are over the part of the run that had traffic.
	active := float64(activeNs(st)) / 1e9
	mpps := func(n uint64) string {
		if active <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(n)/active/1e6, 'f', 3, 64)
	}
	if active != secs {
		ew.printf("Mpps: over the %.3fs with traffic, not the whole run\n", active)
	}

	tw := ew.table()
	fmt.Fprintln(tw, "queue\tframes\tbytes\tMpps\tkernel drops\tsteered to workers\t")
	for _, q := range st.Queues {
		steered := make([]string, len(q.Steered))
		for i, n := range q.Steered {
			steered[i] = "w" + strconv.Itoa(i) + ":" + strconv.FormatUint(n, 10)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%s\t\n", q.Queue, q.Stats.Frames, q.Stats.Bytes, mpps(q.Stats.Frames), q.Stats.KernelDrops(), strings.Join(steered, " "))
	}
	ew.flush(tw)

	ew.printf("\n")
	tw = ew.table()
	fmt.Fprintln(tw, "worker\tcpu\ttaken\tserved\tMpps\tring full\tflow limit\tconsumer drops\tbacklog\t")
	for _, wr := range st.Workers {
		cpu := "-"
		if wr.CPU >= 0 {
			cpu = strconv.Itoa(wr.CPU)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t\n", wr.Worker, cpu, wr.Packets, wr.Consumer.Dequeued, mpps(wr.Consumer.Dequeued),
			wr.Drops[runstats.DropRingFull], wr.Drops[runstats.DropFlowLimit], sum(wr.Consumer.Drops), wr.Consumer.Backlog)
	}
	ew.flush(tw)

	ew.printf("\n")
	if ew.err == nil {
		ew.err = WriteShapes(ew.w, Shapes{Counters: st.Shapes})
	}

	a := st.Accounting
	ew.printf("\n")
	balanced := "balanced"
	if !a.Balanced {
		balanced = "NOT BALANCED"
	}
	if a.Unserved > 0 {
		ew.printf("received %d = processed %d + unserved %d (held by consumers at the end) + dropped %d (%s)\n", a.Received, a.Processed, a.Unserved, a.Total(), balanced)
	} else {
		ew.printf("received %d = processed %d + dropped %d (%s)\n", a.Received, a.Processed, a.Total(), balanced)
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(a.Dropped)) {
		if a.Dropped[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, a.Dropped[r]))
		}
	}
	if len(parts) > 0 {
		ew.printf("drops: %s\n", strings.Join(parts, ", "))
	}
	if kd := sum(a.KernelDrops); kd > 0 {
		var reasons []string
		for _, r := range slices.Sorted(maps.Keys(a.KernelDrops)) {
			if a.KernelDrops[r] > 0 {
				reasons = append(reasons, fmt.Sprintf("%s %d", r, a.KernelDrops[r]))
			}
		}
		ew.printf("kernel drops before the receive loops: %d (%s)\n", kd, strings.Join(reasons, ", "))
	}
	if rd := sum(a.ReplayDrops); rd > 0 {
		var reasons []string
		for _, r := range slices.Sorted(maps.Keys(a.ReplayDrops)) {
			if a.ReplayDrops[r] > 0 {
				reasons = append(reasons, fmt.Sprintf("%s %d: %s", r, a.ReplayDrops[r], DropMeaning("replay/"+r)))
			}
		}
		ew.printf("capture replay drops before the receive loops: %d (%s)\n", rd, strings.Join(reasons, "; "))
	}
	return ew.err
}

// plural is "1 queue", "2 queues".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Shapes is what WriteShapes prints: the dissector's counters, with the gates
// and auto mode's view of them where the caller knows them (one Dissector's;
// a run's receive loops each have their own).
type Shapes struct {
	Counters dissect.Counters
	// Gates, when set, adds whether each shape's gate is open.
	Gates *dissect.Gates
	// Auto, when set, adds auto mode's share, break-even share and flips of
	// each gate.
	Auto *[dissect.NumShapes]dissect.GateState
}

// WriteShapes writes the dissector counters as one table, a row per shape
// and one for the frames of no shape, and the totals.
func WriteShapes(w io.Writer, s Shapes) error {
	ew := &errWriter{w: w}
	tw := ew.table()
	fmt.Fprint(tw, "shape\t")
	if s.Gates != nil {
		fmt.Fprint(tw, "gate\t")
	}
	fmt.Fprint(tw, "fast\tdeclined\tslow\t")
	if s.Auto != nil {
		fmt.Fprint(tw, "auto p\tp_be\tflips\t")
	}
	fmt.Fprintln(tw)
	c := &s.Counters
	var fast, slow uint64
	for sh := range dissect.NumShapes {
		sc := c.Shape[sh]
		fmt.Fprintf(tw, "%s\t", sh)
		if s.Gates != nil {
			gate := "closed"
			if s.Gates.Has(sh) {
				gate = "open"
			}
			fmt.Fprintf(tw, "%s\t", gate)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t", sc.Fast, sc.Declined, sc.Slow)
		if s.Auto != nil {
			a := s.Auto[sh]
			fmt.Fprintf(tw, "%.3f\t%.3f\t%d\t", a.Share, a.BreakEven, a.Flips)
		}
		fmt.Fprintln(tw)
		fast += sc.Fast
		slow += sc.Slow
	}
	fmt.Fprint(tw, "other\t")
	if s.Gates != nil {
		fmt.Fprint(tw, "-\t")
	}
	fmt.Fprintf(tw, "-\t-\t%d\t\n", c.Other)
	ew.flush(tw)
	ew.printf("total: %d fast, %d slow-path runs, %d gate flips\n", fast, slow+c.Other, c.Flips)
	if c.Descended != (dissect.TunnelCounts{}) {
		ew.printf("descended into UDP tunnels (opt-in):")
		for t, n := range c.Descended {
			ew.printf(" %v %d", dissect.Tunnel(t), n)
		}
		ew.printf("\n")
	}
	return ew.err
}

// autoHashReason says, once, why --hash auto computed own of the hashes: it
// takes the device's hash only where it covers the ports (an L4 hash, which
// skb_get_hash returns without dissecting).
func autoHashReason(device, own uint64) string {
	if device == 0 {
		return "hash auto: no frame came with a device hash over the ports (L4), the only kind auto takes as skb_get_hash does, so every hash was computed here"
	}
	return fmt.Sprintf("hash auto: %d frames came without a device hash over the ports (L4), the only kind auto takes as skb_get_hash does, and were hashed here", own)
}

// WriteDeviceSummary writes the frames per hash source and the device-hash
// check, when the run had either.
func WriteDeviceSummary(w io.Writer, st *runstats.RunStats) error {
	ew := &errWriter{w: w}
	s := st.HashSources
	if s.Device+s.None > 0 || st.Config.Hash == "auto" || st.Config.Hash == "device" {
		ew.printf("hash sources: device %d, kernel %d, toeplitz %d, none %d\n", s.Device, s.Kernel, s.Toeplitz, s.None)
	}
	if own := s.Kernel + s.Toeplitz; st.Config.Hash == "auto" && own > 0 {
		ew.printf("%s\n", autoHashReason(s.Device, own))
	}
	if p := st.Config.XDPProgram; p != "" {
		ew.printf("xdp program: %s\n", p)
	}
	if q := st.DeviceQueue; q != nil {
		ew.printf("device queue check: %d frames, %d with a device hash, %d on another queue than table[hash %% %d]\n", q.Frames, q.Checked, q.Mismatches, q.TableLen)
		for _, x := range q.Samples {
			ew.printf("  frame with device hash %08x (%s) on queue %d, table gives %d\n", x.DeviceHash, x.DeviceType, x.Queue, x.Want)
		}
	}
	c := st.DeviceHash
	if c == nil {
		return ew.err
	}
	ew.printf("device hash check (%s): %d frames, %d with a device hash, %d checked, %d conflicts\n",
		c.Method, c.Frames, c.WithHash, c.Checked, c.Conflicts)
	if c.Collisions > 0 {
		ew.printf("  %d frames of flows that share a 32-bit hash with another flow by chance (collisions, not conflicts)\n", c.Collisions)
	}
	for _, k := range c.Classes {
		ew.printf("  %d conflicts: %s: %s\n", k.Frames, k.Class, k.Explain)
	}
	for _, x := range c.Samples {
		ew.printf("  conflict on queue %d: device hash %08x (%s), ours %08x, vlan tag %q, keys %s\n", x.Queue, x.DeviceHash, x.DeviceType, x.Hash, x.VLANTag, x.Keys)
		if x.Other != nil {
			ew.printf("    earlier frame: device hash %08x (%s), ours %08x, vlan tag %q, keys %s\n", x.Other.DeviceHash, x.Other.DeviceType, x.Other.Hash, x.Other.VLANTag, x.Other.Keys)
		}
		ew.printf("    frame %s\n", x.Frame)
	}
	return ew.err
}

// WriteSteeringSummary writes what a RETA run's table did: the balance
// against the bound, the rebalancing, the table that would have balanced the
// run (as an ethtool line for iface, "IF" when empty), and, with a static
// comparison (runstats.Comparison), both runs side by side. It writes
// nothing for a run without a table.
func WriteSteeringSummary(w io.Writer, st *runstats.RunStats, iface string) error {
	sr := st.Steering
	if sr == nil {
		return nil
	}
	ew := &errWriter{w: w}
	b := sr.Balance
	ew.printf("steering: RETA of %d buckets, worker max/mean %.3f, bound %.3f (%.1f%% above it)\n",
		sr.RETASize, b.MaxMean, b.Bound, 100*(b.MaxMean/b.Bound-1))
	run := steeringRun("rebalanced", st)
	if rr := sr.Rebalance; rr != nil {
		ew.printf("rebalance every %s: %d buckets moved in %d tables over %d loaded intervals (%.2f%% of the buckets per second), %d flows in flight moved\n",
			time.Duration(rr.IntervalNs), rr.Moves, rr.Tables, len(rr.Intervals), 100*run.MovesPerSec, rr.FlowsMoved)
	}
	if run.Hold != "" {
		ew.printf("hold: %s\n", run.Hold)
	}
	ro := sr.Reorder
	ew.printf("reordered: %d of %d packets served (exact: %t)\n", ro.Reordered, ro.Served, ro.Exact)
	ew.printf("balanced table for the whole run: max/mean %.3f, %d buckets moved from the final table\n", b.BalancedMaxMean, b.BalancedMoves)
	if iface == "" {
		iface = "IF"
	}
	if line := EthtoolWeights(b.Table, len(st.Workers), iface); line != "" {
		ew.printf("  %s\n", line)
	} else {
		ew.printf("  not expressible as an ethtool -X line (neither the round robin nor one contiguous run per worker); the run JSON lists it (steering.balance.balanced_table)\n")
	}
	if line, mm := WeightsLine(st, iface); line != "" {
		ew.printf("the best ethtool weights can do: %s (max/mean %.3f)\n", line, mm)
	}
	if sr.Compare == nil || sr.Compare.Static == nil || sr.Compare.Static.Steering == nil {
		return ew.err
	}
	tw := ew.table()
	fmt.Fprintln(tw, "run\tmax/mean\tdrops\tdrops per worker\tp50 µs\tp95 µs\tp99 µs\tbuckets moved/s\treordered\t")
	for _, r := range []SteeringRun{steeringRun("static", sr.Compare.Static), run} {
		var drops uint64
		perWorker := make([]string, len(r.Drops))
		for i, n := range r.Drops {
			drops += n
			perWorker[i] = strconv.FormatUint(n, 10)
		}
		var p [3]int64
		for _, sj := range r.SojournNs {
			for j, q := range []string{"p50", "p95", "p99"} {
				p[j] = max(p[j], sj[q])
			}
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%d\t%s\t%.1f\t%.1f\t%.1f\t%.2f%%\t%d\t\n", r.Name, r.MaxMean, drops,
			strings.Join(perWorker, " "), float64(p[0])/1e3, float64(p[1])/1e3, float64(p[2])/1e3, 100*r.MovesPerSec, r.Reordered)
	}
	ew.flush(tw)
	ew.printf("(sojourn: the busiest worker's percentile)\n")
	return ew.err
}
