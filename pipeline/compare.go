package pipeline

import (
	"context"
	"fmt"

	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/runstats"
)

// RunStatic is the other half of a rebalanced run's comparison (`xdphash run
// --compare static`): cfg run with its indirection table kept static, on a
// source of its own from open, which must replay the same traffic as the
// rebalanced run's (a file or synthetic frames, on the virtual clock, so
// that both runs see the same arrivals). cfg.Source is not used; open's
// source is closed before RunStatic returns. AttachStatic puts the result
// into the rebalanced run's report.
func RunStatic(ctx context.Context, cfg EngineConfig, open func() (source.Source, error)) (st *runstats.RunStats, err error) {
	src, err := open()
	if err != nil {
		return nil, fmt.Errorf("compare static: %w", err)
	}
	defer func() {
		if cerr := src.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("compare static: close %s: %w", src.Info().Name, cerr)
		}
	}()
	cfg.Source, cfg.Rebalance = src, RebalanceConfig{}
	e, err := NewEngine(cfg)
	if err != nil {
		return nil, fmt.Errorf("compare static: %w", err)
	}
	if st, err = e.Run(ctx); err != nil {
		return nil, fmt.Errorf("compare static: %w", err)
	}
	return st, nil
}

// AttachStatic adds the static run of RunStatic to the report of the
// rebalanced run, st (its steering report's comparison); a nil static, or a
// run steered without a table, is left as it is.
func AttachStatic(st, static *runstats.RunStats) {
	if static != nil && st.Steering != nil {
		st.Steering.Compare = &runstats.Comparison{Static: static}
	}
}
