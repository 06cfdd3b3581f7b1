package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Errors of a search.
var (
	// ErrConfig reports a Config that cannot search.
	ErrConfig = errors.New("invalid search configuration")
	// ErrFloor reports a generator that could not reach, or could not
	// sustain, the floor: nothing between the floor and its maximum can be
	// searched.
	ErrFloor = errors.New("the generator cannot reach the search floor")
	// ErrBudget reports a budget that does not hold the first trial.
	ErrBudget = errors.New("the search budget holds no trial")
)

// Defaults of Config.
const (
	// DefaultWidth is the relative width (hi-lo)/hi at which a bracket is
	// narrow enough.
	DefaultWidth = 0.02
	// DefaultSustain is the share of the rate asked that a trial's
	// generator may fall short by and still count as having sustained it:
	// its threads start a little apart, and an XDP live-frames test run
	// takes tens of milliseconds to start (docs/pktgen-pacing.md).
	DefaultSustain = 0.03
	// DefaultPDR is the loss ratio of a "pdr" goal without one, TRex's
	// and CSIT's.
	DefaultPDR = 0.005
)

// Goal is one loss ratio to search the rate of.
type Goal struct {
	Name string // "NDR", "PDR(0.5%)"
	// LossRatio is the largest share of the frames sent that a trial may
	// lose and pass: 0 for the non-drop rate.
	LossRatio float64
}

// ParseGoals reads a comma-separated list of goals: "ndr" (no loss),
// "pdr" (DefaultPDR), "pdr=0.5%" or "pdr=0.005". The goals come back
// sorted by loss ratio, duplicates removed.
func ParseGoals(s string) ([]Goal, error) {
	var goals []Goal
	for part := range strings.SplitSeq(s, ",") {
		part = strings.ToLower(strings.TrimSpace(part))
		name, value, hasValue := strings.Cut(part, "=")
		var g Goal
		switch {
		case name == "ndr" && !hasValue:
			g = Goal{Name: "NDR"}
		case name == "pdr" && !hasValue:
			g = pdr(DefaultPDR)
		case name == "pdr":
			r, err := parseRatio(value)
			if err != nil {
				return nil, fmt.Errorf("search goal %q: %w", part, err)
			}
			g = pdr(r)
		default:
			return nil, fmt.Errorf("search goal %q: want ndr, pdr or pdr=RATIO (such as pdr=0.5%%)", part)
		}
		if !slices.ContainsFunc(goals, func(o Goal) bool { return o.LossRatio == g.LossRatio }) {
			goals = append(goals, g)
		}
	}
	slices.SortFunc(goals, func(a, b Goal) int { return cmpFloat(a.LossRatio, b.LossRatio) })
	return goals, nil
}

func pdr(r float64) Goal {
	return Goal{Name: "PDR(" + strconv.FormatFloat(100*r, 'g', -1, 64) + "%)", LossRatio: r}
}

