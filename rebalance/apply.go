package rebalance

import (
	"fmt"

	"github.com/xdphash/xdphash/hash"
)

// Apply ends an interval for the table in force in live: it rebalances that
// table from the interval's per-bucket load (as Rebalance does) and, when a
// bucket moved, publishes the new table, which receive loops pick up at
// their next batch. The rebalancer must be live's only writer. It allocates
// only the table it publishes.
func (r *Rebalancer) Apply(live *hash.LiveRETA, load []uint64) (Result, error) {
	in := live.Load()
	if in == nil || in.Len() != r.cfg.Size {
		return Result{}, fmt.Errorf("apply rebalanced table: %w: the table in force does not have %d entries", ErrInput, r.cfg.Size)
	}
	r.table = in.AppendEntries(r.table[:0])
	res, err := r.Rebalance(r.table, r.table, load)
	if err != nil || res.Moves == 0 {
		return res, err
	}
	t, err := hash.RETAFrom(r.table, r.cfg.Workers)
	if err != nil {
		return res, fmt.Errorf("apply rebalanced table: %w", err)
	}
	live.Store(t)
	return res, nil
}
