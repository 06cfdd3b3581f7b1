package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunPcapRecordedLosesNothing: run --pcap --replay recorded on the wall
// clock, over two RSS queues, receives every frame of a 10,000-frame file
// of 10 ms: where the receive loops fall behind the pace, the replay waits
// for them, as tcpreplay resends every packet, and no drop is named the
// kernel's. --replay-drops asks for the drops, named the replay's.
func TestRunPcapRecordedLosesNothing(t *testing.T) {
	const n = 10000
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.WriterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bases := corpus.Bases()
	t0 := time.Unix(1700000000, 0)
	for i := range n {
		if err := w.Write(&capture.Frame{Data: bases[i%len(bases)].Data, Time: t0.Add(time.Duration(i) * time.Microsecond)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	in := tempFile(t, "recorded.pcapng", buf.Bytes())
	out := filepath.Join(t.TempDir(), "run.json")
	stdout, stderr, code := runXdphash(t, nil, "run", "--pcap", in, "--replay", "recorded", "--virtual-queues", "2", "--out", out)
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	a := st.Accounting
	var before uint64
	for _, q := range st.Queues {
		before += q.Stats.LostBeforeLoop()
	}
	if a.Received != n || before != 0 || !a.Balanced {
		t.Errorf("received %d of %d frames, %d lost before the receive loops (kernel %v, replay %v): want all received", a.Received, n, before, a.KernelDrops, a.ReplayDrops)
	}
	if strings.Contains(stdout, "kernel drops before") {
		t.Errorf("a replay's summary names the kernel's drops:\n%s", stdout)
	}

	for _, bad := range [][]string{
		{"run", "--synthetic", "datacenter", "--count", "10", "--replay-drops"},
		{"run", "--pcap", in, "--virtual-clock", "--replay-drops"},
	} {
		if _, stderr, code := runXdphash(t, nil, bad...); code != exitFailure || !strings.Contains(stderr, "--replay-drops is for --pcap") {
			t.Errorf("%v: exit %d, stderr %s; want a usage error", bad, code, stderr)
		}
	}
}
