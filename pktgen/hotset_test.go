package pktgen

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// checkHotSet checks each segment of a schedule with a hot set against
// exact arithmetic: per shape, each flow's frames in the segment are the
// floor or ceiling of its exact quota of the shape's frames there (the
// largest-remainder split), where the hot window's flows share Share by
// weights 1, 2, …, 2, 1 from the flow that leaves next, and the other flows
// the rest by their sizes. The window is computed here in closed form:
// shape s's starts at ⌊i·Step·hot_s/Flows⌋ modulo its flows.
func checkHotSet(t *testing.T, sc *Schedule) {
	t.Helper()
	p := sc.Profile()
	h := p.HotSet
	mixWeights := make([]float64, len(p.Mix))
	for s, sw := range p.Mix {
		mixWeights[s] = sw.Weight
	}
	flows := largestRemainder(p.Flows-len(p.Mix), mixWeights)
	base := make([]uint32, len(flows))
	for s := range flows {
		flows[s]++
		if s > 0 {
			base[s] = base[s-1] + uint32(flows[s-1])
		}
	}
	hot := hotFlows(h.Flows, flows)
	if n := sumInts(hot); n > h.Flows || (n < h.Flows && !slices.Equal(hot, flows)) {
		t.Fatalf("hot flows per shape %v of %d, shapes' flows %v", hot, h.Flows, flows)
	}
	L := sc.Len()
	for i := range h.Phases {
		counts := make([][]int, len(flows))
		for s := range counts {
			counts[s] = make([]int, flows[s])
		}
		for _, k := range sc.table.Order[i*L/h.Phases : (i+1)*L/h.Phases] {
			s := sc.frameShape[k]
			counts[s][sc.frameFlow[k]-base[s]]++
		}
		for s, n := range flows {
			sizes := p.FlowSizes.shares(n)
			want := slices.Clone(sizes)
			if hot[s] > 0 {
				start := i * h.Step * hot[s] / h.Flows % n
				inWindow := make([]int, n) // offset in the window + 1, or 0
				for j := range hot[s] {
					inWindow[(start+j)%n] = j + 1
				}
				var cold, tent float64
				for k, j := range inWindow {
					if j == 0 {
						cold += sizes[k]
					} else {
						tent += float64(min(j, hot[s]-j+1))
					}
				}
				for k, j := range inWindow {
					switch {
					case j > 0:
						want[k] = h.Share * float64(min(j, hot[s]-j+1)) / tent
					case cold > 0:
						want[k] = (1 - h.Share) * sizes[k] / cold
					default:
						want[k] = 0
					}
				}
			}
			checkLargestRemainder(t, sumInts(counts[s]), want, counts[s])
		}
	}
}

func sumInts(xs []int) int {
	var n int
	for _, x := range xs {
		n += x
	}
	return n
}

