package pipeline

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// closeCounted is a source whose Close is counted.
type closeCounted struct {
	source.Source
	closed int
}

func (c *closeCounted) Close() error { c.closed++; return c.Source.Close() }

// TestRunStatic runs the static half of a comparison of the elephants
// profile rebalanced every 10 ms: it is the run of the same configuration
// with the table left alone, to the last counter, on a source of its own
// that it closes; AttachStatic puts it beside the rebalanced run.
func TestRunStatic(t *testing.T) {
	frames := profileFrames(t, "elephants")
	const count, pps, workers = 100000, 1e6, 4
	var opened []*closeCounted
	open := func() (source.Source, error) {
		src, err := source.NewSynthetic(frames, source.SyntheticConfig{Count: count, Replay: source.Replay{Mode: source.ReplayRate, PPS: pps}})
		if err != nil {
			return nil, err
		}
		c := &closeCounted{Source: src}
		opened = append(opened, c)
		return c, nil
	}
	config := func(rb RebalanceConfig) EngineConfig {
		return EngineConfig{
			Steering: hash.SteerConfig{Workers: workers, Key: testKey, Steer: hash.SteerRETA},
			Flags:    dissect.DefaultFlags, Gates: dissect.AllGates,
			Consumer: "fq", ServiceRate: queues.Rate{PacketsPerSec: pps / workers / 0.85}, RingSize: 256,
			Virtual: true, Window: 10 * time.Millisecond, Rebalance: rb,
		}
	}
	rebalanced := config(RebalanceConfig{Interval: 10 * time.Millisecond, Hold: true})
	static, err := RunStatic(context.Background(), rebalanced, open)
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 1 || opened[0].closed != 1 {
		t.Fatalf("%d sources opened, closed %v times; want one, closed once", len(opened), opened)
	}
	checkAccounting(t, static, count)
	if static.Steering == nil || static.Steering.Rebalance != nil {
		t.Fatalf("static run steering %+v: want a table report without rebalancing", static.Steering)
	}

	src, err := open()
	if err != nil {
		t.Fatal(err)
	}
	direct := config(RebalanceConfig{})
	direct.Source = src
	want := runEngine(t, direct)
	src.Close()
	for _, st := range []*runstats.RunStats{static, want} {
		st.Started, st.Host, st.Config.CPUPlan = time.Time{}, runstats.Host{}, ""
	}
	if !reflect.DeepEqual(static, want) {
		t.Errorf("RunStatic differs from the run with a static table:\n%+v\n%+v", static.Steering, want.Steering)
	}

	src, err = open()
	if err != nil {
		t.Fatal(err)
	}
	rebalanced.Source = src
	st := runEngine(t, rebalanced)
	src.Close()
	AttachStatic(st, static)
	if st.Steering.Compare == nil || st.Steering.Compare.Static != static {
		t.Errorf("AttachStatic: comparison %+v", st.Steering.Compare)
	}
	rps := &runstats.RunStats{}
	AttachStatic(rps, static)
	if rps.Steering != nil {
		t.Errorf("AttachStatic gave an RPS run a steering report")
	}
}

// TestRunStaticErrors reports a source that does not open, and a
// configuration the engine refuses after closing the source it opened.
func TestRunStaticErrors(t *testing.T) {
	bad := errors.New("no such capture")
	if _, err := RunStatic(context.Background(), EngineConfig{Steering: hash.SteerConfig{Workers: 1}},
		func() (source.Source, error) { return nil, bad }); !errors.Is(err, bad) {
		t.Errorf("open failing: %v, want its error", err)
	}
	var c *closeCounted
	_, err := RunStatic(context.Background(), EngineConfig{Steering: hash.SteerConfig{Workers: MaxWorkers + 1}}, func() (source.Source, error) {
		src, err := source.NewSynthetic(profileFrames(t, "elephants"), source.SyntheticConfig{Count: 10})
		c = &closeCounted{Source: src}
		return c, err
	})
	var le *LimitError
	if !errors.As(err, &le) || le.Field != "Steering.Workers" || c.closed != 1 {
		t.Errorf("too many workers: %v (closed %d times), want a LimitError on Steering.Workers and the source closed", err, c.closed)
	}
}
