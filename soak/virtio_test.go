package soak

import (
	"testing"

	"github.com/xdphash/xdphash/runstats"
)

// The guest's eth0 counts a frame XDP could not hand to AF_XDP in its own
// rx_dropped as well as in XDP_STATISTICS: the check counts it once.
func TestCheckVirtioAccounting(t *testing.T) {
	st := func(received, ringFull, leftOnRing uint64) *runstats.RunStats {
		return &runstats.RunStats{
			Queues:     []runstats.QueueReport{{Stats: runstats.QueueStats{RxRingFull: ringFull, RxLeftOnRing: leftOnRing}}},
			Accounting: runstats.Accounting{Received: received, Processed: received, Balanced: true},
		}
	}
	for _, tt := range []struct {
		name string
		sent uint64
		l    LinkDeltas
		st   *runstats.RunStats
		want bool
	}{
		{"nothing dropped", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100}, st(100, 0, 0), true},
		{"AF_XDP drops, also in eth0 rx_dropped", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100, HostRxDropped: 7}, st(93, 7, 0), true},
		{"AF_XDP drops and the driver's own", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100, HostRxDropped: 9}, st(91, 7, 0), true},
		{"frames left on the rings at the stop", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100, HostRxDropped: 7}, st(90, 7, 3), true},
		{"AF_XDP drops counted twice", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100, HostRxDropped: 7}, st(86, 7, 0), false},
		{"AF_XDP drops eth0 did not count", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100, HostRxDropped: 3}, st(97, 7, 0), false},
		{"frames missing in the guest", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100}, st(98, 0, 0), false},
		{"frames missing between tap and guest", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 99}, st(99, 0, 0), false},
		{"no statistics", 100, LinkDeltas{PeerTxPackets: 100, HostRxPackets: 100}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if c := checkVirtioAccounting(tt.sent, tt.l, tt.st); c.Pass != tt.want {
				t.Errorf("pass %v, want %v:\n%s", c.Pass, tt.want, c.Detail)
			}
		})
	}
}
