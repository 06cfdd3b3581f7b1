package report

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/runstats"
)

// summaryRun is a two-queue, two-worker run of 2 s with every kind of
// counter set by hand.
func summaryRun() *runstats.RunStats {
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion,
		DurationNs:    2e9,
		Config: runstats.RunConfig{Source: "synthetic:test", Hash: "kernel", Steer: "rps", Consumer: "fq",
			ServiceRate: "max", Clock: "virtual", Workers: 2},
		Queues: []runstats.QueueReport{{Queue: 0, Steered: []uint64{2e6, 1e6}}, {Queue: 3, Steered: []uint64{0, 2000}}},
		Workers: []runstats.WorkerReport{
			{Worker: 0, CPU: 2, Packets: 1999995, Drops: map[runstats.DropReason]uint64{runstats.DropRingFull: 5, runstats.DropFlowLimit: 0}},
			{Worker: 1, CPU: -1, Packets: 1001993, Drops: map[runstats.DropReason]uint64{runstats.DropRingFull: 0, runstats.DropFlowLimit: 7}},
		},
	}
	st.Queues[0].Stats.Frames, st.Queues[0].Stats.Bytes, st.Queues[0].Stats.RxRingFull = 3e6, 180e6, 11
	st.Queues[1].Stats.Frames, st.Queues[1].Stats.Bytes = 2000, 128000
	st.Workers[0].Consumer.Enqueued, st.Workers[0].Consumer.Dequeued = 1999995, 1999992
	st.Workers[0].Consumer.Drops = map[runstats.DropReason]uint64{runstats.DropOverlimit: 3}
	st.Workers[1].Consumer.Enqueued, st.Workers[1].Consumer.Dequeued, st.Workers[1].Consumer.Backlog = 1001993, 1001990, 3
	st.Shapes.Shape[dissect.ShapeEthIP] = dissect.ShapeCounters{Fast: 2e6, Declined: 4, Slow: 4}
	st.Shapes.Shape[dissect.ShapeGRE] = dissect.ShapeCounters{Slow: 9}
	st.Shapes.Other, st.Shapes.Flips = 1001987, 2
	st.Account()
	return st
}

// row is the fields of the first line of text that starts with the fields
// of prefix, nil when none does.
func row(text, prefix string) []string {
	want := strings.Fields(prefix)
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(want) && slices.Equal(f[:len(want)], want) {
			return f
		}
	}
	return nil
}

func TestWriteSummary(t *testing.T) {
	st := summaryRun()
	var b bytes.Buffer
	if err := WriteSummary(&b, st); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"xdphash run", strings.Fields("xdphash run synthetic:test: 2 queues, 2 workers, hash kernel, steer rps, consumer fq, service max, virtual clock, 2.000s")},
		{"queue frames", strings.Fields("queue frames bytes Mpps kernel drops steered to workers")},
		{"0 3000000", strings.Fields("0 3000000 180000000 1.500 11 w0:2000000 w1:1000000")},
		{"3 2000", strings.Fields("3 2000 128000 0.001 0 w0:0 w1:2000")},
		{"worker cpu", strings.Fields("worker cpu taken served Mpps ring full flow limit consumer drops backlog")},
		{"0 2", strings.Fields("0 2 1999995 1999992 1.000 5 0 3 0")},
		{"1 -", strings.Fields("1 - 1001993 1001990 0.501 0 7 0 3")},
		{"eth_ip", strings.Fields("eth_ip 2000000 4 4")},
		{"gre", strings.Fields("gre 0 0 9")},
		{"other", strings.Fields("other - - 1001987")},
		{"total:", strings.Fields("total: 2000000 fast, 1002000 slow-path runs, 2 gate flips")},
		{"drops:", strings.Fields("drops: consumer/overlimit 3, ring/full 5, worker/flow_limit 7")},
		{"kernel drops", strings.Fields("kernel drops before the receive loops: 11 (rx_ring_full 11)")},
	} {
		if got := row(text, c.prefix); !slices.Equal(got, c.want) {
			t.Errorf("line %q: got %q, want %q", c.prefix, got, c.want)
		}
	}
	if !strings.HasPrefix(text, "loss: <0.01% of the frames the receive queues saw (received + the kernel's drops) lost (26 of 3,002,011): kernel <0.01% (rx_ring_full <0.01%)") {
		t.Errorf("the summary does not lead with the loss:\n%s", text)
	}
	a := st.Accounting
	if !a.Balanced {
		t.Fatalf("the hand-made run does not balance: %+v", a)
	}
	if got, want := row(text, "received"), strings.Fields("received 3002000 = processed 3001982 + unserved 3 (held by consumers at the end) + dropped 15 (balanced)"); !slices.Equal(got, want) {
		t.Errorf("accounting line %q, want %q", got, want)
	}
	// One table of shapes: its header once, and no gate column for a run.
	if n := strings.Count(text, "shape "); n != 1 || row(text, "shape gate") != nil {
		t.Errorf("%d shape tables, or a gate column, in\n%s", n, text)
	}

	st.Accounting.Balanced = false
	b.Reset()
	if err := WriteSummary(&b, st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(NOT BALANCED)") {
		t.Errorf("an unbalanced run does not say so:\n%s", b.String())
	}
}

