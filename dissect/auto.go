package dissect

import (
	"fmt"
)

// Auto mode opens and closes a Dissector's gates from the traffic it measures.
//
// The model: a gate is tried on the frames of its class (ClassifyFrame), and
// nowhere else. An open gate saves S ns on each of those frames its fast path
// accepts and costs C ns on each it declines (the checks made before declining
// and the hand-over of the state, less what the slow path saves by resuming
// where the fast path stopped), both against the same Dissector with the gate
// closed.
// With p the share of its class's frames the fast path accepts, the gate pays off
// when p·S > (1−p)·C, that is when p exceeds the break-even share
//
//	p_be = C / (S + C).
//
// So a gate opens for a class where its shape is common (plain TCP/UDP behind
// that header) and closes where it is rare (the class is mostly IP options,
// fragments, extension headers, ESP, ARP behind a tag, ...).
//
// Frames are counted in windows of Window frames. At the end of each window in
// which the class had at least MinSample frames, a gate opens when
// p > p_be·(1 + Hysteresis) and closes when p < p_be·(1 − Hysteresis) (a margin
// relative to p_be), and after a change it keeps its state for at least
// MinDwell windows, so a mix near the break-even point does not make it flap.
// A decline costs more than the closed gate (C > 0 in DefaultCosts for every
// shape whose fast path declines frames of its class), so an open gate closes
// on traffic of its class that its fast path mostly declines. Where a decline
// costs nothing (C = 0: MPLS, whose fast path covers its whole class), p_be is
// 0: the gate opens once its fast path accepts any frame of its class, and
// stays open. p is measured directly while a gate is open (its
// hits and declines); while it is closed, one class frame in ProbeEvery is also
// given to the fast path (into scratch keys) to learn how many it would accept.
// S and C come from AutoConfig.Costs, by default DefaultCosts.
//
// Auto mode never changes a key byte: it only chooses which code computes them.
type Auto struct {
	cfg   AutoConfig
	n     int // frames in the current window
	dwell [NumShapes]int
	// At the start of the window, to take differences.
	lastFast, lastDeclined [NumShapes]uint64
	probeSeen              [NumShapes]uint64
	probeTried             [NumShapes]uint64
	probeAccepted          [NumShapes]uint64
	scratch                FlowKeys
	state                  [NumShapes]GateState
}

// Cost is what an open gate saves and costs against the gate closed, in
// nanoseconds per frame.
type Cost struct {
	Saving float64 // S: time with the gate closed minus open, on a frame its fast path accepts
	Miss   float64 // C: time with the gate open minus closed, on a frame its fast path declines
}

// BreakEven is p_be = C / (S + C); 1 (never worth it) when there is no saving.
func (c Cost) BreakEven() float64 {
	if c.Saving <= 0 {
		return 1
	}
	return c.Miss / (c.Saving + c.Miss)
}

// AutoConfig tunes auto mode. Zero fields take the defaults of DefaultAutoConfig.
type AutoConfig struct {
	Window     int             // frames per decision window
	Hysteresis float64         // margin around p_be, as a fraction of p_be
	MinDwell   int             // windows a gate keeps its state after a change
	MinSample  int             // class frames (or probes) a window needs before it decides
	ProbeEvery int             // while closed, try the fast path on one class frame in this many
	Costs      [NumShapes]Cost // S and C per shape
}

// GateState is auto mode's view of one gate after the last window.
type GateState struct {
	Open      bool
	Share     float64 // p: share of its class's frames the fast path accepted (or would have) in the last decided window
	BreakEven float64 // p_be
	Flips     uint64  // changes made so far
}

// DefaultCosts are the per-shape costs auto mode uses when given none, timed
// on the project's reference machine (2-core x86-64 VM, Linux 6.18, Go
// 1.26.8) as what auto mode chooses between: a Dissector under auto mode with
// the gate closed and with it open, on the shape's sample frame (S) and on its
// NearMissFrame (C); C = 0 for MPLS, whose fast path declines no frame of its
// class, and for eth_ip, whose decline under auto mode costs no more than the
// closed gate's route. Benchmark, command and figures, with the instruction
// counts that cross-check them: docs/fast-paths.md. The tunnel shapes have
// none: their fast paths run only under a descent policy, and auto mode
// leaves their gates as they are set.
var DefaultCosts = [NumShapes]Cost{
	ShapeEthIP: {Saving: 4.8},
	ShapeVLAN:  {Saving: 2.9, Miss: 4.2},
	ShapeQinQ:  {Saving: 5.2, Miss: 2.9},
	ShapePPPoE: {Saving: 3.5, Miss: 4.6},
	ShapeMPLS:  {Saving: 3.8},
	ShapeIPIP:  {Saving: 3.1, Miss: 2.2},
	ShapeGRE:   {Saving: 2.1, Miss: 0.6},
}

