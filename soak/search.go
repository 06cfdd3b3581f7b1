package soak

import (
	"cmp"
	"context"
	"time"

	"github.com/xdphash/xdphash/runstats"
	"github.com/xdphash/xdphash/search"
)

// Defaults of SearchConfig.
const (
	// DefaultSearchFloor is the lowest rate a search tries, frames per
	// second.
	DefaultSearchFloor = 1000
	// DefaultTrial is a veth trial's length: at the floor a thousand
	// frames, enough to tell a 0.1% loss ratio.
	DefaultTrial = 2 * time.Second
	// DefaultVirtioTrial is a virtio lab trial's length: each trial boots a
	// guest, which the trial should outlast.
	DefaultVirtioTrial = 5 * time.Second
	// DefaultVirtioTop is the virtio lab's first trial rate, in place of
	// the generator's unpaced maximum: sent as fast as the sender can,
	// the guest has stopped taking frames (docs/virtio-lab.md).
	DefaultVirtioTop = 2 * DefaultVirtioRate
)

// SearchConfig is a rate search of a soak's pipeline: trials of Trial at
// fixed rates between Floor and the generator's maximum, within the soak's
// Config.Duration as the whole budget.
type SearchConfig struct {
	Goals []search.Goal
	Floor float64 // 0: DefaultSearchFloor
	// Top is the first trial's rate, paced; 0 takes the generator's
	// unpaced maximum on veth and DefaultVirtioTop in the virtio lab.
	Top   float64
	Width float64       // 0: search.DefaultWidth
	Trial time.Duration // 0: DefaultTrial, or DefaultVirtioTrial in the virtio lab
	// OnTrial, when set, is called after each trial.
	OnTrial func(search.Trial)
}

// SearchResult is a rate search: its record, and each trial's soak result
// in the same order (the checks of each).
type SearchResult struct {
	Report runstats.SearchReport
	Trials []*Result
}

// Search runs a rate search of the pipeline that Run soaks with cfg: each
// trial is a soak of its own (its own lab, removed after it) at one rate,
// and loses every frame sent that no consumer served or holds. It returns
// the result so far with every error, an interrupted search's (ctx ended)
// included; a nil result only for a configuration that cannot search.
func Search(ctx context.Context, cfg Config, sc SearchConfig) (*SearchResult, error) {
	// Run fills and checks the rest of cfg, trial by trial.
	cfg.Duration, cfg.Profile = cmp.Or(cfg.Duration, DefaultDuration), cmp.Or(cfg.Profile, DefaultProfile)
	lab := cmp.Or(cfg.Lab, LabVeth)
	if sc.Trial == 0 {
		sc.Trial = DefaultTrial
		if lab == LabVirtio {
			sc.Trial = DefaultVirtioTrial
		}
	}
	if sc.Top == 0 && lab == LabVirtio {
		sc.Top = DefaultVirtioTop
	}
	r := &trialRunner{cfg: cfg}
	res, err := search.Run(ctx, search.Config{
		Goals: sc.Goals, Floor: cmp.Or(sc.Floor, DefaultSearchFloor), Width: sc.Width,
		Top: sc.Top, Trial: sc.Trial, Budget: cfg.Duration, OnTrial: sc.OnTrial,
	}, r)
	if res == nil {
		return nil, err
	}
	out := &SearchResult{Trials: r.results}
	out.Report = searchReport(res, r.results, lab, cfg.Profile, cfg.Pcap)
	if err != nil {
		out.Report.Error = err.Error()
	}
	return out, err
}

// trialRunner runs each trial as a soak.
type trialRunner struct {
	cfg     Config
	results []*Result
}

func (r *trialRunner) Trial(ctx context.Context, rate float64, d time.Duration) (search.Measurement, error) {
	c := r.cfg
	c.Rate, c.RateMax, c.Duration, c.Progress = rate, rate == 0, d, nil
	res, err := Run(ctx, c)
	if err != nil {
		return search.Measurement{}, err
	}
	r.results = append(r.results, res)
	g := res.Generator
	return search.Measurement{Sent: g.Frames, Lost: lost(res), Elapsed: g.Elapsed}, nil
}

// lost is the frames a soak sent that no consumer served or holds.
func lost(res *Result) uint64 {
	sent := res.Generator.Frames
	if res.Stats == nil {
		return sent
	}
	a := res.Stats.Accounting
	return sent - min(sent, a.Processed+a.Unserved)
}

