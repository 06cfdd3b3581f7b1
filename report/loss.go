package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/xdphash/xdphash/runstats"
)

// Loss is where the frames offered to a run were lost, each count also as a
// share of what was offered: what a report states first.
type Loss struct {
	// Offered is the frames the run was offered: the sender's count when
	// the command that made the run knows it (OfferedBy "sent": a soak's
	// generator), else the frames the receive loops took plus the kernel's
	// drops before them (OfferedBy "seen"), or a capture replay's
	// (OfferedBy "replayed").
	Offered   uint64  `json:"offered"`
	OfferedBy string  `json:"offered_by"`
	Lost      uint64  `json:"lost"`
	Share     float64 `json:"share"` // Lost / Offered
	// Unserved are the frames held in a consumer at the end: not lost,
	// never served.
	Unserved uint64 `json:"unserved"`
	// FillRingEmpty is the times the kernel found an AF_XDP fill ring
	// empty: not a count of frames (in copy mode each such frame is among
	// rx_dropped).
	FillRingEmpty uint64 `json:"fill_ring_empty"`
	// Unaccounted is Offered less what was processed, unserved and lost: 0
	// when every frame is counted somewhere (frames still in flight when a
	// run stopped, or counters that do not balance, make it non-zero).
	Unaccounted int64 `json:"unaccounted"`
	// Stages are the losses by stage, in the order a frame passes them:
	// the sending side where the command counts it, "kernel", "worker
	// rings", "consumers".
	Stages []LossStage `json:"stages"`
	// Queues are the kernel's losses on each receive queue; Workers the
	// losses after the receive loops, on each worker.
	Queues  []QueueLoss  `json:"queues"`
	Workers []WorkerLoss `json:"workers"`
}

// LossStage is one stage's losses.
type LossStage struct {
	Stage   string       `json:"stage"`
	Frames  uint64       `json:"frames"`
	Share   float64      `json:"share"` // of Loss.Offered
	Reasons []LossReason `json:"reasons"`
}

// LossReason is the frames lost for one reason, its share of what was
// offered (to the run, queue or worker it is listed under) and what the
// reason means (DropMeaning).
type LossReason struct {
	Reason  string  `json:"reason"`
	Frames  uint64  `json:"frames"`
	Share   float64 `json:"share"`
	Meaning string  `json:"meaning"`
}

// QueueLoss is the losses of the frames of one receive queue: the kernel's
// before its receive loop, and the worker rings' its loop counted (where
// the run says, runstats.QueueReport.Drops). Offered is what its loop took
// plus the kernel's losses.
type QueueLoss struct {
	Queue   int          `json:"queue"`
	Offered uint64       `json:"offered"`
	Lost    uint64       `json:"lost"`
	Share   float64      `json:"share"`
	Stages  []LossStage  `json:"stages"` // kernel, and worker rings where known
	Reasons []LossReason `json:"reasons"`
}

// WorkerLoss is the losses of the frames steered to one worker: Offered is
// what it took off its rings plus the rings' drops.
type WorkerLoss struct {
	Worker  int          `json:"worker"`
	Offered uint64       `json:"offered"`
	Lost    uint64       `json:"lost"`
	Share   float64      `json:"share"`
	Reasons []LossReason `json:"reasons"`
}

// Upstream is what the command that made a run counted before the run saw
// its frames: how many were sent, and the drops on the way by
// "stage/reason" (a soak's "veth/tx_dropped").
type Upstream struct {
	Sent  uint64
	Drops map[string]uint64
}