// DefaultAutoConfig is the configuration auto mode uses when given zero fields.
func DefaultAutoConfig() AutoConfig {
	return AutoConfig{Window: 1 << 16, Hysteresis: 0.25, MinDwell: 4, MinSample: 64, ProbeEvery: 16, Costs: DefaultCosts}
}

// EnableAuto puts d's gates under auto mode, starting from the gates d has now.
func (d *Dissector) EnableAuto(cfg AutoConfig) {
	def := DefaultAutoConfig()
	if cfg.Window <= 0 {
		cfg.Window = def.Window
	}
	if cfg.Hysteresis <= 0 {
		cfg.Hysteresis = def.Hysteresis
	}
	if cfg.MinDwell <= 0 {
		cfg.MinDwell = def.MinDwell
	}
	if cfg.MinSample <= 0 {
		cfg.MinSample = def.MinSample
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = def.ProbeEvery
	}
	if cfg.Costs == ([NumShapes]Cost{}) {
		cfg.Costs = def.Costs
	}
	a := &Auto{cfg: cfg}
	for s := range NumShapes {
		a.state[s] = GateState{Open: d.gates.Has(s), BreakEven: cfg.Costs[s].BreakEven()}
		a.lastFast[s] = d.counters.Shape[s].Fast
		a.lastDeclined[s] = d.counters.Shape[s].Declined
	}
	d.auto = a
	d.divert |= divertTick
}

// AutoState returns auto mode's view of each gate, and false when auto mode is off.
func (d *Dissector) AutoState() ([NumShapes]GateState, bool) {
	if d.auto == nil {
		return [NumShapes]GateState{}, false
	}
	return d.auto.state, true
}

// tick counts a frame and decides at the end of a window.
func (a *Auto) tick(d *Dissector) {
	if a.n++; a.n >= a.cfg.Window {
		a.decide(d)
	}
}

// probe gives one in ProbeEvery slow-path frames of a closed gate's shape to its
// fast path, to estimate what the gate would accept.
func (a *Auto) probe(s Shape, frame []byte) {
	if a.probeDue(s) && runFast(s, &a.scratch, frame) {
		a.probeAccepted[s]++
	}
}

// probeDue counts a slow-path frame of a closed gate's shape and says whether
// it is one to give to the fast path; the caller counts the acceptance.
func (a *Auto) probeDue(s Shape) bool {
	if a.state[s].Open {
		return false
	}
	if a.probeSeen[s]++; a.probeSeen[s]%uint64(a.cfg.ProbeEvery) != 0 {
		return false
	}
	a.probeTried[s]++
	return true
}

func (a *Auto) decide(d *Dissector) {
	a.n = 0
	gates := d.gates
	for s := range NumShapes {
		if _, tunnel := s.Tunnel(); tunnel {
			continue // run only under a descent policy; no costs to decide by
		}
		c := d.counters.Shape[s]
		hits, misses := c.Fast-a.lastFast[s], c.Declined-a.lastDeclined[s]
		a.lastFast[s], a.lastDeclined[s] = c.Fast, c.Declined
		if !a.state[s].Open {
			hits, misses = a.probeAccepted[s], a.probeTried[s]-a.probeAccepted[s]
		}
		a.probeTried[s], a.probeAccepted[s] = 0, 0
		st := &a.state[s]
		if hits+misses < uint64(a.cfg.MinSample) {
			continue // too few frames of this class to judge; keep the gate as it is
		}
		st.Share = float64(hits) / float64(hits+misses)
		if a.dwell[s] > 0 {
			a.dwell[s]--
			continue
		}
		switch {
		case st.Open && (st.BreakEven >= 1 || st.Share < st.BreakEven*(1-a.cfg.Hysteresis)):
			st.Open = false
		case !st.Open && st.Share > st.BreakEven*(1+a.cfg.Hysteresis):
			st.Open = true
		default:
			continue
		}
		st.Flips++
		d.counters.Flips++
		a.dwell[s] = a.cfg.MinDwell
		if st.Open {
			gates = gates.With(s)
		} else {
			gates = gates.Without(s)
		}
	}
	d.SetGates(gates)
}

// String renders a gate state for the counters table.
func (g GateState) String() string {
	state := "closed"
	if g.Open {
		state = "open"
	}
	return fmt.Sprintf("%s p=%.3f p_be=%.3f flips=%d", state, g.Share, g.BreakEven, g.Flips)
}
