package kernel_test

import (
	"testing"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestDriverStats reads a veth's own counters: veth reports its peer's
// ifindex among them, and its per-queue XDP counters.
func TestDriverStats(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	st, err := kernel.DriverStats(lab.Host)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := st["peer_ifindex"]; !ok || got != uint64(lab.PeerIndex) {
		t.Errorf("peer_ifindex %d (%v), want %d; stats %v", got, ok, lab.PeerIndex, st)
	}
	if _, ok := st["rx_queue_1_xdp_packets"]; !ok {
		t.Errorf("no rx_queue_1_xdp_packets in %v", st)
	}
}
