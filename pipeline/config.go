package pipeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/rebalance"
)

// LimitError reports a setting of an EngineConfig outside what the engine
// takes. A program that maps configuration fields to its own names (a
// command line's flags) reads Field and builds its message from Value and
// Want.
type LimitError struct {
	// Field is the EngineConfig field, as written in Go: "RingSize",
	// "Steering.Workers", "Rebalance.Interval"; "loops" for the receive
	// queues Check was given.
	Field string
	Value any    // the value refused
	Want  string // what the engine takes: "want 1 to 1024"
}

func (e *LimitError) Error() string { return fmt.Sprintf("%s %v: %s", e.Field, e.Value, e.Want) }

// Unwrap makes a LimitError an ErrConfig.
func (e *LimitError) Unwrap() error { return ErrConfig }

// WithDefaults is c with the zero fields that take a default filled in:
// RingSize, Batch, Window, Tick, Consumer, and with SteerRETA the table size
// and, when it rebalances, the threshold.
func (c EngineConfig) WithDefaults() EngineConfig {
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.Consumer == "" {
		c.Consumer = "fifo"
	}
	if c.Steering.Steer == hash.SteerRETA && c.Steering.RETASize == 0 && c.Steering.RETATable == nil {
		c.Steering.RETASize = hash.DefaultRETASize
	}
	if c.Rebalance.Interval != 0 && c.Rebalance.Threshold == 0 {
		c.Rebalance.Threshold = rebalance.DefaultThreshold
	}
	return c
}

// Check reports the first setting of c the engine does not take, for a
// source of loops receive queues, so that a caller can refuse it before it
// opens the source (NewEngine checks again with the source's queues); loops
// 0 leaves out what depends on the queues. It checks c as it stands: a
// field whose zero value takes a default (WithDefaults) is refused at zero,
// so that an explicit 0 from a user is not silently replaced; NewEngine
// fills the defaults before it checks. Limits are reported as a
// *LimitError; every error is an ErrConfig or one of package hash's errors.
func (c EngineConfig) Check(loops int) error {
	limit := func(field string, value any, format string, args ...any) error {
		return fmt.Errorf("check engine configuration: %w", &LimitError{Field: field, Value: value, Want: fmt.Sprintf(format, args...)})
	}
	nw := c.Steering.Workers
	switch {
	case nw < 1 || nw > MaxWorkers:
		return limit("Steering.Workers", nw, "want 1 to %d", MaxWorkers)
	case loops < 0 || loops > MaxLoops:
		return limit("loops", loops, "want 1 to %d", MaxLoops)
	case c.RingSize < 1 || c.RingSize > MaxRingSize:
		return limit("RingSize", c.RingSize, "want 1 to %d", MaxRingSize)
	case c.Batch < 1 || c.Batch > MaxBatch:
		return limit("Batch", c.Batch, "want 1 to %d", MaxBatch)
	case c.FlowLimit < 0 || c.FlowLimit > queues.MaxFlowLimitTableLen:
		return limit("FlowLimit", c.FlowLimit, "want a table length up to %d (the kernel's default is %d), or 0 for none", queues.MaxFlowLimitTableLen, queues.DefaultFlowLimitTableLen)
	case c.Window < MinWindow:
		return limit("Window", c.Window, "want at least %s", MinWindow)
	}
	if mem := int64(loops) * int64(nw) * int64(c.RingSize+1) * int64(unsafe.Sizeof(queues.Record{})); mem > MaxRingMemory {
		return fmt.Errorf("check engine configuration: %w: %d queues × %d workers × %d records take %d MiB of rings, over %d MiB (hint: fewer workers or queues, or a smaller --ring-size)",
			ErrConfig, loops, nw, c.RingSize+1, mem>>20, MaxRingMemory>>20)
	}
	if c.Steering.Steer == hash.SteerRETA && c.Steering.RETATable == nil && !slices.Contains(RETASizes, c.Steering.RETASize) {
		return limit("Steering.RETASize", c.Steering.RETASize, "want one of %s", joinInts(RETASizes))
	}
	if r := c.Rebalance; r.Interval != 0 {
		switch {
		case r.Interval < MinRebalanceInterval:
			return limit("Rebalance.Interval", r.Interval, "want an interval of at least %s", MinRebalanceInterval)
		case !(r.Threshold >= 1 && r.Threshold <= rebalance.MaxThreshold):
			return limit("Rebalance.Threshold", r.Threshold, "want a max/mean from 1 to %d", rebalance.MaxThreshold)
		case r.Dwell < 0 || r.Dwell > rebalance.MaxDwell:
			return limit("Rebalance.Dwell", r.Dwell, "want 0 to %d intervals", rebalance.MaxDwell)
		}
	}
	if _, err := hash.NewSteering(c.Steering); err != nil {
		return fmt.Errorf("check engine configuration: %w", err)
	}
	return nil
}

// joinInts is "128, 512, 2048".
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
