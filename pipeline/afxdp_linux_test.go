package pipeline

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
)

// TestOpenPlannedAFXDP opens a three-queue veth's host end as `run --iface`
// and the soak do: every queue when none is named, a plan that knows the
// kernel's receive CPUs only when told (a veth has no IRQ), and the source
// in the plan's receive mode.
func TestOpenPlannedAFXDP(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 3})
	allowed, err := kernel.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("all queues, IRQs read", func(t *testing.T) {
		a, err := OpenPlannedAFXDP(AFXDPSourceConfig{AFXDP: source.AFXDPConfig{Iface: lab.Host, NoMetadata: true}, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Source.Close()
		if !slices.Equal(a.Queues, []int{0, 1, 2}) || len(a.Source.Queues()) != 3 {
			t.Errorf("queues %v, %d opened; want 0-2, 3 opened", a.Queues, len(a.Source.Queues()))
		}
		if len(a.IRQCPUs) != 0 || a.PlacementErr != nil {
			t.Errorf("a veth: IRQ CPUs %v, placement error %v; want none and none", a.IRQCPUs, a.PlacementErr)
		}
		if a.Plan.PlaceCPUs != nil || !strings.Contains(a.Plan.String(), "unknown") {
			t.Errorf("plan %q places %v: want no placement, the kernel's CPUs unknown", a.Plan, a.Plan.PlaceCPUs)
		}
		if got := a.Source.Info().RxMode; got != a.Plan.RxMode || (got != source.RxSpin && got != source.RxPoll) {
			t.Errorf("source receives in mode %q, plan says %q", got, a.Plan.RxMode)
		}
	})

	t.Run("kernel CPUs given, mode asked", func(t *testing.T) {
		if len(allowed) < 2 {
			xdptest.Unavailable(t, "placement needs 2 allowed CPUs, this process has %v", allowed)
		}
		a, err := OpenPlannedAFXDP(AFXDPSourceConfig{
			AFXDP:   source.AFXDPConfig{Iface: lab.Host, Queues: []int{1}, NoMetadata: true, RxMode: source.RxPoll},
			Workers: 1, WorkerCPUs: []int{allowed[1]}, KernelCPUs: allowed[:1],
		})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Source.Close()
		if !slices.Equal(a.Queues, []int{1}) || len(a.Source.Queues()) != 1 || a.Source.Queues()[0].Queue() != 1 {
			t.Errorf("queues %v: want queue 1 alone", a.Queues)
		}
		if !slices.Equal(a.Plan.PlaceCPUs, allowed[1:]) || !slices.Equal(a.Plan.WorkerCPUs, allowed[1:2]) {
			t.Errorf("plan places on %v, workers on %v; want %v and %v", a.Plan.PlaceCPUs, a.Plan.WorkerCPUs, allowed[1:], allowed[1:2])
		}
		if a.Plan.RxMode != source.RxPoll || a.Source.Info().RxMode != source.RxPoll {
			t.Errorf("rx mode %q (source %q), want poll as asked", a.Plan.RxMode, a.Source.Info().RxMode)
		}
	})

	t.Run("no interface", func(t *testing.T) {
		a, err := OpenPlannedAFXDP(AFXDPSourceConfig{AFXDP: source.AFXDPConfig{Iface: lab.Host + "x"}, Workers: 1})
		if !errors.Is(err, source.ErrNoInterface) || a != nil {
			t.Errorf("OpenPlannedAFXDP of a missing interface = %v, %v; want ErrNoInterface", a, err)
		}
	})
}

// TestRunStopTakesTheRings delivers frames to the AF_XDP rings of a run
// that is stopped before it takes any (its context is done when it starts,
// as after a SIGINT that came while the kernel delivered): the run takes
// what the rings hold before its loops end, so that every frame delivered is
// received, and the accounting balances.
func TestRunStopTakesTheRings(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	src, err := source.OpenAFXDP(source.AFXDPConfig{Iface: lab.Host, Mode: source.XDPNative, RxMode: source.RxPoll, Batch: 8, NoMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var frames [][]byte
	for len(frames) < 600 {
		frames = append(frames, spreadFrames()...)
	}
	frames = frames[:600]
	before := xdptest.HostRxPackets(t, lab)
	xdptest.Send(t, lab, frames)
	// The host end counts a frame once its XDP program ran: the frame is
	// then on a ring. Nothing signals it, so the counter is polled, for 5 s
	// at most.
	for deadline := time.Now().Add(5 * time.Second); xdptest.HostRxPackets(t, lab)-before < uint64(len(frames)); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%s received %d of %d frames after 5 s", lab.Host, xdptest.HostRxPackets(t, lab)-before, len(frames))
		}
	}
	e, err := NewEngine(EngineConfig{
		Source:   src,
		Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		Flags:    dissect.DefaultFlags,
		Gates:    dissect.AllGates,
		RingSize: 1024,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st, err := e.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := st.Accounting
	var kernelDrops uint64
	for _, d := range a.KernelDrops {
		kernelDrops += d
	}
	if a.Received != uint64(len(frames)) || kernelDrops != 0 || !a.Balanced {
		t.Errorf("received %d, dropped before the loops %v; want all %d received, none dropped, balanced (%+v)", a.Received, a.KernelDrops, len(frames), a)
	}
	if got := xdptest.XDPAttached(t, lab.Host); got != "" {
		t.Errorf("XDP program %q still attached after Run", got)
	}
}
