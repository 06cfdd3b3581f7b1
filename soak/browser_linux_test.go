package soak

import (
	"image"
	"image/color"
	"path/filepath"
	"testing"
	"time"

	"gonum.org/v1/plot/plotutil"

	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

// shotResult is a 2-second soak over two queues and two workers, in
// windows of 100 ms: the generator sent 1,000,000 frames, the kernel
// dropped 400,000 of them on queue 0 (40% of all), the worker rings 50,000
// (5%); queue 0 takes 400 frames a window more than queue 1, worker 1 a
// rising share.
func shotResult() *Result {
	const windows, window = 20, 100 * time.Millisecond
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion, DurationNs: int64(windows * window),
		Config: runstats.RunConfig{Source: "afxdp:test", Hash: "kernel", Steer: "rps", Consumer: "fq_codel", Workers: 2, WindowNs: int64(window)},
		Queues: []runstats.QueueReport{{Queue: 0, Steered: make([]uint64, 2)}, {Queue: 1, Steered: make([]uint64, 2)}},
		Workers: []runstats.WorkerReport{
			{Worker: 0, CPU: -1, Drops: map[runstats.DropReason]uint64{runstats.DropRingFull: 0, runstats.DropFlowLimit: 0}},
			{Worker: 1, CPU: -1, Drops: map[runstats.DropReason]uint64{runstats.DropRingFull: 50_000, runstats.DropFlowLimit: 0}},
		},
	}
	// Per window: queue 0 receives 15,200 frames and its kernel drops
	// 20,000; queue 1 receives 14,800; worker 1 loses 2,500 at its ring.
	for k := range windows {
		w := runstats.WindowReport{
			StartNs:      int64(k) * int64(window),
			QueuePackets: []uint64{15_200, 14_800}, QueueBytes: []uint64{15_200 * 64, 14_800 * 64},
			QueueKernelDrops: []uint64{20_000, 0},
			WorkerDrops:      []uint64{0, 2_500},
		}
		w1 := uint64(10_000 + 500*k)
		w.WorkerPackets = []uint64{30_000 - 2_500 - w1, w1}
		w.WorkerBytes = []uint64{64 * w.WorkerPackets[0], 64 * w.WorkerPackets[1]}
		w.WorkerBacklog = []int{0, 0}
		st.Windows = append(st.Windows, w)
		for q := range 2 {
			st.Queues[q].Stats.Frames += w.QueuePackets[q]
			st.Queues[q].Stats.Bytes += w.QueueBytes[q]
			st.Queues[q].Stats.RxRingFull += w.QueueKernelDrops[q]
		}
		for i := range 2 {
			st.Workers[i].Packets += w.WorkerPackets[i]
			st.Workers[i].Bytes += w.WorkerBytes[i]
			st.Queues[i].Steered[i] += w.WorkerPackets[i]
		}
	}
	for i := range st.Workers {
		c := &st.Workers[i].Consumer
		c.Enqueued, c.Dequeued = st.Workers[i].Packets, st.Workers[i].Packets
	}
	st.Account()
	return &Result{
		Stats: st, Lab: LabVeth, Duration: 2 * time.Second,
		Generator: pktgen.Report{Mode: pktgen.ModeXDP, Profile: "datacenter", Iface: "peer0", Frames: 1_000_000, Bytes: 64_000_000, Elapsed: 2 * time.Second},
		Links:     LinkDeltas{PeerTxPackets: 1_000_000, HostRxPackets: 1_000_000, HostRxDropped: 400_000},
		Checks:    []Check{{Name: "accounting", Pass: true, Detail: "ok"}},
	}
}

// TestReportScreenshot opens the soak's report.html in headless Chromium and
// checks what a reader sees: the page opens with the loss summary, whose
// bar shows the kernel's 40% and the rings' 5% of the frames sent in their
// colours at their widths; and the throughput chart, scrolled to, draws a
// line per receive queue.
func TestReportScreenshot(t *testing.T) {
	dir := t.TempDir()
	r := shotResult()
	if r.Stats.Accounting.Received+400_000 != r.Generator.Frames || !r.Stats.Accounting.Balanced {
		t.Fatalf("the test's soak does not add up: %+v", r.Stats.Accounting)
	}
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, FileReportHTML)

	// The loss bar: stage colours of report's CSS (div.stage1 kernel,
	// div.stage2 worker rings, after the veth's stage0), green arrived.
	top := xdptest.Screenshot(t, page, "", 1200, 800)
	kernel, rings, arrived := color.RGBA{0xff, 0x88, 0x00, 0xff}, color.RGBA{0xaa, 0x33, 0xcc, 0xff}, color.RGBA{0x66, 0xcc, 0x66, 0xff}
	y, widths := widestRow(top, kernel, rings, arrived)
	if y < 0 {
		t.Fatal("the top of the page shows no loss bar")
	}
	bar := widths[0] + widths[1] + widths[2]
	t.Logf("loss bar at y %d: kernel %d, rings %d, arrived %d pixels", y, widths[0], widths[1], widths[2])
	if got := float64(widths[0]) / float64(bar); got < 0.38 || got > 0.42 {
		t.Errorf("the kernel's part of the loss bar is %.3f of it, want 0.40", got)
	}
	if got := float64(widths[1]) / float64(bar); got < 0.04 || got > 0.06 {
		t.Errorf("the rings' part of the loss bar is %.3f of it, want 0.05", got)
	}

	// The throughput chart: a line per queue in the first two line
	// colours, in the window scrolled to its heading.
	chart := xdptest.Screenshot(t, page, "#throughput-queues", 1200, 450)
	for q := range 2 {
		c := color.RGBAModel.Convert(plotutil.Color(q)).(color.RGBA)
		n := count(chart, c)
		t.Logf("queue %d's line: %d pixels", q, n)
		if n < 600 { // a line across most of the 875-pixel plot
			t.Errorf("queue %d's line (colour %v): %d pixels, want a line across the chart", q, c, n)
		}
	}
}

// widestRow finds the row of img with the most pixels of the colours cs,
// and how many of each it has; -1 when none has any.
func widestRow(img image.Image, cs ...color.RGBA) (int, []int) {
	best, bestN, bestW := -1, 0, []int(nil)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		w := make([]int, len(cs))
		n := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			for i, c := range cs {
				if near(img.At(x, y), c) {
					w[i]++
					n++
				}
			}
		}
		if n > bestN {
			best, bestN, bestW = y, n, w
		}
	}
	return best, bestW
}

// count is the pixels of img near c.
func count(img image.Image, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if near(img.At(x, y), c) {
				n++
			}
		}
	}
	return n
}

func near(p color.Color, c color.RGBA) bool {
	r, g, b, _ := p.RGBA()
	d := func(a uint32, b uint8) bool { a >>= 8; return a+8 >= uint32(b) && a <= uint32(b)+8 }
	return d(r, c.R) && d(g, c.G) && d(b, c.B)
}