// TestHotSetSegments checks the split of every segment on hand-picked hot
// sets: two shapes, Zipf and elephant flow sizes (so that the other flows'
// weights are uneven), a step wider than the window, a hot set that stays,
// one that covers every flow, and segments that do not divide the cycle.
func TestHotSetSegments(t *testing.T) {
	tests := []struct {
		name string
		p    Profile
	}{
		{"two shapes zipf", Profile{Flows: 64, Cycle: 8000, Mix: mix("ipv4/tcp", 3, "ipv6/udp", 1),
			FlowSizes: FlowSizes{Dist: Zipf, Exponent: 1}, HotSet: HotSet{Flows: 8, Share: 0.4, Phases: 8, Step: 2}}},
		{"elephants step past the window", Profile{Flows: 50, Cycle: 7001, Mix: mix("ipv4/udp", 1),
			FlowSizes: FlowSizes{Dist: Elephants, ElephantFlows: 0.1, ElephantShare: 0.5}, HotSet: HotSet{Flows: 5, Share: 0.3, Phases: 7, Step: 9}}},
		{"static hot set", Profile{Flows: 20, Cycle: 999, Mix: mix("ipv4/tcp", 1),
			HotSet: HotSet{Flows: 4, Share: 0.9, Phases: 3, Step: 0}}},
		{"every flow hot", Profile{Flows: 6, Cycle: 600, Mix: mix("ipv4/tcp", 1, "ipv6/tcp", 1),
			HotSet: HotSet{Flows: 6, Share: 0.5, Phases: 4, Step: 1}}},
		{"one hot flow, more shapes", Profile{Flows: 30, Cycle: 3000, Mix: mix("ipv4/tcp", 1, "ipv6/tcp", 1, "ipv4/udp", 1),
			HotSet: HotSet{Flows: 1, Share: 0.5, Phases: 5, Step: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.Name, tt.p.FrameSizes = tt.name, FixedSize(64)
			checkHotSet(t, newSchedule(t, tt.p))
		})
	}
}

// TestHotSetProfile: in each eighth of the built-in hotset profile's cycle,
// 16 flows carry half the frames, and from one eighth to the next 4 of them
// are replaced (3 of the IPv4 shape's 12, 1 of the IPv6 shape's 4).
func TestHotSetProfile(t *testing.T) {
	s := builtinSchedule(t, "hotset")
	p := s.Profile()
	checkHotSet(t, s)
	seg := s.Len() / p.HotSet.Phases
	var prev map[uint32]bool
	seen := map[uint32]bool{}
	for i := range p.HotSet.Phases {
		count := map[uint32]int{}
		for _, k := range s.table.Order[i*seg : (i+1)*seg] {
			count[s.frameFlow[k]]++
		}
		// A cold flow gets about seg/2/4080 = 46 frames; the coolest hot
		// flow (weight 1 of 42) over 3000.
		hot := map[uint32]bool{}
		var hotFrames int
		for f, n := range count {
			if n > 1000 {
				hot[f] = true
				hotFrames += n
			}
		}
		// Each flow's count is its quota's floor or ceiling: the hot flows
		// together are within one frame each of half.
		if len(hot) != 16 || math.Abs(float64(hotFrames)-float64(seg)/2) >= 16 {
			t.Errorf("phase %d: %d hot flows carry %d of %d frames, want 16 flows and half ± 16", i, len(hot), hotFrames, seg)
		}
		if prev != nil {
			var stayed int
			for f := range hot {
				if prev[f] {
					stayed++
				}
			}
			if stayed != 12 {
				t.Errorf("phase %d: %d hot flows stayed from the phase before, want 12", i, stayed)
			}
		}
		prev = hot
		for f := range hot {
			seen[f] = true
		}
	}
	if want := 16 + 4*(p.HotSet.Phases-1); len(seen) != want {
		t.Errorf("%d flows were hot in a cycle, want %d", len(seen), want)
	}
}

// TestHotSetDeterministic: the same profile and seed give the same cycle,
// another seed another order of the same segments' counts.
func TestHotSetDeterministic(t *testing.T) {
	p := Profile{Name: "d", Flows: 40, Cycle: 4000, Mix: mix("ipv4/tcp", 1, "ipv6/udp", 1), FrameSizes: FixedSize(64), Seed: 3,
		HotSet: HotSet{Flows: 6, Share: 0.5, Phases: 4, Step: 2}}
	a, b := newSchedule(t, p), newSchedule(t, p)
	if !slices.Equal(a.table.Order, b.table.Order) || !slices.Equal(a.table.Heads, b.table.Heads) {
		t.Error("the same profile and seed built twice give different cycles")
	}
	p.Seed = 4
	c := newSchedule(t, p)
	if slices.Equal(a.table.Order, c.table.Order) {
		t.Error("seeds 3 and 4 give the same order")
	}
	checkHotSet(t, c)
}

// TestHotSetBounds: every bound of a hot set is enforced, by Validate and by
// ParseProfile, with an error that names the field and the bound.
func TestHotSetBounds(t *testing.T) {
	ok := HotSet{Flows: 4, Share: 0.5, Phases: 8, Step: 1}
	tests := []struct {
		name string
		edit func(p *Profile)
		want string
	}{
		{"no phases", func(p *Profile) { p.HotSet.Phases = 0 }, "hot_set: 0 phases, want 1 to 100"},
		{"phases past the cycle", func(p *Profile) { p.HotSet.Phases = 101 }, "hot_set: 101 phases, want 1 to 100"},
		{"phases times flows", func(p *Profile) { p.Flows, p.Cycle, p.HotSet.Phases = MaxFlows/2, MaxCycle, 3 },
			"hot_set: 3 phases of 2097152 flows each, want phases × flows <= 4194304"},
		{"no flows", func(p *Profile) { p.HotSet.Flows = 0 }, "hot_set: 0 flows, want 1 to 10"},
		{"more flows than the profile", func(p *Profile) { p.HotSet.Flows = 11 }, "hot_set: 11 flows, want 1 to 10"},
		{"share 0", func(p *Profile) { p.HotSet.Share = 0 }, "hot_set: share 0, want a number strictly between 0 and 1"},
		{"share 1", func(p *Profile) { p.HotSet.Share = 1 }, "hot_set: share 1, want"},
		{"share NaN", func(p *Profile) { p.HotSet.Share = math.NaN() }, "hot_set: share NaN, want"},
		{"negative step", func(p *Profile) { p.HotSet.Step = -1 }, "hot_set: step -1, want 0 to 10"},
		{"step past the flows", func(p *Profile) { p.HotSet.Step = 11 }, "hot_set: step 11, want 0 to 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Profile{Name: "b", Flows: 10, Cycle: 100, Mix: mix("ipv4/tcp", 1), FrameSizes: FixedSize(64), HotSet: ok}
			if err := p.Validate(); err != nil {
				t.Fatalf("the base profile: %v", err)
			}
			tt.edit(&p)
			err := p.Validate()
			if !errors.Is(err, ErrInvalidProfile) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want ErrInvalidProfile with %q", err, tt.want)
			}
		})
	}
	atBound := Profile{Name: "b", Flows: MaxFlows / 2, Cycle: MaxCycle, Mix: mix("ipv4/tcp", 1), FrameSizes: FixedSize(64),
		HotSet: HotSet{Flows: MaxFlows / 2, Share: 0.5, Phases: 2, Step: MaxFlows / 2}}
	if err := atBound.Validate(); err != nil {
		t.Errorf("a hot set at every bound: %v", err)
	}
}

