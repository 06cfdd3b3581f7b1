package pipeline

import (
	"errors"
	"slices"
	"strings"
	"testing"

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
