package rebalance

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/xdphash/xdphash/hash"
)

// Errors of this package.
var (
	// ErrConfig reports a Config New refuses.
	ErrConfig = errors.New("invalid rebalancer configuration")
	// ErrInput reports a table or a load vector that does not fit the
	// rebalancer: wrong length, an entry naming no worker, a total load
	// above MaxLoad.
	ErrInput = errors.New("invalid rebalancer input")
)

// DefaultThreshold is the max/mean imbalance Config.Threshold 0 takes: a
// rebalanced table then keeps the busiest worker within 5% of the mean
// where the buckets allow it.
const DefaultThreshold = 1.05

// Bounds of a Config.
const (
	// MaxSize bounds Config.Size: hash.RETA's largest table.
	MaxSize = 1 << 16
	// MaxWorkers bounds Config.Workers: a table entry is 16 bits.
	MaxWorkers = 1 << 16
	// MaxThreshold bounds Config.Threshold: beyond it nothing would ever move.
	MaxThreshold = 1 << 16
	// MaxDwell bounds Config.Dwell, in intervals.
	MaxDwell = 1 << 30
	// MaxLoad bounds the total load of an interval, so that sums and the
	// threshold times the mean stay exact: 2^48 nanoseconds of service time
	// is over 78 hours.
	MaxLoad = 1 << 48
)

// Config describes a rebalancer.
type Config struct {
	// Size is the number of table entries (buckets), a power of two; 0
	// takes hash.DefaultRETASize.
	Size int
	// Workers is the number of workers (queues) the table steers to, at
	// least 1.
	Workers int
	// Threshold is the max/mean worker load above which a table is
	// rebalanced, and under which a rebalanced table brings every worker
	// where the buckets allow it; at least 1. 0 takes DefaultThreshold.
	Threshold float64
	// Dwell is the number of intervals after the one in which a bucket
	// moved during which it may not move again: 0 lets it move at the next
	// interval. It keeps a bucket's flows from bouncing between workers and
	// leaves the old worker time to drain them.
	Dwell int
}

// Result is what one call of Rebalance did and how good the table is.
type Result struct {
	// Moves is the number of buckets moved, and Moved the load they carried
	// in the interval.
	Moves int
	Moved uint64
	// Pinned is the number of loaded buckets of overloaded workers that
	// could not move because they moved within the dwell.
	Pinned int
	// Before and After are the max/mean worker load of the interval under
	// the table in force and under the new table; 1 when nothing was
	// loaded.
	Before, After float64
	// Bound is a lower bound on the max/mean any table can reach with the
	// interval's load: the busiest worker carries no less than the mean,
	// nor than the heaviest bucket, nor, with more buckets than workers,
	// than the two lightest of the Workers+1 heaviest buckets (two of them
	// must share a worker).
	Bound float64
	// Balanced reports whether After is within the threshold.
	Balanced bool
	// AtBound reports whether After equals Bound: no table does better.
	AtBound bool
}

// Gap is how far the new table is from the best possible one: After/Bound
// - 1, 0 at the bound.
func (r Result) Gap() float64 { return r.After/r.Bound - 1 }

// Rebalancer computes a new table from each interval's per-bucket load. It
// remembers when each bucket last moved, for the dwell, and counts the
// intervals: call Rebalance (or Apply) once per interval, including
// intervals in which nothing is expected to move. It is not safe for
// concurrent use.
type Rebalancer struct {
	cfg      Config
	interval int64   // number of Rebalance calls so far
	movedAt  []int64 // per bucket: 1 + the interval of its last move, 0 if never
	order    []int32 // bucket indices, heaviest first
	loads    []uint64
	donors   []int32 // overloaded workers, busiest first
	donor    []bool
	budget   int      // pairs the exchange search may still look at in this call
	table    []uint16 // Apply's copy of the table in force
}

// swapBudget is how many candidate pairs, per table entry, one call may look
// at in its search for exchanges: it bounds the cost of a call whatever the
// load, at the price of missing some exchanges in extreme tables.
const swapBudget = 16

