package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/runstats"
)

// TestSummaryReplayDrops: the drops of a capture replay before the receive
// loops are the replay's, each reason with its meaning, never the kernel's;
// the measures name them replay/REASON.
func TestSummaryReplayDrops(t *testing.T) {
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion,
		DurationNs:    1e9,
		Config:        runstats.RunConfig{Source: "pcap:trace.pcapng", Hash: "kernel", Steer: "rps", Consumer: "fifo", ServiceRate: "max", Clock: "wall", Workers: 1},
		Queues:        []runstats.QueueReport{{Queue: 0, Stats: runstats.QueueStats{Frames: 4480, ReplayRingFull: 5520}, Steered: []uint64{4480}}},
		Workers:       []runstats.WorkerReport{{Worker: 0, CPU: -1, Packets: 4480}},
	}
	st.Workers[0].Consumer.Enqueued, st.Workers[0].Consumer.Dequeued = 4480, 4480
	st.Account()
	var b bytes.Buffer
	if err := WriteSummary(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "kernel drops before") {
		t.Errorf("a replay's drops are called the kernel's:\n%s", out)
	}
	if want := "capture replay drops before the receive loops: 5520 (ring_full 5520: a receive loop fell behind the paced capture replay"; !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
	m := Compute(st)
	if m.Drops["replay/ring_full"] != 5520 || m.Drops["kernel/rx_ring_full"] != 0 {
		t.Errorf("measures' drops %v, want replay/ring_full 5520 and no kernel drops", m.Drops)
	}
}
