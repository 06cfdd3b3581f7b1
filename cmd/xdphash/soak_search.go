package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xdphash/xdphash/report"
	"github.com/xdphash/xdphash/search"
	"github.com/xdphash/xdphash/soak"
)

// searchOptions are the soak's rate search flags.
type searchOptions struct {
	spec  string
	goals []search.Goal
	floor rateFlag
	top   rateFlag
	width float64
	trial time.Duration
}

// defaultSearchBudget is --duration's default for a search: the soak's
// default is one run's length, a search needs a dozen trials.
const defaultSearchBudget = 2 * time.Minute

// Bounds of a search trial's length: long enough that start-up is a small
// part of it, short enough that a search holds several.
const (
	minSearchTrial = 500 * time.Millisecond
	maxSearchTrial = 10 * time.Minute
)

func (o *searchOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.spec, "search", "", "search the highest rate without loss instead of one soak: ndr (no loss), pdr (0.5% loss), pdr=RATIO, or several, comma-separated (ndr,pdr=0.5%); --duration is then the whole search's budget (default "+defaultSearchBudget.String()+")")
	f.Var(&o.floor, "search-floor", "--search: the lowest rate tried, frames per second (default 1000)")
	f.Var(&o.top, "search-top", "--search: the first trial's rate, paced, in place of the generator's unpaced maximum (default max; 20kpps with --lab virtio, a bound on the emulated guest's first trial: raise it to search above)")
	f.Float64Var(&o.width, "search-width", search.DefaultWidth, "--search: the relative width (upper-lower)/upper at which a bracket is narrow enough")
	f.DurationVar(&o.trial, "trial", 0, "--search: each trial's length (default 2s; 5s with --lab virtio)")
}

// check reads the goals and refuses values the search would choke on.
func (o *searchOptions) check(cmd *cobra.Command, budget time.Duration) error {
	if o.spec == "" {
		for _, name := range []string{"search-floor", "search-top", "search-width", "trial"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s is a --search flag: give --search ndr (or pdr, ...)", name)
			}
		}
		return nil
	}
	goals, err := search.ParseGoals(o.spec)
	if err != nil {
		return fmt.Errorf("--search: %w", err)
	}
	o.goals = goals
	switch {
	case cmd.Flags().Changed("search-floor") && o.floor.pps <= 0:
		return fmt.Errorf("--search-floor %s: want a rate above 0", o.floor.String())
	case !(o.width > 0 && o.width < 1):
		return fmt.Errorf("--search-width %g: want more than 0 and less than 1", o.width)
	case o.trial != 0 && (o.trial < minSearchTrial || o.trial > maxSearchTrial):
		return fmt.Errorf("--trial %s: want %s to %s", o.trial, minSearchTrial, maxSearchTrial)
	case o.trial > budget:
		return fmt.Errorf("--trial %s is longer than the search's budget --duration %s", o.trial, budget)
	}
	return nil
}

// runSearch runs the rate search and writes its files; interrupted, it
// writes the trials so far.
func runSearch(cmd *cobra.Command, log *slog.Logger, o *soakOptions) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	o.cfg.Log = log
	s := &o.search
	log.Info("search", "goals", s.spec, "budget", o.cfg.Duration, "lab", o.cfg.Lab, "profile", o.cfg.Profile)
	res, err := soak.Search(ctx, o.cfg, soak.SearchConfig{
		Goals: s.goals, Floor: s.floor.pps, Top: s.top.pps, Width: s.width, Trial: s.trial,
		OnTrial: func(t search.Trial) {
			log.Info("trial", "asked_fps", fmt.Sprintf("%.0f", t.Rate), "max", t.Max, "sent_fps", fmt.Sprintf("%.0f", t.Achieved),
				"sustained", t.Sustained, "lost", t.Lost, "loss_ratio", fmt.Sprintf("%.6f", t.LossRatio), "pass", t.Pass)
		},
	})
	interrupted := ctx.Err() != nil
	if res == nil {
		return err
	}
	w := cmd.OutOrStdout()
	sumErr := writeSearchSummary(w, res)
	if werr := res.WriteFiles(o.out); werr != nil {
		return werr
	}
	if sumErr != nil {
		return fmt.Errorf("write the search summary: %w", sumErr)
	}
	abs, _ := filepath.Abs(o.out)
	if res.Stats() != nil {
		fmt.Fprintf(w, "\nreport: %s (also %s, run.json, report.txt there)\n", filepath.Join(abs, soak.FileReportHTML), soak.FileSearch)
	} else {
		fmt.Fprintf(w, "\nsearch record: %s (no trial finished: no run statistics or report)\n", filepath.Join(abs, soak.FileSearch))
	}
	switch {
	case interrupted:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("search interrupted: %d trials written", len(res.Report.Trials))}
	case errors.Is(err, search.ErrFloor):
		return fmt.Errorf("%w (hint: lower --search-floor)", err)
	}
	return err
}

// writeSearchSummary prints what the search found: the report's search
// section.
func writeSearchSummary(w io.Writer, res *soak.SearchResult) error {
	st := res.Stats()
	if st == nil {
		_, err := fmt.Fprintf(w, "search: %d trials, none with statistics\n", len(res.Report.Trials))
		return err
	}
	return report.WriteSearch(w, st.Search)
}