// stageDrops is a soak's drops by stage (runstats.SearchTrial.Drops).
func stageDrops(res *Result, lab string) map[string]uint64 {
	d := map[string]uint64{}
	add := func(k string, n uint64) {
		if n > 0 {
			d[k] += n
		}
	}
	var xsk uint64
	if st := res.Stats; st != nil {
		for k, n := range st.Accounting.KernelDrops {
			add("kernel/"+k, n)
			xsk += n
		}
		for k, n := range st.Accounting.Dropped {
			add(string(k), n)
		}
	}
	// A veth's host end and the guest's virtio-net count the frames
	// AF_XDP refused in their rx_dropped too (a failed XDP redirect): only
	// what is beyond those is the NIC's own.
	if lab == LabVirtio {
		add("guest/rx_dropped", res.Links.HostRxDropped-min(res.Links.HostRxDropped, xsk))
	} else {
		add("veth/tx_dropped", res.Links.PeerTxDropped)
	}
	var counted uint64
	for _, n := range d {
		counted += n
	}
	if l := lost(res); l > counted {
		d["unaccounted"] = l - counted
	}
	return d
}

// searchReport is the search's record, each trial with its soak's drops and
// CPU.
func searchReport(res *search.Result, trials []*Result, lab, profile, pcap string) runstats.SearchReport {
	if pcap != "" {
		profile = "pcap:" + pcap
	}
	rep := runstats.SearchReport{
		SchemaVersion: runstats.SearchSchemaVersion, Lab: lab, Profile: profile,
		Floor: res.Floor, Max: res.Max, Width: res.Width,
		BudgetNs: int64(res.Budget), SpentNs: int64(res.Spent), Interrupted: res.Interrupted,
		StatsTrial: -1,
	}
	for _, b := range res.Goals {
		rep.Goals = append(rep.Goals, runstats.SearchGoal{
			Name: b.Goal.Name, LossRatio: b.Goal.LossRatio, Status: b.Status,
			Lower: b.Lower, LowerTrial: b.LowerTrial, Upper: b.Upper, UpperTrial: b.UpperTrial,
		})
	}
	for i, t := range res.Trials {
		rep.TrialNs = int64(t.Duration)
		st := runstats.SearchTrial{
			Rate: t.Rate, Max: t.Max, DurationNs: int64(t.Duration), ElapsedNs: int64(t.Elapsed),
			Sent: t.Sent, Achieved: t.Achieved, Sustained: t.Sustained, Lost: t.Lost, LossRatio: t.LossRatio,
			Pass: t.Pass, Interrupted: t.Interrupted,
		}
		if i < len(trials) {
			sr := trials[i]
			st.Bytes = sr.Generator.Bytes
			st.Drops = stageDrops(sr, lab)
			c := sr.CPU
			st.CPU = runstats.SearchCPU{GeneratorNs: c.GeneratorNs, PipelineNs: c.PipelineNs, SoftirqNs: c.SoftirqNs, Pipeline: c.Pipeline, Valid: c.Valid}
		}
		rep.Trials = append(rep.Trials, st)
	}
	rep.StatsTrial = statsTrial(rep, trials)
	return rep
}

// statsTrial is the trial whose statistics stand for the search: the
// highest rate that passed the first goal, else the last trial with
// statistics; -1 when none has any.
func statsTrial(rep runstats.SearchReport, trials []*Result) int {
	has := func(i int) bool { return i >= 0 && i < len(trials) && trials[i].Stats != nil }
	if len(rep.Goals) > 0 && has(rep.Goals[0].LowerTrial) {
		return rep.Goals[0].LowerTrial
	}
	for i := len(trials) - 1; i >= 0; i-- {
		if has(i) {
			return i
		}
	}
	return -1
}

// Stats is the run statistics that stand for the search (StatsTrial's),
// with the search's record attached; nil when no trial has statistics.
func (s *SearchResult) Stats() *runstats.RunStats {
	i := s.Report.StatsTrial
	if i < 0 || i >= len(s.Trials) || s.Trials[i].Stats == nil {
		return nil
	}
	st := *s.Trials[i].Stats
	st.Search = &s.Report
	return &st
}
