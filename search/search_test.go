package search

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// fakeSUT is a system under test with a known ceiling behind a generator
// with known limits, on a fake clock: a trial at rate r sends min(r, paced)
// frames per second (max when unpaced) and the system loses what exceeds
// ceiling.
type fakeSUT struct {
	ceiling  float64 // frames per second the system takes without loss
	max      float64 // the generator's unpaced maximum
	paced    float64 // the highest rate it sustains paced; 0: max
	overhead time.Duration
	clock    time.Duration
	rates    []float64
	// cancelAt, when > 0, cancels the search during that trial (1-based).
	cancelAt int
	cancel   context.CancelFunc
}

func (f *fakeSUT) now() time.Duration { return f.clock }

func (f *fakeSUT) Trial(_ context.Context, rate float64, d time.Duration) (Measurement, error) {
	f.rates = append(f.rates, rate)
	f.clock += d + f.overhead
	if len(f.rates) == f.cancelAt {
		f.cancel()
	}
	sent := f.max
	if rate > 0 {
		sent = min(rate, cmpOr(f.paced, f.max))
	}
	frames := sent * d.Seconds()
	lost := max(0, frames-f.ceiling*d.Seconds())
	return Measurement{Sent: uint64(frames), Lost: uint64(math.Ceil(lost)), Elapsed: d}, nil
}

func cmpOr(a, b float64) float64 {
	if a != 0 {
		return a
	}
	return b
}

func config(f *fakeSUT, goals ...Goal) Config {
	return Config{Goals: goals, Floor: 1000, Trial: time.Second, Budget: time.Hour, Now: f.now}
}

var ndr, pdr05 = Goal{Name: "NDR"}, pdr(0.005)

// contains checks that b brackets rate: Lower <= rate < Upper.
func contains(t *testing.T, b Bracket, rate float64) {
	t.Helper()
	if b.LowerTrial < 0 || b.UpperTrial < 0 || b.Lower > rate || b.Upper <= rate {
		t.Errorf("%s: bracket [%.0f, %.0f] (trials %d, %d), want it to hold %.0f", b.Goal.Name, b.Lower, b.Upper, b.LowerTrial, b.UpperTrial, rate)
	}
}

func TestSearchFindsTheCeiling(t *testing.T) {
	f := &fakeSUT{ceiling: 50000, max: 1e6}
	res, err := Run(context.Background(), config(f, ndr), f)
	if err != nil {
		t.Fatal(err)
	}
	b := res.Goals[0]
	contains(t, b, f.ceiling)
	if b.Status != StatusFound || b.Width() > DefaultWidth {
		t.Errorf("status %q width %.4f, want %q within %g", b.Status, b.Width(), StatusFound, DefaultWidth)
	}
	if f.rates[0] != 0 || f.rates[1] != 1000 {
		t.Errorf("first trials at %v, want the generator's maximum (0) and then the floor", f.rates[:2])
	}
	if res.Max != 1e6 || len(res.Trials) != len(f.rates) {
		t.Errorf("max %g, %d trials recorded of %d run", res.Max, len(res.Trials), len(f.rates))
	}
}

func TestSearchSeveralLossRatios(t *testing.T) {
	f := &fakeSUT{ceiling: 50000, max: 1e6}
	pdr5 := pdr(0.05)
	res, err := Run(context.Background(), config(f, ndr, pdr05, pdr5), f)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range []Goal{ndr, pdr05, pdr5} {
		// The loss ratio at rate r is 1 - ceiling/r: the goal's rate is
		// ceiling/(1-ratio).
		contains(t, res.Goals[i], f.ceiling/(1-g.LossRatio))
		if res.Goals[i].Status != StatusFound {
			t.Errorf("%s: status %q", g.Name, res.Goals[i].Status)
		}
	}
	// Every trial is judged against every goal: a trial in one bracket
	// narrows the others it falls in.
	alone := &fakeSUT{ceiling: 50000, max: 1e6}
	single, _ := Run(context.Background(), config(alone, pdr5), alone)
	if n := len(res.Trials); n >= 3*len(single.Trials) {
		t.Errorf("3 goals took %d trials, one alone %d: the goals share no trial", n, len(single.Trials))
	}
}

