package pktgen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

func TestMain(m *testing.M) { xdptest.Main(m) }

// newLab creates a veth lab whose Host end is ready for generated traffic
// (kernel.PrepareReceiver), and removes it when the test ends.
func newLab(tb testing.TB) *vethlab.Lab {
	tb.Helper()
	return xdptest.NewLab(tb, vethlab.Config{Queues: 2}, kernel.PrepareReceiver)
}

// TestRunModes sends one cycle of the simple profile and half a cycle of
// isp from Peer in each mode with two threads, and checks on Host: the link
// received exactly that many frames; the captured frames are exactly the
// cycle's frames (as a multiset: two threads interleave); their kernel flows
// are the profile's flows.
func TestRunModes(t *testing.T) {
	lab := newLab(t)
	simple := builtinSchedule(t, "simple")
	simple = newScheduleTo(t, simple.Profile(), lab)
	isp, _ := Builtin("isp")
	isp.Cycle, isp.Flows = 8192, 2048
	ispSched := newScheduleTo(t, isp, lab)
	threads := min(2, len(mustAllowedCPUs(t)))
	for _, mode := range []Mode{ModeXDP, ModeAFXDP, ModePacket} {
		for _, tc := range []struct {
			s     *Schedule
			count int
		}{{simple, simple.Len()}, {ispSched, ispSched.Len() / 2}} {
			t.Run(fmt.Sprintf("%s/%s", mode, tc.s.Profile().Name), func(t *testing.T) {
				c, err := kernel.NewCapture(lab.Host)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				before := xdptest.HostRxPackets(t, lab)
				rep, err := Run(context.Background(), tc.s, Config{Iface: lab.Peer, Enter: lab.InPeer, Mode: mode, Threads: threads, Count: uint64(tc.count)})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Frames != uint64(tc.count) {
					t.Errorf("report: %d frames, want %d", rep.Frames, tc.count)
				}
				if rep.Bytes != tc.s.Bytes(0, uint64(tc.count)) {
					t.Errorf("report: %d bytes, want %d", rep.Bytes, tc.s.Bytes(0, uint64(tc.count)))
				}
				if len(rep.Threads) != threads || len(rep.Warnings) > 0 || !rep.LinkValid || rep.LinkTxPackets != uint64(tc.count) {
					t.Errorf("report: %+v", rep)
				}
				got, err := c.Collect(tc.count+1, 300*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				if rx := xdptest.HostRxPackets(t, lab) - before; rx != uint64(tc.count) {
					t.Errorf("Host rx_packets grew by %d, want %d", rx, tc.count)
				}
				if drops, _ := c.Drops(); drops > 0 {
					t.Fatalf("the capture lost %d frames", drops)
				}
				want := tc.s.Frames()
				if tc.count < len(want) {
					// Two threads send positions [0, n/2) and [n/2, n) of
					// the cycle.
					want = want[:tc.count]
				}
				compareMultisets(t, got, want)
				wantFlows := kernelFlows(t, want)
				if n := kernelFlows(t, got); n != wantFlows {
					t.Errorf("received %d kernel flows, want %d", n, wantFlows)
				}
				if tc.s == simple && wantFlows != tc.s.Profile().Flows {
					t.Errorf("simple: %d kernel flows, want the profile's %d", wantFlows, tc.s.Profile().Flows)
				}
			})
		}
	}
}

func mustAllowedCPUs(tb testing.TB) []int {
	tb.Helper()
	cpus, err := kernel.AllowedCPUs()
	if err != nil {
		tb.Fatal(err)
	}
	return cpus
}

// newScheduleTo builds p's schedule addressed to the lab's Host end.
func newScheduleTo(tb testing.TB, p Profile, lab *vethlab.Lab) *Schedule {
	tb.Helper()
	s, err := NewSchedule(p, MACs{Dst: lab.HostMAC})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// compareMultisets checks that got holds exactly the frames of want, each as
// often.
func compareMultisets(tb testing.TB, got, want [][]byte) {
	tb.Helper()
	count := map[string]int{}
	for _, f := range want {
		count[string(f)]++
	}
	for i, f := range got {
		if count[string(f)] == 0 {
			tb.Fatalf("received frame %d (%d bytes) %x... was not sent (or more often than sent)", i, len(f), f[:min(len(f), 48)])
		}
		count[string(f)]--
	}
	missing := 0
	for _, n := range count {
		missing += n
	}
	if missing > 0 || len(got) != len(want) {
		tb.Errorf("received %d frames, want %d: %d sent frames missing", len(got), len(want), missing)
	}
}

// kernelFlows is the number of distinct kernel flow hashes of frames,
// under one fixed key: two counts compare only under the same key, where
// the same flows collide.
func kernelFlows(tb testing.TB, frames [][]byte) int {
	tb.Helper()
	h := hash.NewKernel(hash.Key{0x78, 0x64, 0x70, 0x68, 0x61, 0x73, 0x68})
	seen := map[uint32]bool{}
	for _, f := range frames {
		var keys dissect.FlowKeys
		dissect.DissectFrame(&keys, f, dissect.DefaultFlags)
		v, _ := h.Hash(&keys)
		seen[v] = true
	}
	return len(seen)
}

// TestRunBounds checks the bounds: a count at a rate ends at the count, a
// duration ends by itself, a cancelled context stops the run, and no bound is
// refused. It asserts no timing: only that each run ends and that what Host
// received is what the report says.
func TestRunBounds(t *testing.T) {
	lab := newLab(t)
	s := newScheduleTo(t, builtinSchedule(t, "simple").Profile(), lab)
	run := func(t *testing.T, ctx context.Context, cfg Config) Report {
		t.Helper()
		cfg.Iface, cfg.Enter = lab.Peer, lab.InPeer
		before := xdptest.HostRxPackets(t, lab)
		rep, err := Run(ctx, s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if rx := xdptest.HostRxPackets(t, lab) - before; rx != rep.Frames {
			t.Errorf("Host received %d frames, report says %d", rx, rep.Frames)
		}
		return rep
	}
	for _, mode := range []Mode{ModeXDP, ModeAFXDP, ModePacket} {
		t.Run(string(mode)+"/count at rate", func(t *testing.T) {
			if rep := run(t, context.Background(), Config{Mode: mode, Count: 3000, Rate: 50000}); rep.Frames != 3000 {
				t.Errorf("sent %d frames, want 3000", rep.Frames)
			}
		})
		t.Run(string(mode)+"/duration", func(t *testing.T) {
			if rep := run(t, context.Background(), Config{Mode: mode, Duration: 150 * time.Millisecond, Rate: 20000}); rep.Frames == 0 {
				t.Error("sent nothing")
			}
		})
		t.Run(string(mode)+"/cancelled", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			// A count that would take minutes: the context ends the run.
			run(t, ctx, Config{Mode: mode, Count: 1 << 40, Threads: 1})
		})
	}
	if _, err := Run(context.Background(), s, Config{Iface: lab.Peer, Enter: lab.InPeer}); !errors.Is(err, ErrUnbounded) {
		t.Errorf("no bound: %v, want ErrUnbounded", err)
	}
}

// TestRunMarkNeedsPacketMode: only mode packet sends a frame with a mark
// (Config.Mark); the other modes refuse one rather than drop it silently.
func TestRunMarkNeedsPacketMode(t *testing.T) {
	s := builtinSchedule(t, "simple")
	for _, mode := range []Mode{ModeXDP, ModeAFXDP, ModeKernel} {
		_, err := Run(context.Background(), s, Config{Iface: "xh-none", Mode: mode, Count: 1, Mark: func([]byte) uint32 { return 1 }})
		if err == nil || !strings.Contains(err.Error(), "marks are for mode packet") {
			t.Errorf("mode %s with marks: %v, want a refusal that names mode packet", mode, err)
		}
	}
}

// TestRunKernelPktgen runs mode kernel: where the kernel has no pktgen
// (this one: CONFIG_NET_PKTGEN is not set, no modules) it must say so.
func TestRunKernelPktgen(t *testing.T) {
	lab := newLab(t)
	s := newScheduleTo(t, builtinSchedule(t, "simple").Profile(), lab)
	var present bool
	_ = lab.InPeer(func() error {
		_, err := os.Stat(pktgenDir)
		present = err == nil
		return nil
	})
	rep, err := Run(context.Background(), s, Config{Iface: lab.Peer, Enter: lab.InPeer, Mode: ModeKernel, Count: 1000})
	if !present {
		if !errors.Is(err, ErrModeUnavailable) || !strings.Contains(err.Error(), "/proc/net/pktgen does not exist") {
			t.Fatalf("without pktgen: %v, want ErrModeUnavailable naming /proc/net/pktgen", err)
		}
		t.Logf("as expected: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Frames != 1000 {
		t.Errorf("kernel pktgen sent %d frames, want 1000", rep.Frames)
	}
}

// TestReceiverMAC finds the Host end's MAC from Peer.
func TestReceiverMAC(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1, Named: true}) // ReceiverMAC takes a name
	mac, err := ReceiverMAC(lab.Peer, lab.NSName, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mac.String() != lab.HostMAC.String() {
		t.Errorf("ReceiverMAC = %s, want %s", mac, lab.HostMAC)
	}
	if _, err := ReceiverMAC("lo", "", nil); err == nil {
		t.Error("ReceiverMAC(lo) found a receiver")
	}
}