// TestWriteSummaryActiveRate: the Mpps columns are over the windows that
// had traffic, and the summary says so; "1 queue, 1 worker".
func TestWriteSummaryActiveRate(t *testing.T) {
	st := summaryRun()
	st.Queues, st.Workers = st.Queues[:1], st.Workers[:1]
	st.Queues[0].Steered = st.Queues[0].Steered[:1]
	// A 25 s run whose traffic lasted the 8 windows of 1 s from 3 s.
	st.DurationNs, st.Config.WindowNs = 25e9, 1e9
	for i := range 25 {
		w := runstats.WindowReport{StartNs: int64(i) * 1e9, QueuePackets: []uint64{0}}
		if i >= 3 && i < 11 {
			w.QueuePackets[0] = 375000
		}
		st.Windows = append(st.Windows, w)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, st); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if got, want := row(text, "0 3000000"), strings.Fields("0 3000000 180000000 0.375 11 w0:2000000"); !slices.Equal(got, want) {
		t.Errorf("queue row %q, want %q (3 M frames over 8 s)", got, want)
	}
	if !strings.Contains(text, "Mpps: over the 8.000s with traffic, not the whole run") {
		t.Errorf("the summary does not say what the rate is over:\n%s", text)
	}
	if !strings.Contains(text, ": 1 queue, 1 worker,") {
		t.Errorf("no singular queue and worker:\n%s", text)
	}
}

func TestWriteShapesOfADissector(t *testing.T) {
	gates := dissect.AllGates &^ (1 << dissect.ShapeMPLS)
	var auto [dissect.NumShapes]dissect.GateState
	auto[dissect.ShapeVLAN] = dissect.GateState{Open: true, Share: 0.5, BreakEven: 0.25, Flips: 3}
	s := Shapes{Gates: &gates, Auto: &auto}
	s.Counters.Shape[dissect.ShapeVLAN] = dissect.ShapeCounters{Fast: 10, Declined: 1, Slow: 1}
	s.Counters.Other = 4
	var b bytes.Buffer
	if err := WriteShapes(&b, s); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, c := range []struct{ prefix, want string }{
		{"shape", "shape gate fast declined slow auto p p_be flips"},
		{"vlan", "vlan open 10 1 1 0.500 0.250 3"},
		{"mpls", "mpls closed 0 0 0 0.000 0.000 0"},
		{"other", "other - - - 4"},
		{"total:", "total: 10 fast, 5 slow-path runs, 0 gate flips"},
	} {
		if got := row(text, c.prefix); !slices.Equal(got, strings.Fields(c.want)) {
			t.Errorf("line %q: got %q, want %q", c.prefix, got, c.want)
		}
	}
}