// TestParseHotSet reads hot_set from YAML and refuses what it cannot read
// exactly, with the line at fault.
func TestParseHotSet(t *testing.T) {
	base := "flows: 64\nmix: {ipv4/tcp: 1}\n"
	p, err := ParseProfile([]byte(base+"hot_set: {flows: 16, share: 0.5, phases: 8, step: 4}\n"), "h")
	if err != nil {
		t.Fatal(err)
	}
	if want := (HotSet{Flows: 16, Share: 0.5, Phases: 8, Step: 4}); p.HotSet != want {
		t.Errorf("hot set %v, want %v", p.HotSet, want)
	}
	if p, err := ParseProfile([]byte(base), "h"); err != nil || p.HotSet != (HotSet{}) {
		t.Errorf("no hot_set: %v, %v; want no hot set", p.HotSet, err)
	}
	for _, tt := range []struct{ name, yaml, want string }{
		{"not a mapping", "hot_set: 3\n", "line 3: hot_set: want a mapping"},
		{"unknown field", "hot_set: {flows: 16, share: 0.5, phases: 8, stride: 4}\n", `line 3: hot_set: unknown field "stride" (want flows, share, phases, step)`},
		{"fractional phases", "hot_set: {flows: 16, share: 0.5, phases: 8.5}\n", `line 3: hot_set: phases "8.5", want a whole number`},
		{"share a word", "hot_set: {flows: 16, share: half, phases: 8}\n", `line 3: hot_set: share "half", want a number`},
		{"a list value", "hot_set:\n  flows: [16]\n  share: 0.5\n  phases: 8\n", "line 4: hot_set: flows: want a number"},
		{"twice", "hot_set: {flows: 16, flows: 8, share: 0.5, phases: 8}\n", "line 3: hot_set: flows given twice"},
		{"empty", "hot_set: {}\n", "line 3: hot_set: 0 phases, want 1 or more"},
		{"no share", "hot_set: {flows: 16, phases: 8}\n", "hot_set: share 0, want a number strictly between 0 and 1"},
		{"too many flows", "hot_set: {flows: 65, share: 0.5, phases: 8}\n", "hot_set: 65 flows, want 1 to 64"},
	} {
		_, err := ParseProfile([]byte(base+tt.yaml), "h")
		if !errors.Is(err, ErrInvalidProfile) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want ErrInvalidProfile with %q", tt.name, err, tt.want)
		}
	}
}