// parseRatio reads "0.5%" or "0.005": a loss ratio above 0 and below 1.
func parseRatio(s string) (float64, error) {
	scale := 1.0
	if t, ok := strings.CutSuffix(s, "%"); ok {
		s, scale = t, 0.01
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("loss ratio %q is not a number", s)
	}
	v *= scale
	if v <= 0 || v >= 1 {
		return 0, fmt.Errorf("loss ratio %g, want more than 0 and less than 1 (100%%); ndr is the zero-loss goal", v)
	}
	return v, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Measurement is what one trial measured.
type Measurement struct {
	Sent uint64 // frames the generator sent
	// Lost is the frames sent that did not come through: every drop, at
	// whatever stage, and every frame missing from the counts.
	Lost uint64
	// Elapsed is how long the generator sent.
	Elapsed time.Duration
}

// Runner runs trials. Trial sends for d at rate frames per second, or as
// fast as the generator can when rate is 0, and measures what was lost. A
// Runner sees its trials in the order they appear in Result.Trials.
type Runner interface {
	Trial(ctx context.Context, rate float64, d time.Duration) (Measurement, error)
}

// Config is a search. Goals, Floor, Trial and Budget are required.
type Config struct {
	Goals []Goal
	// Floor is the lowest rate searched, frames per second: a goal that
	// fails there is reported below the floor.
	Floor float64
	// Width is the relative width (hi-lo)/hi a bracket must reach; 0 takes
	// DefaultWidth.
	Width float64
	// Top, when set, is the first trial's rate, paced, in place of the
	// generator's unpaced maximum: for a system that an unpaced sender
	// harms. What that trial sent is then Result.Max.
	Top float64
	// Trial is each trial's duration; Budget the whole search's, trials and
	// the time between them.
	Trial, Budget time.Duration
	// Sustain is the share of the rate asked a generator may fall short by;
	// 0 takes DefaultSustain.
	Sustain float64
	// Now is the search's clock (since an arbitrary origin); nil takes the
	// wall clock.
	Now func() time.Duration
	// OnTrial, when set, is called after each trial.
	OnTrial func(Trial)
}

// Trial is one trial of a search.
type Trial struct {
	// Rate is the rate asked, frames per second; for the generator's
	// maximum (Max), the rate it reached.
	Rate float64 `json:"rate"`
	Max  bool    `json:"max,omitempty"`
	// Duration is the trial's length asked; Elapsed how long it sent.
	Duration time.Duration `json:"duration_ns"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Sent     uint64        `json:"sent"`
	Lost     uint64        `json:"lost"`
	// Achieved is Sent over Elapsed; Sustained whether it is within the
	// Config's Sustain of Rate.
	Achieved  float64 `json:"achieved"`
	Sustained bool    `json:"sustained"`
	LossRatio float64 `json:"loss_ratio"`
	// Pass is the trial's verdict for each goal, in the Config's order.
	Pass []bool `json:"pass"`
	// Interrupted: the search was stopped during the trial, which counts
	// for no goal.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Statuses of a goal's result.
const (
	// StatusFound: the bracket is within the width goal.
	StatusFound = "found"
	// StatusBudget: the budget ran out before the bracket was narrow
	// enough; the bracket is what was reached.
	StatusBudget = "budget"
	// StatusBelowFloor: the floor failed; the rate is below it.
	StatusBelowFloor = "below floor"
	// StatusGenerator: the generator's maximum passed: the limit is the
	// generator's, not the system's.
	StatusGenerator = "generator limit"
	// StatusInterrupted: the search was stopped before the goal had a
	// bracket.
	StatusInterrupted = "interrupted"
)

// Bracket is a goal's result: Lower is the highest rate that passed below
// Upper, the lowest that failed. A missing end is 0 with its trial -1.
type Bracket struct {
	Goal       Goal    `json:"goal"`
	Status     string  `json:"status"`
	Lower      float64 `json:"lower"`
	LowerTrial int     `json:"lower_trial"`
	Upper      float64 `json:"upper"`
	UpperTrial int     `json:"upper_trial"`
}

// Width is the bracket's relative width (Upper-Lower)/Upper, or 1 when an
// end is missing.
func (b Bracket) Width() float64 {
	if b.LowerTrial < 0 || b.UpperTrial < 0 || b.Upper <= 0 {
		return 1
	}
	return (b.Upper - b.Lower) / b.Upper
}

// Result is what a search found: a bracket per goal and every trial, in
// the order they ran.
type Result struct {
	Goals       []Bracket     `json:"goals"`
	Trials      []Trial       `json:"trials"`
	Max         float64       `json:"max"` // the generator's maximum, frames per second
	Floor       float64       `json:"floor"`
	Width       float64       `json:"width"`
	Budget      time.Duration `json:"budget_ns"`
	Spent       time.Duration `json:"spent_ns"`
	Interrupted bool          `json:"interrupted,omitempty"`
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Width == 0 {
		cfg.Width = DefaultWidth
	}
	if cfg.Sustain == 0 {
		cfg.Sustain = DefaultSustain
	}
	if cfg.Now == nil {
		start := time.Now()
		cfg.Now = func() time.Duration { return time.Since(start) }
	}
	switch {
	case len(cfg.Goals) == 0:
		return cfg, fmt.Errorf("configure search: %w: no goal", ErrConfig)
	case cfg.Top < 0 || math.IsInf(cfg.Top, 0) || math.IsNaN(cfg.Top) || cfg.Top > 0 && cfg.Top <= cfg.Floor:
		return cfg, fmt.Errorf("configure search: %w: top %g frames per second, want 0 (the generator's maximum) or more than the floor %g", ErrConfig, cfg.Top, cfg.Floor)
	case !(cfg.Floor > 0) || math.IsInf(cfg.Floor, 0):
		return cfg, fmt.Errorf("configure search: %w: floor %g frames per second, want more than 0", ErrConfig, cfg.Floor)
	case !(cfg.Width > 0 && cfg.Width < 1):
		return cfg, fmt.Errorf("configure search: %w: width %g, want more than 0 and less than 1", ErrConfig, cfg.Width)
	case !(cfg.Sustain > 0 && cfg.Sustain < 1):
		return cfg, fmt.Errorf("configure search: %w: sustain tolerance %g, want more than 0 and less than 1", ErrConfig, cfg.Sustain)
	case cfg.Trial <= 0 || cfg.Budget < cfg.Trial:
		return cfg, fmt.Errorf("configure search: %w: trials of %s in a budget of %s, want a positive trial within the budget", ErrConfig, cfg.Trial, cfg.Budget)
	}
	for _, g := range cfg.Goals {
		if !(g.LossRatio >= 0 && g.LossRatio < 1) {
			return cfg, fmt.Errorf("configure search: %w: goal %s's loss ratio %g, want 0 to less than 1", ErrConfig, g.Name, g.LossRatio)
		}
	}
	return cfg, nil
}

// Run searches with cfg, running the trials with r. It returns the result
// so far with every error: a trial's, ErrFloor, ErrBudget, or ctx's when
// the search was interrupted (Result.Interrupted).
func Run(ctx context.Context, cfg Config, r Runner) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &searcher{cfg: cfg, r: r, start: cfg.Now(),
		res: &Result{Floor: cfg.Floor, Width: cfg.Width, Budget: cfg.Budget}}
	err = s.run(ctx)
	s.res.Spent = cfg.Now() - s.start
	s.res.Goals = s.brackets()
	return s.res, err
}

type searcher struct {
	cfg   Config
	r     Runner
	res   *Result
	start time.Duration
	// overhead is the most a trial took beyond its duration (setting up
	// and draining), which the budget must hold besides the next trial.
	overhead time.Duration
}

func (s *searcher) run(ctx context.Context) error {
	t, ok, err := s.trial(ctx, s.cfg.Top)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("search: %w: a trial of %s in %s", ErrBudget, s.cfg.Trial, s.cfg.Budget)
	case t.Interrupted:
		return ctx.Err()
	}
	if s.res.Max < s.cfg.Floor {
		return fmt.Errorf("search: %w: its maximum is %.0f frames per second, the floor %.0f", ErrFloor, s.res.Max, s.cfg.Floor)
	}
	for {
		rate, ok := s.next()
		if !ok {
			return nil
		}
		t, ok, err := s.trial(ctx, rate)
		switch {
		case err != nil:
			return err
		case !ok:
			return nil // the budget holds no further trial
		case t.Interrupted:
			return ctx.Err()
		case rate == s.cfg.Floor && !t.Sustained:
			return fmt.Errorf("search: %w: it sent %.0f frames per second of the floor's %.0f", ErrFloor, t.Achieved, s.cfg.Floor)
		}
	}
}

// trial runs one trial at rate (0: the generator's maximum) when the
// budget holds it; ok is false when it does not.
func (s *searcher) trial(ctx context.Context, rate float64) (t Trial, ok bool, err error) {
	now := s.cfg.Now()
	if now-s.start+s.cfg.Trial+s.overhead > s.cfg.Budget {
		return t, false, nil
	}
	m, err := s.r.Trial(ctx, rate, s.cfg.Trial)
	took := s.cfg.Now() - now
	s.overhead = max(s.overhead, took-s.cfg.Trial)
	if err != nil {
		if ctx.Err() != nil {
			s.res.Interrupted = true
			return t, false, fmt.Errorf("search interrupted during the trial at %.0f frames per second: %w", rate, err)
		}
		return t, false, fmt.Errorf("search: trial at %.0f frames per second: %w", rate, err)
	}
	t = Trial{Rate: rate, Max: rate == 0, Duration: s.cfg.Trial, Elapsed: m.Elapsed, Sent: m.Sent, Lost: min(m.Lost, m.Sent)}
	if m.Elapsed > 0 {
		t.Achieved = float64(m.Sent) / m.Elapsed.Seconds()
	}
	if t.Max {
		t.Rate = t.Achieved
	}
	if len(s.res.Trials) == 0 {
		s.res.Max = t.Achieved
	}
	t.Sustained = m.Sent > 0 && t.Achieved >= (1-s.cfg.Sustain)*t.Rate
	if m.Sent > 0 {
		t.LossRatio = float64(t.Lost) / float64(m.Sent)
	}
	t.Pass = make([]bool, len(s.cfg.Goals))
	for j, g := range s.cfg.Goals {
		t.Pass[j] = t.Sustained && t.LossRatio <= g.LossRatio
	}
	if ctx.Err() != nil {
		t.Interrupted = true
		s.res.Interrupted = true
		clear(t.Pass)
	}
	s.res.Trials = append(s.res.Trials, t)
	if s.cfg.OnTrial != nil {
		s.cfg.OnTrial(t)
	}
	return t, true, nil
}

// bracket is goal j's bracket from the trials so far: the lowest failing
// rate, and the highest passing rate below it (a pass above a failure is
// noise the search does not trust).
func (s *searcher) bracket(j int) Bracket {
	b := Bracket{Goal: s.cfg.Goals[j], LowerTrial: -1, UpperTrial: -1}
	for i, t := range s.res.Trials {
		if !t.Interrupted && !t.Pass[j] && (b.UpperTrial < 0 || t.Rate < b.Upper) {
			b.Upper, b.UpperTrial = t.Rate, i
		}
	}
	for i, t := range s.res.Trials {
		if !t.Interrupted && t.Pass[j] && t.Rate > b.Lower && (b.UpperTrial < 0 || t.Rate < b.Upper) {
			b.Lower, b.LowerTrial = t.Rate, i
		}
	}
	return b
}

// triedFloor reports whether a trial ran at the floor.
func (s *searcher) triedFloor() bool {
	return slices.ContainsFunc(s.res.Trials, func(t Trial) bool { return !t.Interrupted && t.Rate == s.cfg.Floor })
}

// next is the rate of the next trial: the floor while a goal has no pass
// and the floor is untried, else the geometric middle of the widest open
// bracket; false when every bracket is closed.
func (s *searcher) next() (float64, bool) {
	widest, rate := 0.0, 0.0
	for j := range s.cfg.Goals {
		b := s.bracket(j)
		switch {
		case b.UpperTrial < 0:
			continue // the generator's maximum passed
		case b.LowerTrial < 0:
			if s.triedFloor() || b.Upper <= s.cfg.Floor {
				continue // below the floor
			}
			return s.cfg.Floor, true
		case b.Width() <= s.cfg.Width:
			continue
		}
		if w := b.Upper / b.Lower; w > widest {
			widest, rate = w, math.Sqrt(b.Lower*b.Upper)
		}
	}
	return rate, widest > 0
}

// brackets is every goal's bracket and status.
func (s *searcher) brackets() []Bracket {
	out := make([]Bracket, len(s.cfg.Goals))
	for j := range out {
		b := s.bracket(j)
		switch {
		case b.UpperTrial < 0 && b.LowerTrial >= 0:
			b.Status = StatusGenerator
		case b.UpperTrial < 0:
			b.Status = StatusInterrupted
		case b.LowerTrial < 0 && (s.triedFloor() || b.Upper <= s.cfg.Floor):
			b.Status = StatusBelowFloor
		case b.LowerTrial >= 0 && b.Width() <= s.cfg.Width:
			b.Status = StatusFound
		case s.res.Interrupted:
			b.Status = StatusInterrupted
		default:
			b.Status = StatusBudget
		}
		out[j] = b
	}
	return out
}