func TestWriteSteeringSummary(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSteeringSummary(&b, summaryRun(), ""); err != nil || b.Len() != 0 {
		t.Errorf("an RPS run: %q, %v; want nothing", b.String(), err)
	}
	st := retaRun(t, true)
	st.Steering.Compare = &runstats.Comparison{Static: retaRun(t, false)}
	if err := WriteSteeringSummary(&b, st, "eth7"); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"steering: RETA of 4 buckets, worker max/mean 1.250, bound 1.100 (13.6% above it)\n",
		// 1 bucket of 4 over 0.2 s.
		"rebalance every 100ms: 1 buckets moved in 1 tables over 2 loaded intervals (125.00% of the buckets per second), 0 flows in flight moved\n",
		"hold: the hold kept 4 packets",
		"reordered: 7 of 0 packets served (exact: true)\n",
		"  ethtool -X eth7 weight 1 1\n",
		"(sojourn: the busiest worker's percentile)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	static, rebalanced := row(text, "static"), row(text, "rebalanced")
	if len(static) < 2 || static[1] != "1.250" || len(rebalanced) < 9 || rebalanced[len(rebalanced)-2] != "125.00%" || rebalanced[len(rebalanced)-1] != "7" {
		t.Errorf("comparison rows %q and %q", static, rebalanced)
	}
}

func TestWriteDeviceSummary(t *testing.T) {
	st := summaryRun()
	var b bytes.Buffer
	if err := WriteDeviceSummary(&b, st); err != nil || b.Len() != 0 {
		t.Errorf("a run without device hashes: %q, %v; want nothing", b.String(), err)
	}
	st.Config.Hash, st.Config.XDPProgram = "auto", "xdphash_meta"
	st.HashSources = runstats.HashSources{Device: 5, Kernel: 2}
	st.DeviceHash = &runstats.DeviceHashCheck{Method: "equality", Frames: 7, WithHash: 5, Checked: 5, Conflicts: 1,
		Samples: []runstats.DeviceHashConflict{{Queue: 1, Frame: "00", DeviceHashFrame: runstats.DeviceHashFrame{DeviceHash: 0xabc, Hash: 0xdef, Keys: "k"}}}}
	if err := WriteDeviceSummary(&b, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"hash sources: device 5, kernel 2, toeplitz 0, none 0\n",
		"xdp program: xdphash_meta\n",
		"device hash check (equality): 7 frames, 5 with a device hash, 5 checked, 1 conflicts\n",
		"  conflict on queue 1: device hash 00000abc",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

var errWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestSummariesReportWriteErrors(t *testing.T) {
	st := retaRun(t, true)
	for name, err := range map[string]error{
		"summary":  WriteSummary(failWriter{}, st),
		"shapes":   WriteShapes(failWriter{}, Shapes{}),
		"steering": WriteSteeringSummary(failWriter{}, st, ""),
	} {
		if !errors.Is(err, errWrite) {
			t.Errorf("%s: %v, want the writer's error", name, err)
		}
	}
}

// TestWriteDeviceSummaryAutoReason: --hash auto that hashed frames itself
// says why, once.
func TestWriteDeviceSummaryAutoReason(t *testing.T) {
	st := &runstats.RunStats{Config: runstats.RunConfig{Hash: "auto"}, HashSources: runstats.HashSources{Kernel: 8874524}}
	var b bytes.Buffer
	if err := WriteDeviceSummary(&b, st); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.Contains(text, "hash sources: device 0, kernel 8874524") || strings.Count(text, "no frame came with a device hash over the ports (L4)") != 1 {
		t.Errorf("no reason, or not once, why the device hash was not used:\n%s", text)
	}
	st.HashSources.Device = 100
	b.Reset()
	_ = WriteDeviceSummary(&b, st)
	if !strings.Contains(b.String(), "hash auto: 8874524 frames came without a device hash over the ports (L4)") {
		t.Errorf("a partly device-hashed run:\n%s", b.String())
	}
	st.Config.Hash, st.HashSources = "kernel", runstats.HashSources{Kernel: 5}
	b.Reset()
	_ = WriteDeviceSummary(&b, st)
	if strings.Contains(b.String(), "hash auto") {
		t.Errorf("--hash kernel explains auto:\n%s", b.String())
	}
}
