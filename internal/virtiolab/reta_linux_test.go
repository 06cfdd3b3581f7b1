package virtiolab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

// writtenFrame is a frame of `xdphash run --write`: its receive queue and
// its comment.
type writtenFrame struct {
	queue   int
	comment capture.Comment
}

// readWritten reads the frames of a pcapng file from `xdphash run --write`.
func readWritten(t *testing.T, b []byte) []writtenFrame {
	t.Helper()
	r, err := pcapgo.NewNgReader(bytes.NewReader(b), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatalf("the guest's frames: %v", err)
	}
	var out []writtenFrame
	for {
		_, _, opts, err := r.ReadPacketDataWithOptions()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("the guest's frame %d: %v", len(out), err)
		}
		f := writtenFrame{queue: -1}
		if opts.Queue != nil {
			f.queue = int(*opts.Queue)
		}
		ok := false
		for _, text := range opts.Comments {
			if f.comment, ok, err = capture.ParseComment(text); ok && err == nil {
				break
			}
		}
		if !ok || err != nil || f.queue < 0 {
			t.Fatalf("the guest's frame %d: no xdphash comment or queue (%q, %v)", len(out), opts.Comments, err)
		}
		out = append(out, f)
	}
}

// TestRETATableDevice gives the guest's virtio-net device an indirection
// table of its own (each entry the reverse of the default's round robin)
// and runs `xdphash run --steer reta --reta-table device` on it with the
// device's key, one worker per queue: the device must keep the table (the
// queue check: every frame on table[device hash % 128]), every frame
// written must have gone to the worker that table gives for xdphash's hash,
// and a frame whose hash is the device's must have gone to the worker of
// the queue it came in on. Read without the device's table, the steering
// would follow the default round robin, which differs at every entry.
func TestRETATableDevice(t *testing.T) {
	k := requireLab(t, "")
	bin := xdptest.XdphashBinary(t)
	const queues, sent = 4, 8192
	table := make([]uint32, 128)
	for i := range table {
		table[i] = uint32(queues - 1 - i%queues)
	}
	l := bootLab(t, virtiolab.Config{
		Kernel: k, Binary: bin, RXHash: true, Queues: queues, RSS: &guest.RSS{Table: table},
		Steps: []guest.Step{{
			Args: []string{guest.InitPath, "run", "--iface", "eth0", "--queues", "all", "--xdp-mode", "native",
				"--hash", "toeplitz", "--rss-key", "device", "--steer", "reta", "--reta-table", "device",
				"--workers", "4", "--check-device-hash", "--check-device-queue",
				"--write", "/tmp/frames.pcapng", "--write-count", "2048", "--out", "/tmp/run.json", "--stop-on-eof"},
			Ready: "xdp program", ResetRSS: true, StopOnEOF: true, Files: []string{"/tmp/run.json", "/tmp/frames.pcapng"},
			Timeout: 4 * time.Minute,
		}},
	})
	rep, err := pktgen.Run(context.Background(), datacenter(t), pktgen.Config{
		Iface: l.Tap, Enter: l.InNS, Mode: pktgen.ModePacket, Count: sent, Rate: 10000, Mark: steer(t, l),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Stop(rep.Frames); err != nil {
		t.Fatal(err)
	}
	res, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	step := res.Report.Steps[0]
	if step.Exit != 0 || step.Error != "" {
		t.Fatalf("xdphash run in the guest: exit %d %s\n%s", step.Exit, step.Error, step.Stderr)
	}
	checkSteered(t, l, sent, res.Report.Iface)
	if got := res.Report.Iface.RSSTable; !slices.Equal(got, table) {
		t.Fatalf("the device's table after the run's attach: %v, want the one set, %v", got, table)
	}
	var st runstats.RunStats
	if err := json.Unmarshal(res.Files["/tmp/run.json"], &st); err != nil {
		t.Fatalf("the guest's run.json: %v", err)
	}
	if q := st.DeviceQueue; q == nil || q.Checked == 0 || q.Mismatches != 0 {
		t.Fatalf("device queue check %+v: want frames checked, every one on table[device hash %% 128]", q)
	}
	// Every frame the guest's eth0 took is received or counted as dropped.
	a := st.Accounting
	var kernelDrops uint64
	for _, n := range a.KernelDrops {
		kernelDrops += n
	}
	ifc := res.Report.Iface
	guestRx, guestDrops := ifc.After["rx_packets"]-ifc.Before["rx_packets"], ifc.After["rx_dropped"]-ifc.Before["rx_dropped"]
	t.Logf("guest eth0: %d received, %d dropped; xdphash: %d received, kernel drops %v", guestRx, guestDrops, a.Received, a.KernelDrops)
	if a.Received+kernelDrops+guestDrops != guestRx || !a.Balanced {
		t.Errorf("accounting: %d received + %d AF_XDP drops + %d eth0 drops, want eth0's %d; balanced %v", a.Received, kernelDrops, guestDrops, guestRx, a.Balanced)
	}
	frames := readWritten(t, res.Files["/tmp/frames.pcapng"])
	var hashed, asDevice int
	for i, f := range frames {
		c := f.comment
		if c.Hash == 0 {
			continue // no hash: the frame stays on its queue's worker
		}
		hashed++
		if want := int(table[c.Hash%uint32(len(table))]); c.Worker != want {
			t.Errorf("frame %d (queue %d, hash %08x): worker %d, the device's table gives %d", i, f.queue, c.Hash, c.Worker, want)
		}
		if c.HasDeviceHash && c.DeviceHash == c.Hash {
			asDevice++
			if c.Worker != f.queue {
				t.Errorf("frame %d: hash %08x, the device's too, came in on queue %d and went to worker %d", i, c.Hash, f.queue, c.Worker)
			}
		}
	}
	t.Logf("%d sent, %d received; %d frames written, %d hashed, %d with xdphash's hash = the device's; queue check %d checked",
		rep.Frames, st.Accounting.Received, len(frames), hashed, asDevice, st.DeviceQueue.Checked)
	if hashed == 0 || asDevice == 0 {
		t.Errorf("%d frames written, %d hashed, %d hashed as the device did: want some of each", len(frames), hashed, asDevice)
	}
}