// share is n/of, 0 when of is 0.
func share(n, of uint64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// reasons lists drops (by reason) as shares of offered, the largest first,
// leaving out those of no frames.
func reasons(drops map[string]uint64, offered uint64) ([]LossReason, uint64) {
	var out []LossReason
	var total uint64
	for _, r := range slices.Sorted(maps.Keys(drops)) {
		if n := drops[r]; n > 0 {
			out = append(out, LossReason{Reason: r, Frames: n, Share: share(n, offered), Meaning: DropMeaning(r)})
			total += n
		}
	}
	slices.SortStableFunc(out, func(a, b LossReason) int {
		switch {
		case a.Frames > b.Frames:
			return -1
		case a.Frames < b.Frames:
			return 1
		}
		return 0
	})
	return out, total
}

// computeLoss works out the losses of st, with up where the command that
// made the run knows what was sent (nil: what the receive queues saw).
func computeLoss(st *runstats.RunStats, up *Upstream) Loss {
	a := st.Accounting
	all := map[string]uint64{}
	for r, n := range a.Dropped {
		all[string(r)] += n
	}
	for r, n := range a.KernelDrops {
		all["kernel/"+r] += n
	}
	for r, n := range a.ReplayDrops {
		if n > 0 { // a stage only a replay has: named where it lost frames
			all["replay/"+r] += n
		}
	}
	l := Loss{OfferedBy: "seen", Unserved: a.Unserved}
	if strings.HasPrefix(st.Config.Source, "pcap:") {
		l.OfferedBy = "replayed"
	}
	var seen uint64
	for _, q := range st.Queues {
		seen += q.Stats.Frames + q.Stats.LostBeforeLoop()
		l.FillRingEmpty += q.Stats.FillRingEmpty
	}
	l.Offered = seen
	if up != nil {
		l.Offered, l.OfferedBy = up.Sent, "sent"
		for r, n := range up.Drops {
			all[r] += n
		}
	}
	byStage := map[string]map[string]uint64{}
	for r, n := range all {
		s := stageOf(r)
		if byStage[s] == nil {
			byStage[s] = map[string]uint64{}
		}
		byStage[s][r] += n
	}
	var order []string
	for _, s := range slices.Sorted(maps.Keys(byStage)) {
		if !isLossStage(s) {
			order = append(order, s)
		}
	}
	for _, s := range lossStages {
		order = append(order, s.name)
	}
	for _, s := range order {
		rs, n := reasons(byStage[s], l.Offered)
		l.Stages = append(l.Stages, LossStage{Stage: s, Frames: n, Share: share(n, l.Offered), Reasons: rs})
		l.Lost += n
	}
	l.Share = share(l.Lost, l.Offered)
	l.Unaccounted = int64(l.Offered) - int64(a.Processed+a.Unserved+l.Lost)

	for _, q := range st.Queues {
		s := q.Stats
		offered := s.Frames + s.LostBeforeLoop()
		ql := QueueLoss{Queue: q.Queue, Offered: offered}
		if rd := s.ReplayDrops(); rd > 0 {
			rs, n := reasons(map[string]uint64{"replay/ring_full": s.ReplayRingFull, "replay/unreceived": s.Unreceived}, offered)
			ql.Stages = append(ql.Stages, LossStage{Stage: "replay", Frames: n, Share: share(n, offered), Reasons: rs})
		}
		kd := map[string]uint64{"kernel/rx_dropped": s.RxDropped, "kernel/rx_invalid_descs": s.RxInvalidDescs,
			"kernel/rx_ring_full": s.RxRingFull, "kernel/rx_left_on_ring": s.RxLeftOnRing}
		rs, n := reasons(kd, offered)
		ql.Stages = append(ql.Stages, LossStage{Stage: "kernel", Frames: n, Share: share(n, offered), Reasons: rs})
		if q.Drops != nil {
			rd := map[string]uint64{}
			for r, n := range q.Drops {
				rd[string(r)] += n
			}
			rs, n := reasons(rd, offered)
			ql.Stages = append(ql.Stages, LossStage{Stage: "worker rings", Frames: n, Share: share(n, offered), Reasons: rs})
		}
		for _, st := range ql.Stages {
			ql.Lost += st.Frames
			ql.Reasons = append(ql.Reasons, st.Reasons...)
		}
		ql.Share = share(ql.Lost, offered)
		l.Queues = append(l.Queues, ql)
	}
	for _, w := range st.Workers {
		d := map[string]uint64{}
		var ring uint64
		for r, n := range w.Drops {
			d[string(r)] += n
			ring += n
		}
		for r, n := range w.Consumer.Drops {
			d[string(r)] += n
		}
		offered := w.Packets + ring
		rs, n := reasons(d, offered)
		l.Workers = append(l.Workers, WorkerLoss{Worker: w.Worker, Offered: offered, Lost: n, Share: share(n, offered), Reasons: rs})
	}
	return l
}

// pctText is a share as a percentage with two decimals, "<0.01%" for a
// share too small to show but not none.
func pctText(v float64) string {
	if v > 0 && v < 0.00005 {
		return "<0.01%"
	}
	return strconv.FormatFloat(100*v, 'f', 2, 64) + "%"
}

// grouped is n with its digits in groups of three: "12,345,678".
func grouped(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// reasonList is "rx_ring_full 40.00%, rx_dropped 12.00%": each reason
// without the stage's own prefix where it has one.
func reasonList(rs []LossReason, stage string) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		name := r.Reason
		if p, rest, ok := strings.Cut(name, "/"); ok && stageOf(name) == stage && p == stage {
			name = rest
		}
		parts[i] = name + " " + pctText(r.Share)
	}
	return strings.Join(parts, ", ")
}

