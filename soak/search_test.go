package soak

import (
	"maps"
	"testing"

	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

// TestTrialLoss checks a trial's loss and its drops by stage: every frame
// sent that no consumer served or holds is lost, each counted drop under
// its stage, the rest unaccounted; a veth's host rx_dropped and the virtio
// guest NIC's (which repeat the AF_XDP drops) do not count them twice.
func TestTrialLoss(t *testing.T) {
	res := &Result{
		Generator: pktgen.Report{Frames: 10000},
		Links:     LinkDeltas{PeerTxDropped: 100, HostRxDropped: 400},
		Stats: &runstats.RunStats{Accounting: runstats.Accounting{
			Received: 9600, Processed: 9000, Unserved: 50,
			Dropped:     map[runstats.DropReason]uint64{runstats.DropRingFull: 500, runstats.DropCodel: 0},
			KernelDrops: map[string]uint64{"rx_ring_full": 200, "rx_dropped": 100, "rx_invalid_descs": 0},
		}},
	}
	if got := lost(res); got != 950 {
		t.Errorf("lost %d, want 10000 - 9000 served - 50 held = 950", got)
	}
	want := map[string]uint64{"veth/tx_dropped": 100, "kernel/rx_ring_full": 200, "kernel/rx_dropped": 100, "ring/full": 500, "unaccounted": 50}
	if got := stageDrops(res, LabVeth); !maps.Equal(got, want) {
		t.Errorf("veth drops %v, want %v", got, want)
	}
	// 400 dropped by the guest's NIC, 300 of them AF_XDP's.
	want = map[string]uint64{"guest/rx_dropped": 100, "kernel/rx_ring_full": 200, "kernel/rx_dropped": 100, "ring/full": 500, "unaccounted": 50}
	if got := stageDrops(res, LabVirtio); !maps.Equal(got, want) {
		t.Errorf("virtio drops %v, want %v", got, want)
	}
	res.Stats = nil
	if got := lost(res); got != 10000 {
		t.Errorf("without statistics lost %d, want all 10000", got)
	}
}
