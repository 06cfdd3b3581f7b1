package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/rebalance"
	"github.com/xdphash/xdphash/runstats"
)

// rebalanceOptions are the flags of load-aware steering (issue 16).
type rebalanceOptions struct {
	retaSize  int
	interval  time.Duration // --rebalance; 0: static
	threshold float64
	dwell     int
	hold      bool
	compare   string // --compare static
}

func (r *rebalanceOptions) addFlags(f *pflag.FlagSet) {
	f.IntVar(&r.retaSize, "reta-size", hash.DefaultRETASize, "reta steering: indirection table entries (buckets): one of "+retaSizes())
	f.DurationVar(&r.interval, "rebalance", 0, "reta steering: rewrite the table from each interval's per-bucket load (--rebalance alone: every 100ms)")
	f.Lookup("rebalance").NoOptDefVal = pipeline.DefaultRebalanceInterval.String()
	f.Float64Var(&r.threshold, "rebalance-threshold", rebalance.DefaultThreshold, "rebalance: max/mean worker load above which buckets move")
	f.IntVar(&r.dwell, "rebalance-dwell", 1, "rebalance: intervals a moved bucket stays where it went")
	f.BoolVar(&r.hold, "rebalance-hold", false, "rebalance: hold a moved bucket's packets on its new worker until its old worker has finished the bucket's earlier ones, so that no flow is reordered (RSS++'s remedy)")
	f.StringVar(&r.compare, "compare", "", "with --rebalance on the virtual clock: replay the traffic with the static table too (static)")
}

// retaSizes is "128, 512, 2048": the sizes the engine takes.
func retaSizes() string {
	s := make([]string, len(pipeline.RETASizes))
	for i, n := range pipeline.RETASizes {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// check refuses the flags it would ignore; the engine's limits on their
// values are pipeline.EngineConfig.Check's.
func (r *rebalanceOptions) check(o *runOptions, changed func(string) bool) error {
	switch {
	case o.steer != "reta" && (changed("reta-size") || changed("rebalance") || changed("compare")):
		return errors.New("--reta-size, --rebalance and --compare are for --steer reta")
	case changed("rebalance") && r.interval == 0: // 0 is the engine's static table
		return fmt.Errorf("--rebalance %s: want an interval of at least %s", r.interval, pipeline.MinRebalanceInterval)
	case r.interval == 0 && (changed("rebalance-threshold") || changed("rebalance-dwell") || changed("rebalance-hold") || changed("compare")):
		return errors.New("--rebalance-threshold, --rebalance-dwell, --rebalance-hold and --compare are for --rebalance")
	case r.compare != "" && r.compare != "static":
		return fmt.Errorf("--compare %q: want static", r.compare)
	case r.compare != "" && !o.virtualClock:
		return errors.New("--compare static replays the traffic twice: it needs --virtual-clock (and --pcap or --synthetic with --count)")
	case r.compare != "" && o.pcap == "-":
		return errors.New("--compare static reads the capture twice: give a file, not stdin")
	case r.compare != "" && o.synthetic != "" && o.count == 0:
		return errors.New("--compare static with --synthetic needs --count: both runs replay the same frames")
	}
	return nil
}

// apply sets the table size and the rebalancing of cfg.
func (r *rebalanceOptions) apply(cfg *pipeline.EngineConfig) {
	if cfg.Steering.Steer != hash.SteerRETA {
		return
	}
	cfg.Steering.RETASize = r.retaSize
	cfg.Rebalance = pipeline.RebalanceConfig{Interval: r.interval, Threshold: r.threshold, Dwell: r.dwell, Hold: r.hold}
}

// runStatic is --compare static: the run of cfg with its table kept static,
// on a source of its own opened like the main run's.
func (o *runOptions) runStatic(ctx context.Context, s *runSetup, cfg pipeline.EngineConfig, log *slog.Logger) (*runstats.RunStats, error) {
	if o.rebalance.compare == "" {
		return nil, nil
	}
	return pipeline.RunStatic(ctx, cfg, func() (source.Source, error) {
		src, _, err := o.openSource(s, log)
		return src, err
	})
}