// Headline is the loss summary's first sentence: "53.10% of sent frames
// lost (12,345 of 23,250): kernel 52.00% (rx_ring_full 40.00%, ...),
// worker rings 1.10% (ring/full 1.10%), consumers 0.00%".
func (l *Loss) Headline() string {
	what := "sent frames"
	switch l.OfferedBy {
	case "seen":
		what = "the frames the receive queues saw (received + the kernel's drops)"
	case "replayed":
		what = "the frames the capture replay offered (received + the replay's drops)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s lost (%s of %s)%s", pctText(l.Share), what, grouped(l.Lost), grouped(l.Offered), stageList(l.Stages))
	if l.Unserved > 0 {
		fmt.Fprintf(&b, "; %s unserved (%s frames held in a consumer at the end)", pctText(share(l.Unserved, l.Offered)), grouped(l.Unserved))
	}
	if l.Unaccounted != 0 {
		fmt.Fprintf(&b, "; %d frames unaccounted for (in flight when the run stopped, or counters that do not balance)", l.Unaccounted)
	}
	return b.String()
}

// Line is one receive queue's losses in words.
func (q *QueueLoss) Line() string {
	s := fmt.Sprintf("queue %d: %s of %s frames lost", q.Queue, pctText(q.Share), grouped(q.Offered))
	return s + stageList(q.Stages)
}

// stageList is ": kernel 1.00% (rx_ring_full 1.00%), worker rings 0.00%".
func stageList(stages []LossStage) string {
	var b strings.Builder
	for i, s := range stages {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s %s", sep, s.Stage, pctText(s.Share))
		if len(s.Reasons) > 0 {
			fmt.Fprintf(&b, " (%s)", reasonList(s.Reasons, s.Stage))
		}
	}
	return b.String()
}

// Line is one worker's losses in words.
func (w *WorkerLoss) Line() string {
	s := fmt.Sprintf("worker %d: %s of %s frames steered to it lost", w.Worker, pctText(w.Share), grouped(w.Offered))
	if len(w.Reasons) > 0 {
		s += " (" + reasonList(w.Reasons, "") + ")"
	}
	return s
}

// ReasonRows are every reason of l with frames, stage by stage, and the
// unserved: the rows of the loss table.
func (l *Loss) ReasonRows() []LossReason {
	var rows []LossReason
	for _, s := range l.Stages {
		rows = append(rows, s.Reasons...)
	}
	if l.Unserved > 0 {
		rows = append(rows, LossReason{Reason: "unserved", Frames: l.Unserved, Share: share(l.Unserved, l.Offered), Meaning: DropMeaning("unserved")})
	}
	return rows
}

// writeLoss writes l as the text report's first lines.
func (e *errWriter) writeLoss(l *Loss) {
	e.printf("loss: %s\n", l.Headline())
	if len(l.Queues) > 1 || len(l.Queues) == 1 && l.Queues[0].Lost > 0 {
		for _, q := range l.Queues {
			e.printf("  %s\n", q.Line())
		}
	}
	for _, w := range l.Workers {
		if w.Lost > 0 || len(l.Workers) > 1 {
			e.printf("  %s\n", w.Line())
		}
	}
	rows := l.ReasonRows()
	if len(rows) > 0 {
		tw := e.table()
		cellf(tw, "stage/reason\tframes\tshare\t  meaning\n")
		for _, r := range rows {
			cellf(tw, "%s\t%s\t%s\t  %s\n", r.Reason, grouped(r.Frames), pctText(r.Share), r.Meaning)
		}
		e.flush(tw)
	}
	if l.FillRingEmpty > 0 {
		e.printf("  %s\n", l.FillRingNote())
	}
}

// FillRingNote says how often the kernel found a fill ring empty, and what
// that means; "" when it never did.
func (l *Loss) FillRingNote() string {
	if l.FillRingEmpty == 0 {
		return ""
	}
	return fmt.Sprintf("kernel/fill_ring_empty: %s times, %s", grouped(l.FillRingEmpty), DropMeaning("kernel/fill_ring_empty"))
}

// WriteLoss writes the loss summary of st (Loss.Headline, then each queue
// and worker, then each reason with its meaning), with up where the caller
// knows what was sent (nil: what the receive queues saw).
func WriteLoss(w io.Writer, st *runstats.RunStats, up *Upstream) error {
	ew := &errWriter{w: w}
	l := computeLoss(st, up)
	ew.writeLoss(&l)
	return ew.err
}
