package metrics_test

import (
	"context"
	"testing"

	"github.com/xdphash/xdphash/metrics"
	"github.com/xdphash/xdphash/runstats"
)

// TestReplayDrops: a capture replay's drops before the receive loops are
// the replay's (stage replay, by queue, no interface), and a replay has no
// kernel series: no kernel is involved.
func TestReplayDrops(t *testing.T) {
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion,
		Config:        runstats.RunConfig{Source: "pcap:trace.pcapng"},
		Queues: []runstats.QueueReport{
			{Queue: 0, Stats: runstats.QueueStats{Frames: 30, ReplayRingFull: 7, Unreceived: 2}},
			{Queue: 1, Stats: runstats.QueueStats{Frames: 10}},
		},
		Workers: []runstats.WorkerReport{{Worker: 0, Packets: 40}},
	}
	st.Account()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := metrics.Serve(ctx, "127.0.0.1:0", func() *runstats.RunStats { return st })
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, addr)
	got := map[string]float64{}
	for _, m := range fams["xdphash_drops_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["stage"] == "kernel" {
			t.Errorf("a replay has a kernel series: %v", l)
		}
		if l["stage"] == "replay" {
			if l["interface"] != "" {
				t.Errorf("a replay's series has an interface: %v", l)
			}
			got[l["reason"]+"/"+l["queue"]] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{"ring_full/0": 7, "unreceived/0": 2, "ring_full/1": 0, "unreceived/1": 0}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("xdphash_drops_total{stage=replay, reason/queue %s} = %v (found %v), want %v", k, g, ok, v)
		}
	}
}