func TestSearchUnsustainedTrialIsNoPass(t *testing.T) {
	// The generator bursts to 1 Mpps unpaced but keeps only 30 kpps
	// paced; the system would take 50 kpps. The search must not report
	// more than the generator sustained.
	f := &fakeSUT{ceiling: 50000, max: 1e6, paced: 30000}
	res, err := Run(context.Background(), config(f, ndr), f)
	if err != nil {
		t.Fatal(err)
	}
	// The highest rate it sustains, within the tolerance.
	contains(t, res.Goals[0], f.paced/(1-DefaultSustain))
	for _, tr := range res.Trials {
		if tr.Rate > f.paced/(1-DefaultSustain) && !tr.Max && (tr.Sustained || tr.Pass[0]) {
			t.Errorf("trial at %.0f (sent %.0f/s) counted as sustained %v, pass %v", tr.Rate, tr.Achieved, tr.Sustained, tr.Pass[0])
		}
	}
}

func TestSearchGeneratorLimit(t *testing.T) {
	f := &fakeSUT{ceiling: 2e6, max: 1e6}
	res, err := Run(context.Background(), config(f, ndr), f)
	if err != nil {
		t.Fatal(err)
	}
	b := res.Goals[0]
	if b.Status != StatusGenerator || b.Lower != f.max || b.UpperTrial != -1 || len(res.Trials) != 1 {
		t.Errorf("got %+v after %d trials, want the generator's maximum as the lower bound after 1 trial", b, len(res.Trials))
	}
}

func TestSearchBelowFloor(t *testing.T) {
	f := &fakeSUT{ceiling: 500, max: 1e6}
	res, err := Run(context.Background(), config(f, ndr), f)
	if err != nil {
		t.Fatal(err)
	}
	b := res.Goals[0]
	if b.Status != StatusBelowFloor || b.Upper != 1000 || b.LowerTrial != -1 {
		t.Errorf("got %+v, want below the floor of 1000 with no lower bound", b)
	}
}

func TestSearchFloorUnreachable(t *testing.T) {
	f := &fakeSUT{ceiling: 50000, max: 800}
	res, err := Run(context.Background(), config(f, ndr), f)
	if !errors.Is(err, ErrFloor) {
		t.Fatalf("err %v, want ErrFloor", err)
	}
	if len(res.Trials) != 1 || res.Max != 800 {
		t.Errorf("%d trials, max %g: want the maximum's trial, 800", len(res.Trials), res.Max)
	}
	// A generator whose burst reaches the floor but which cannot keep it
	// paced says so too.
	f = &fakeSUT{ceiling: 1500, max: 2000, paced: 500}
	if _, err := Run(context.Background(), config(f, ndr), f); !errors.Is(err, ErrFloor) {
		t.Errorf("unsustained floor: err %v, want ErrFloor", err)
	}
}

func TestSearchKeepsTheBudget(t *testing.T) {
	f := &fakeSUT{ceiling: 50000, max: 1e6, overhead: 500 * time.Millisecond}
	cfg := config(f, ndr)
	cfg.Budget = 10 * time.Second
	res, err := Run(context.Background(), cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	if res.Spent > cfg.Budget {
		t.Errorf("spent %s of a %s budget", res.Spent, cfg.Budget)
	}
	// 1.5 s a trial: 6 fit in 10 s (the first trial's overhead is learnt
	// from it).
	if len(res.Trials) != 6 {
		t.Errorf("%d trials in the budget, want 6", len(res.Trials))
	}
	b := res.Goals[0]
	if b.Status != StatusBudget || b.Width() <= DefaultWidth {
		t.Errorf("status %q width %.3f, want %q: the bracket is wider than the goal", b.Status, b.Width(), StatusBudget)
	}
	contains(t, b, f.ceiling)

	cfg.Budget = cfg.Trial
	f = &fakeSUT{ceiling: 50000, max: 1e6}
	cfg.Now = f.now
	if res, err := Run(context.Background(), cfg, f); err != nil || len(res.Trials) != 1 {
		t.Errorf("a budget of one trial: %v, want 1 trial and no error", err)
	}
}

func TestSearchInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeSUT{ceiling: 50000, max: 1e6, cancelAt: 4, cancel: cancel}
	res, err := Run(ctx, config(f, ndr), f)
	if !errors.Is(err, context.Canceled) || !res.Interrupted {
		t.Fatalf("err %v, interrupted %v: want context.Canceled", err, res.Interrupted)
	}
	if len(res.Trials) != 4 || !res.Trials[3].Interrupted || res.Trials[2].Interrupted {
		t.Fatalf("trials %+v, want 4, the last interrupted", res.Trials)
	}
	b := res.Goals[0]
	if b.Status != StatusInterrupted || b.UpperTrial == 3 || b.LowerTrial == 3 {
		t.Errorf("got %+v: an interrupted trial must bound nothing", b)
	}
	contains(t, b, f.ceiling)
}