// New returns a rebalancer for cfg, with every buffer it needs.
func New(cfg Config) (*Rebalancer, error) {
	if cfg.Size == 0 {
		cfg.Size = hash.DefaultRETASize
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = DefaultThreshold
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("create rebalancer: %w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case cfg.Size < 1 || cfg.Size > MaxSize || cfg.Size&(cfg.Size-1) != 0:
		return nil, bad("table size %d, want a power of two up to %d", cfg.Size, MaxSize)
	case cfg.Workers < 1 || cfg.Workers > MaxWorkers:
		return nil, bad("%d workers, want 1 to %d", cfg.Workers, MaxWorkers)
	case !(cfg.Threshold >= 1 && cfg.Threshold <= MaxThreshold):
		return nil, bad("threshold %g, want a max/mean from 1 to %d", cfg.Threshold, MaxThreshold)
	case cfg.Dwell < 0 || cfg.Dwell > MaxDwell:
		return nil, bad("dwell of %d intervals, want 0 to %d", cfg.Dwell, MaxDwell)
	}
	return &Rebalancer{
		cfg:     cfg,
		movedAt: make([]int64, cfg.Size),
		order:   make([]int32, cfg.Size),
		loads:   make([]uint64, cfg.Workers),
		donors:  make([]int32, 0, cfg.Workers),
		donor:   make([]bool, cfg.Workers),
		table:   make([]uint16, 0, cfg.Size),
	}, nil
}

// Config returns the configuration in force, defaults filled in.
func (r *Rebalancer) Config() Config { return r.cfg }

// Rebalance ends an interval in which bucket b carried load[b] (packets,
// bytes or service time: any additive measure, in all at most MaxLoad) under
// the table cur (bucket -> worker), and writes the table for the next
// interval to next, which may be cur itself. All three have Config.Size
// entries. A refused input changes nothing, not even the interval count.
//
// When the interval's max/mean worker load is within the threshold, next is
// cur. Otherwise every worker above the target, the busiest first, gives up
// buckets until it is under it, taking only buckets that did not move
// within the dwell and that fit under the target where they go. At each
// step it moves the lightest bucket that covers the worker's remaining
// excess alone; failing that, it exchanges a bucket with a lighter one of
// another worker when that covers the excess (two moves: a bucket too heavy
// for any other worker's room can still go in exchange for a lighter one);
// failing that, it moves the heaviest bucket that fits and goes on. A bucket
// goes to the worker it fits best (the least room that takes it), which
// keeps large room for large buckets. The target is the threshold times the
// mean, or the bound (see [Result]) when that is higher.
//
// Taking the heaviest buckets first is what sheds an excess in the fewest
// moves; like any greedy packing it can miss a table with fewer moves, or
// miss the target when room is tight, and then leaves the worker as close as
// it got (docs/rebalance.md says how often, against exhaustive search). The
// new table is never more imbalanced than cur.
//
// A call sorts the buckets once and looks at each at most once per
// overloaded worker; its search for exchanges looks at no more than 16
// candidates per bucket in all. It allocates nothing.
func (r *Rebalancer) Rebalance(next, cur []uint16, load []uint64) (Result, error) {
	n, w := r.cfg.Size, r.cfg.Workers
	if len(next) != n || len(cur) != n || len(load) != n {
		return Result{}, fmt.Errorf("rebalance: %w: table of %d and %d entries, load of %d buckets, want %d each", ErrInput, len(cur), len(next), len(load), n)
	}
	for b, q := range cur {
		if int(q) >= w {
			return Result{}, fmt.Errorf("rebalance: %w: bucket %d steers to worker %d of %d", ErrInput, b, q, w)
		}
	}
	clear(r.loads)
	var total uint64
	for b, l := range load {
		if l > MaxLoad-total {
			return Result{}, fmt.Errorf("rebalance: %w: the buckets' load adds up to more than %d", ErrInput, uint64(MaxLoad))
		}
		r.loads[cur[b]] += l
		total += l
	}
	now := r.interval
	r.interval++
	r.budget = swapBudget * n
	copy(next, cur)
	if total == 0 {
		return Result{Before: 1, After: 1, Bound: 1, Balanced: true, AtBound: true}, nil
	}
	mean := float64(total) / float64(w)
	res := Result{Before: float64(slices.Max(r.loads)) / mean}

	// Buckets heaviest first.
	for b := range r.order {
		r.order[b] = int32(b)
	}
	slices.SortFunc(r.order, func(a, b int32) int { return heavierFirst(load, a, b) })
	bound := max(load[r.order[0]], (total+uint64(w)-1)/uint64(w))
	if n > w {
		bound = max(bound, load[r.order[w-1]]+load[r.order[w]])
	}
	res.Bound = float64(bound) / mean

	limit := uint64(r.cfg.Threshold * mean) // within the threshold
	target := max(limit, bound)
	r.donors = r.donors[:0]
	clear(r.donor)
	if slices.Max(r.loads) > limit {
		for v, l := range r.loads {
			if l > target {
				r.donors = append(r.donors, int32(v))
				r.donor[v] = true
			}
		}
	}
	slices.SortFunc(r.donors, func(a, b int32) int { return heavierFirst(r.loads, a, b) })
	// Counted before anything moves, since next may be cur: a pinned bucket
	// stays where it is.
	for b, l := range load {
		if l > 0 && r.donor[cur[b]] && !r.movable(int32(b), now) {
			res.Pinned++
		}
	}
	for _, d := range r.donors {
		r.shed(&res, d, target, next, load, now)
	}
	after := slices.Max(r.loads)
	res.After = float64(after) / mean
	res.Balanced = after <= limit
	res.AtBound = after == bound
	return res, nil
}

// maxRoom is the most load any worker but d can take without exceeding
// target.
func (r *Rebalancer) maxRoom(d int32, target uint64) uint64 {
	var room uint64
	for v, l := range r.loads {
		if int32(v) != d && l < target {
			room = max(room, target-l)
		}
	}
	return room
}

// bestFit is the worker other than d with the least room under target that
// still takes l (the first of equal ones); one exists when l <= maxRoom.
func (r *Rebalancer) bestFit(d int32, target, l uint64) int {
	best, bestRoom := -1, uint64(math.MaxUint64)
	for v, vl := range r.loads {
		if int32(v) == d || vl > target || target-vl < l {
			continue
		}
		if room := target - vl; room < bestRoom {
			best, bestRoom = v, room
		}
	}
	return best
}

// movable reports whether bucket b may move in interval now.
func (r *Rebalancer) movable(b int32, now int64) bool {
	return r.movedAt[b] == 0 || now-(r.movedAt[b]-1) > int64(r.cfg.Dwell)
}

// shed moves buckets off worker d until its load is under target or no move
// helps: at each step the lightest bucket of d that covers its excess alone
// and fits on another worker; failing that, the swap of a bucket of d with a
// lighter one of another worker that covers the excess (two moves); failing
// that, the heaviest bucket of d that fits elsewhere, and on to the next step.
func (r *Rebalancer) shed(res *Result, d int32, target uint64, next []uint16, load []uint64, now int64) {
	// Receivers only fill up while d sheds, so a bucket too heavy for every
	// receiver stays so: one pass over the order suffices.
	pos, n := 0, len(r.order)
	for r.loads[d] > target {
		room := r.maxRoom(d, target)
		excess := r.loads[d] - target
		pick, covers := int32(-1), false
		for ; pos < n; pos++ {
			b := r.order[pos]
			l := load[b]
			if l == 0 {
				pos = n // the rest are empty too
				break
			}
			if int32(next[b]) != d || l > room || !r.movable(b, now) {
				continue
			}
			if covers && l < excess {
				break // pick is the lightest bucket that covers the excess
			}
			pick, covers = b, l >= excess
			if !covers {
				pos++
				break // none covers the excess: the heaviest that fits
			}
		}
		if covers {
			r.move(res, pick, d, r.bestFit(d, target, load[pick]), next, load, now)
			return
		}
		if b, c, v := r.swap(d, target, excess, next, load, now); b >= 0 {
			r.move(res, b, d, v, next, load, now)
			r.move(res, c, int32(v), int(d), next, load, now)
			return
		}
		if pick < 0 {
			return
		}
		r.move(res, pick, d, r.bestFit(d, target, load[pick]), next, load, now)
	}
}

// swap finds a bucket b of worker d and a lighter bucket c of another worker
// v such that exchanging them brings d under target (load[b]-load[c] covers
// excess) and leaves v under it: the heaviest such b, the first such v, the
// heaviest such c. It returns b = -1 if there is none. It is called when no
// single bucket of d covers the excess and fits elsewhere, which is when a
// bucket too heavy for any other worker's room can still go there in
// exchange for a lighter one.
func (r *Rebalancer) swap(d int32, target, excess uint64, next []uint16, load []uint64, now int64) (b, c int32, v int) {
	for _, b := range r.order {
		lb := load[b]
		if lb <= excess {
			break // the rest are lighter still
		}
		if int32(next[b]) != d || !r.movable(b, now) {
			continue
		}
		for v, lv := range r.loads {
			if int32(v) == d || lv > target {
				continue
			}
			if r.budget--; r.budget < 0 {
				return -1, -1, -1
			}
			// c must weigh from lb-room (v stays under target) to lb-excess
			// (d gets under it), and more than 0.
			lo, hi := max(1, lb-min(lb, target-lv)), lb-excess
			// The order is heaviest first: skip the buckets above hi.
			i, _ := slices.BinarySearchFunc(r.order, hi, func(e int32, t uint64) int {
				if load[e] > t {
					return -1
				}
				return 1
			})
			for ; i < len(r.order) && load[r.order[i]] >= lo; i++ {
				if r.budget--; r.budget < 0 {
					return -1, -1, -1
				}
				if c := r.order[i]; int(next[c]) == v && r.movable(c, now) {
					return b, c, v
				}
			}
		}
	}
	return -1, -1, -1
}

// move steers bucket b, carrying load[b], from worker from to worker to.
func (r *Rebalancer) move(res *Result, b, from int32, to int, next []uint16, load []uint64, now int64) {
	next[b] = uint16(to)
	r.loads[from] -= load[b]
	r.loads[to] += load[b]
	r.movedAt[b] = now + 1
	res.Moves++
	res.Moved += load[b]
}

// heavierFirst orders indices a and b by load, heaviest first, and equal
// loads by index, so that every result depends on the input alone.
func heavierFirst(load []uint64, a, b int32) int {
	switch {
	case load[a] > load[b]:
		return -1
	case load[a] < load[b]:
		return 1
	}
	return int(a - b)
}