// noisy fails one trial whatever its rate, then behaves.
type noisy struct {
	fakeSUT
	failAt int
}

func (n *noisy) Trial(ctx context.Context, rate float64, d time.Duration) (Measurement, error) {
	m, err := n.fakeSUT.Trial(ctx, rate, d)
	if len(n.rates) == n.failAt {
		m.Lost = m.Sent / 10
	}
	return m, err
}

func TestSearchTrustsNoPassAboveAFailure(t *testing.T) {
	// The third trial (the first bisection, well below the ceiling)
	// fails by noise: later passes above it must not make it a lower
	// bound, and the bracket stays below the failure.
	n := &noisy{fakeSUT: fakeSUT{ceiling: 500000, max: 1e6}, failAt: 3}
	res, err := Run(context.Background(), config(&n.fakeSUT, ndr), n)
	if err != nil {
		t.Fatal(err)
	}
	b := res.Goals[0]
	failed := res.Trials[2].Rate
	if b.Upper > failed || b.Lower >= failed {
		t.Errorf("bracket [%.0f, %.0f], want it at or below the failed trial's %.0f", b.Lower, b.Upper, failed)
	}
}

func TestParseGoals(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Goal
	}{
		{"ndr", []Goal{ndr}},
		{"pdr", []Goal{pdr05}},
		{"pdr=0.5%,ndr", []Goal{ndr, pdr05}},
		{"NDR, pdr=0.005, pdr=1%", []Goal{ndr, pdr05, {Name: "PDR(1%)", LossRatio: 0.01}}},
		{"ndr,ndr", []Goal{ndr}},
	} {
		got, err := ParseGoals(c.in)
		if err != nil || len(got) != len(c.want) {
			t.Errorf("ParseGoals(%q) = %v, %v, want %v", c.in, got, err, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("ParseGoals(%q)[%d] = %+v, want %+v", c.in, i, got[i], c.want[i])
			}
		}
	}
	for _, bad := range []string{"", "ndr=0", "pdr=0", "pdr=100%", "pdr=x", "fast"} {
		if _, err := ParseGoals(bad); err == nil {
			t.Errorf("ParseGoals(%q) took it", bad)
		}
	}
}

func TestConfigRefused(t *testing.T) {
	f := &fakeSUT{ceiling: 1, max: 1}
	for name, mod := range map[string]func(*Config){
		"no goal":        func(c *Config) { c.Goals = nil },
		"no floor":       func(c *Config) { c.Floor = 0 },
		"width 1":        func(c *Config) { c.Width = 1 },
		"trial > budget": func(c *Config) { c.Budget = c.Trial / 2 },
		"ratio 1":        func(c *Config) { c.Goals = []Goal{{Name: "x", LossRatio: 1}} },
	} {
		cfg := config(f, ndr)
		mod(&cfg)
		if _, err := Run(context.Background(), cfg, f); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err %v, want ErrConfig", name, err)
		}
	}
	if len(f.rates) != 0 {
		t.Errorf("a refused config ran %d trials", len(f.rates))
	}
}

func TestSearchTop(t *testing.T) {
	// A top rate replaces the unpaced trial: the first trial is paced at
	// it, and a generator that cannot keep it makes it the upper bound.
	f := &fakeSUT{ceiling: 50000, max: 1e6, paced: 80000}
	cfg := config(f, ndr)
	cfg.Top = 100000
	res, err := Run(context.Background(), cfg, f)
	if err != nil {
		t.Fatal(err)
	}
	if f.rates[0] != 100000 || res.Trials[0].Max || res.Trials[0].Sustained || res.Max != 80000 {
		t.Errorf("first trial %+v, max %g: want a paced, unsustained trial at the top, max 80000", res.Trials[0], res.Max)
	}
	contains(t, res.Goals[0], f.ceiling)
	cfg.Top = cfg.Floor
	if _, err := Run(context.Background(), cfg, f); !errors.Is(err, ErrConfig) {
		t.Errorf("a top at the floor: %v, want ErrConfig", err)
	}
}
