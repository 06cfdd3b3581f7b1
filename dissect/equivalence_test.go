package dissect_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
)

// The equivalence suite: the fast paths' contract, enforced. For any frame, a fast
// path either writes exactly the keys and result of the slow path, or declines.

// gated is the Dissector with every gate open that checkContract runs every
// frame through, with its keys buffer, one for all frames as a worker keeps
// them: what one frame leaves behind (the keys, a resume point) must not
// change the next one's keys.
var gated = struct {
	sync.Mutex
	d, closed *dissect.Dissector
	keys      dissect.FlowKeys
}{d: dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates), closed: dissect.NewDissector(dissect.DefaultFlags, dissect.NoGates)}

// flaggedDissector is a Dissector with flags other than the default ones,
// every gate asked open, and its lock.
type flaggedDissector struct {
	sync.Mutex
	flags dissect.Flags
	d     *dissect.Dissector
}

// otherFlags are the flagged Dissectors checkContract runs every frame through.
var otherFlags = func() []*flaggedDissector {
	var ds []*flaggedDissector
	for _, f := range []dissect.Flags{0, dissect.FlagParse1stFrag | dissect.FlagStopAtEncap, dissect.FlagStopBeforeEncap} {
		ds = append(ds, &flaggedDissector{flags: f, d: dissect.NewDissector(f, dissect.AllGates)})
	}
	return ds
}()

// descentPolicies are the descent settings the suite runs every frame
// under besides none: each tunnel alone, and all of them, with the FOU
// table of the corpus's UDP tunnel families.
var descentPolicies = func() []dissect.Descent {
	var ps []dissect.Descent
	for t := range dissect.NumTunnels {
		ps = append(ps, corpusDescent(dissect.Tunnels(0).With(t)))
	}
	return append(ps, corpusDescent(dissect.AllTunnels))
}()

// corpusDescent is the policy entering ts with the corpus's FOU table.
func corpusDescent(ts dissect.Tunnels) dissect.Descent {
	d, err := dissect.NewDescent(ts,
		dissect.EncapPort{Port: corpus.GUEPort, GUE: true},
		dissect.EncapPort{Port: corpus.FOUPortIPIP, Inner: 4},
		dissect.EncapPort{Port: corpus.FOUPortIPv6, Inner: 41})
	if err != nil {
		panic(err)
	}
	return d
}

// descending are Dissectors with every gate open, then with every gate
// closed, under each of descentPolicies in turn, with their locks.
var descending = func() []*flaggedDissector {
	var ds []*flaggedDissector
	for _, p := range descentPolicies {
		for _, g := range []dissect.Gates{dissect.AllGates, dissect.NoGates} {
			d := dissect.NewDissector(dissect.DefaultFlags, g)
			d.SetDescent(p)
			ds = append(ds, &flaggedDissector{flags: dissect.DefaultFlags, d: d})
		}
	}
	return ds
}()

// checkDescents holds the Dissectors under each descent policy to the slow
// path under the same policy: a fast path that would end at the outer UDP
// header of a frame the policy descends into declines it, and a tunnel
// shape's fast path writes the descended keys. The counters move as the
// frame's class under the policy (ClassifyFrameDescend) says, and the
// descents they count are the slow path's.
func checkDescents(tb testing.TB, name string, frame []byte) {
	tb.Helper()
	for i, od := range descending {
		p := descentPolicies[i/2]
		var want, got dissect.FlowKeys
		ok, entry := dissect.DissectFrameEntry(&want, frame, dissect.DefaultFlags, p)
		var wantDescended dissect.TunnelCounts
		if entry.Count == 1 {
			wantDescended[entry.Tunnel]++
		}
		od.Lock()
		before := od.d.Counters()
		gotOK, path := od.d.DissectFrame(&got, frame)
		after := od.d.Counters()
		od.Unlock()
		descended := after.Descended
		for t := range descended {
			descended[t] -= before.Descended[t]
		}
		after.Descended = before.Descended
		s, classed := dissect.ClassifyFrameDescend(frame, p)
		what := fmt.Sprintf("%s (descend %v, gates %v)", name, p, od.d.Gates())
		checkCountedAs(tb, what, frame, s, classed, path, before, after)
		if entry.Count <= 1 && descended != wantDescended {
			tb.Errorf("%s: path %v counted descents %v, the slow path made %v", what, path, descended, wantDescended)
		}
		if gotOK != ok || got != want {
			tb.Errorf("%s: the Dissector (path %v) differs from the slow path on frame %x\n slow ok=%v keys %x\n dissector ok=%v keys %x",
				what, path, frame, ok, want[:], gotOK, got[:])
		}
	}
}

// tunnelOnly is the policy entering tunnel shape s's tunnel alone, the one
// FastDissect runs its fast path under; false for the other shapes.
func tunnelOnly(s dissect.Shape) (dissect.Descent, bool) {
	t, ok := s.Tunnel()
	if !ok {
		return dissect.Descent{}, false
	}
	p, err := dissect.NewDescent(dissect.Tunnels(0).With(t))
	if err != nil {
		panic(err)
	}
	return p, true
}

// checkContract runs every fast path over frame and compares each acceptance with
// the slow path. It returns the shapes that accepted.
func checkContract(tb testing.TB, name string, frame []byte) (accepted []dissect.Shape) {
	tb.Helper()
	var slow dissect.FlowKeys
	slowOK := dissect.DissectFrame(&slow, frame, dissect.DefaultFlags)
	var plain, tunnels int
	for s := range dissect.NumShapes {
		var fast dissect.FlowKeys
		if !dissect.FastDissect(s, &fast, frame) {
			continue
		}
		accepted = append(accepted, s)
		want, wantOK := slow, slowOK
		if p, ok := tunnelOnly(s); ok {
			// A tunnel shape's fast path runs under its tunnel's policy.
			tunnels++
			wantOK = dissect.DissectFrameDescend(&want, frame, dissect.DefaultFlags, p)
		} else {
			plain++
		}
		if !wantOK || fast != want {
			tb.Errorf("%s: fast path %v broke the contract on frame %x\n slow ok=%v keys %x\n fast ok=true  keys %x",
				name, s, frame, wantOK, want[:], fast[:])
		}
	}
	if plain > 1 || tunnels > 1 {
		tb.Errorf("%s: several fast paths (%v) accept frame %x; shapes must not overlap", name, accepted, frame)
	}
	// The Dissector with every gate open: a fast path, or the slow path
	// resumed past the outer headers a fast path declined after.
	var again dissect.FlowKeys
	if dissect.DissectFrame(&again, frame, dissect.DefaultFlags); again != slow {
		return accepted // random keys (TIPC keep-alives): nothing to compare
	}
	checkDescents(tb, name, frame)
	// And the one with every gate closed: the slow path, resumed past the
	// outer headers its dispatch read.
	gated.Lock()
	before, closedBefore := gated.d.Counters(), gated.closed.Counters()
	gatedOK, path := gated.d.DissectFrame(&gated.keys, frame)
	viaGates := gated.keys
	closedOK, closedPath := gated.closed.DissectFrame(&gated.keys, frame)
	viaClosed := gated.keys
	after, closedAfter := gated.d.Counters(), gated.closed.Counters()
	gated.Unlock()
	checkCounted(tb, name, frame, path, before, after)
	checkCounted(tb, name+" (gates closed)", frame, closedPath, closedBefore, closedAfter)
	// Dissectors with other flags take no fast path: their closed routes,
	// resumed past the outer headers, must match the slow path with the
	// same flags.
	for _, od := range otherFlags {
		var want, got dissect.FlowKeys
		wantOK := dissect.DissectFrame(&want, frame, od.flags)
		od.Lock()
		gotOK, _ := od.d.DissectFrame(&got, frame)
		od.Unlock()
		if gotOK != wantOK || got != want {
			tb.Errorf("%s: the Dissector with flags %#x differs from the slow path on frame %x\n slow ok=%v keys %x\n dissector ok=%v keys %x",
				name, od.flags, frame, wantOK, want[:], gotOK, got[:])
		}
	}
	if gatedOK != slowOK || viaGates != slow {
		tb.Errorf("%s: the Dissector (path %v) differs from the slow path on frame %x\n slow ok=%v keys %x\n gated ok=%v keys %x",
			name, path, frame, slowOK, slow[:], gatedOK, viaGates[:])
	}
	if closedOK != slowOK || viaClosed != slow || closedPath != dissect.PathSlow {
		tb.Errorf("%s: the Dissector with every gate closed (path %v) differs from the slow path on frame %x\n slow ok=%v keys %x\n closed ok=%v keys %x",
			name, closedPath, frame, slowOK, slow[:], closedOK, viaClosed[:])
	}
	return accepted
}

// checkCounted checks that one DissectFrame call on frame, which took path,
// moved the counters from before to after as the frame's class
// (ClassifyFrame) says: one run, fast or slow, of that class or of none, a
// fast one only on the class's own fast path, and a decline only with a slow
// run. The counters and auto mode read the class from the Dissector's
// dispatch; this pins it to ClassifyFrame on every frame the suite and the
// fuzzer try.
func checkCounted(tb testing.TB, name string, frame []byte, path dissect.Path, before, after dissect.Counters) {
	tb.Helper()
	s, ok := dissect.ClassifyFrame(frame)
	checkCountedAs(tb, name, frame, s, ok, path, before, after)
}

// checkCountedAs is checkCounted for a frame of class s (ok false: of no
// class).
func checkCountedAs(tb testing.TB, name string, frame []byte, s dissect.Shape, ok bool, path dissect.Path, before, after dissect.Counters) {
	tb.Helper()
	want := before
	switch ps, fast := path.Shape(); {
	case !ok:
		want.Other++
	case fast && ps == s:
		want.Shape[s].Fast++
	case fast:
		tb.Errorf("%s: frame %x of class %v taken by the %v fast path", name, frame, s, ps)
		return
	default:
		want.Shape[s].Slow++
		if after.Shape[s].Declined == before.Shape[s].Declined+1 {
			want.Shape[s].Declined++
		}
	}
	if after != want {
		tb.Errorf("%s: frame %x of class %v, %v (path %v): counters moved from %+v to %+v, want %+v",
			name, frame, s, ok, path, before, after, want)
	}
}

// interestingBytes are the values a single-byte mutation tries: the edges, and the
// values that switch the dissector's branches (IHL, ethertypes, protocols, GRE
// flags).
var interestingBytes = []byte{0x00, 0x01, 0x02, 0x04, 0x06, 0x08, 0x11, 0x20, 0x21, 0x29, 0x2c, 0x2f, 0x3a, 0x40, 0x44, 0x45, 0x46, 0x4f, 0x57, 0x60, 0x80, 0x81, 0x86, 0x88, 0x89, 0xa8, 0xb0, 0xdd, 0xfe, 0xff}

// TestFastPathEquivalence holds every fast path to the contract over each
// shape's sample frame, every single-byte mutation of it from interestingBytes,
// and every truncation of each of those.
func TestFastPathEquivalence(t *testing.T) {
	hits := map[dissect.Shape]int{}
	for s := range dissect.NumShapes {
		base := dissect.SampleFrame(s)
		want := []dissect.Shape{s}
		if _, tunnel := s.Tunnel(); tunnel {
			// Without the policy, eth_ip takes the frame, to its outer UDP header.
			want = []dissect.Shape{dissect.ShapeEthIP, s}
		}
		if got := checkContract(t, s.String(), base); !slices.Equal(got, want) {
			t.Errorf("%v: its sample frame was accepted by %v, want by %v", s, got, want)
		}
		for i := range base {
			for _, v := range interestingBytes {
				f := dissect.SampleFrame(s)
				if f[i] == v {
					continue
				}
				f[i] = v
				for _, a := range checkContract(t, fmt.Sprintf("%v byte %d = %#x", s, i, v), f) {
					hits[a]++
				}
			}
		}
		for n := range len(base) {
			checkContract(t, fmt.Sprintf("%v truncated to %d", s, n), base[:n])
		}
	}
	for s := range dissect.NumShapes {
		if hits[s] == 0 {
			t.Errorf("no mutated frame exercised the %v fast path", s)
		}
	}
}

// TestFastPathEquivalenceCorpus runs the contract over the oracle corpus (every
// shape the slow path knows, their mutation families and truncations) and over
// every truncation of every corpus frame.
func TestFastPathEquivalenceCorpus(t *testing.T) {
	frames := corpus.Build()
	accepted := 0
	for _, f := range frames {
		if len(checkContract(t, f.Name, f.Data)) > 0 {
			accepted++
		}
		for n := range len(f.Data) {
			checkContract(t, fmt.Sprintf("%s cut to %d", f.Name, n), f.Data[:n])
		}
	}
	t.Logf("%d corpus frames, %d taken by a fast path", len(frames), accepted)
	if accepted == 0 {
		t.Fatal("no corpus frame reached a fast path")
	}
}

// TestGRETEB checks which GRE frames carrying Ethernet (transparent Ethernet
// bridging) the gre fast path takes: an untagged inner frame of IP, not a
// tagged or non-IP one (the slow path stores the inner tag, or stops at ARP).
func TestGRETEB(t *testing.T) {
	want := map[string]bool{ // the corpus's families, unmutated
		"gre-k-teb/ipv4/tcp/base":     true,
		"gre-teb/ipv6/udp/base":       true,
		"gre-teb/gre-k/ipv4/tcp/base": true,
		"gre-teb/vlan/ipv4/tcp/base":  false,
		"gre-teb/arp/base":            false,
	}
	for _, f := range corpus.Build() {
		taken, ok := want[f.Name]
		if !ok {
			continue
		}
		delete(want, f.Name)
		accepted := checkContract(t, f.Name, f.Data)
		if got := slices.Contains(accepted, dissect.ShapeGRE); got != taken {
			t.Errorf("%s: taken by the gre fast path %v, want %v", f.Name, got, taken)
		}
	}
	for name := range want {
		t.Errorf("the corpus has no frame %q", name)
	}
}

// nestedChain builds Ethernet + IPv4 + depth tunnel layers (alternating IPIP and
// GRE with a key) + TCP with the given source port.
func nestedChain(depth int, sport uint16) []byte {
	ipv4 := func(proto byte) []byte {
		return []byte{0x45, 0, 0, 0, 0, 0, 0, 0, 64, proto, 0, 0, 198, 18, byte(depth), 1, 198, 19, 0, 2}
	}
	f := []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00}
	for i := range depth {
		if i%2 == 0 {
			f = append(f, ipv4(4)...) // next layer: IPv4 in IPv4
			continue
		}
		f = append(f, ipv4(47)...)
		f = append(f, 0x20, 0x00, 0x08, 0x00, 0, 0, 0, byte(i)) // GRE, key
	}
	f = append(f, ipv4(6)...)
	return binary.BigEndian.AppendUint16(f, sport) // the first half of a TCP header is enough
}

// TestNestedChainsAroundTheBound checks that the tunnel fast paths and the slow
// path agree on chains around MaxReDispatch, and that past it the fast path has
// declined (the slow path decides the bound).
func TestNestedChainsAroundTheBound(t *testing.T) {
	for depth := 1; depth <= dissect.MaxReDispatch+3; depth++ {
		f := append(nestedChain(depth, 1025), 0, 80)
		accepted := checkContract(t, fmt.Sprintf("depth %d", depth), f)
		if depth < dissect.MaxReDispatch && len(accepted) != 1 {
			t.Errorf("depth %d: accepted by %v, want the ipip fast path", depth, accepted)
		}
		if depth >= dissect.MaxReDispatch && len(accepted) != 0 {
			t.Errorf("depth %d: accepted by %v past the bound, want a decline", depth, accepted)
		}
	}
}

// TestGatesOff checks through the counters that a closed gate's fast path never
// runs, and that the keys are the same whichever gates are open.
func TestGatesOff(t *testing.T) {
	for s := range dissect.NumShapes {
		d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates.Without(s))
		p, _ := tunnelOnly(s) // a tunnel shape's frames are of its class under its policy
		d.SetDescent(p)
		var k, want dissect.FlowKeys
		f := dissect.SampleFrame(s)
		ok, path := d.DissectFrame(&k, f)
		wantOK := dissect.DissectFrameDescend(&want, f, dissect.DefaultFlags, p)
		c := d.Counters()
		if path != dissect.PathSlow || c.Shape[s].Fast != 0 || c.Shape[s].Declined != 0 || c.Shape[s].Slow != 1 {
			t.Errorf("gate %v closed: path %v, counters %+v; want the slow path, counted as slow", s, path, c.Shape[s])
		}
		if ok != wantOK || k != want {
			t.Errorf("gate %v closed: keys differ from the slow path", s)
		}
		d.SetGates(dissect.NoGates.With(s))
		if _, path := d.DissectFrame(&k, f); path != dissect.FastPath(s) {
			t.Errorf("gate %v open: path %v, want %v", s, path, dissect.FastPath(s))
		}
	}
}

func TestIneligibleFlagsTakeTheSlowPath(t *testing.T) {
	for _, flags := range []dissect.Flags{0, dissect.FlagParse1stFrag | dissect.FlagStopAtFlowLabel, dissect.FlagStopAtEncap} {
		d := dissect.NewDissector(flags, dissect.AllGates)
		for s := range dissect.NumShapes {
			var k dissect.FlowKeys
			if _, path := d.DissectFrame(&k, dissect.SampleFrame(s)); path != dissect.PathSlow {
				t.Errorf("flags %#x, %v: path %v, want slow", flags, s, path)
			}
		}
		if c := d.Counters(); c.Shape[dissect.ShapeEthIP].Declined != 0 {
			t.Errorf("flags %#x: a fast path was attempted: %+v", flags, c)
		}
	}
}

// mixStream is n frames of shape s's class: a share are its sample frame, which
// its fast path accepts, and the rest a near miss it declines (all samples for
// a shape that declines none of its class).
func mixStream(rng *rand.Rand, s dissect.Shape, share float64, n int) [][]byte {
	hit := dissect.SampleFrame(s)
	miss, ok := dissect.NearMissFrame(s)
	if !ok {
		miss = hit
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = miss
		if rng.Float64() < share {
			out[i] = hit
		}
	}
	return out
}

// TestAutoGates checks that auto mode opens a gate where its shape is common in
// its class, closes it where it is rare, and never changes a key byte while
// flipping.
func TestAutoGates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Equal costs for every shape (p_be = 1/11): the mechanism, not the
	// machine's figures, is under test here.
	var costs [dissect.NumShapes]dissect.Cost
	for s := range costs {
		costs[s] = dissect.Cost{Saving: 10, Miss: 1}
	}
	cfg := dissect.AutoConfig{Window: 1000, MinDwell: 2, MinSample: 32, Costs: costs}
	for s := range dissect.NumShapes {
		if _, ok := dissect.NearMissFrame(s); !ok {
			continue // no frame of its class is declined: its share is always 1
		}
		if _, tunnel := s.Tunnel(); tunnel {
			continue // auto mode leaves the tunnel gates alone (TestAutoLeavesTunnelGates)
		}
		d := dissect.NewDissector(dissect.DefaultFlags, dissect.NoGates)
		d.EnableAuto(cfg)
		phases := []struct {
			share float64
			open  bool
		}{{0.9, true}, {0.001, false}, {0.5, true}}
		for _, ph := range phases {
			for _, f := range mixStream(rng, s, ph.share, 20000) {
				var k, want dissect.FlowKeys
				ok, _ := d.DissectFrame(&k, f)
				if wantOK := dissect.DissectFrame(&want, f, dissect.DefaultFlags); ok != wantOK || k != want {
					t.Fatalf("%v: auto mode changed the keys of %x", s, f)
				}
			}
			st, _ := d.AutoState()
			if d.Gates().Has(s) != ph.open || st[s].Open != ph.open {
				t.Errorf("%v at share %.3f: gate open=%v, want %v (%v)", s, ph.share, d.Gates().Has(s), ph.open, st[s])
			}
		}
		if c := d.Counters(); c.Flips < 3 {
			t.Errorf("%v: %d flips recorded, want at least 3", s, c.Flips)
		}
	}
}

// TestAutoDefaultCosts checks the decisions the measured costs lead to. Where
// a decline costs more than the closed gate's slow path (C > 0), an open gate
// closes on traffic of its class that its fast path mostly declines; where it
// costs nothing (eth_ip under auto mode), the gate stays open; a closed gate
// opens where its shape is common. MPLS's fast path covers its whole class
// (C = 0), so its gate opens at any share.
func TestAutoDefaultCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cfg := dissect.AutoConfig{Window: 2000, MinDwell: 1, MinSample: 32}
	type tc struct {
		s           dissect.Shape
		share       float64
		start, open bool // the gate's state before and after
	}
	tests := []tc{{dissect.ShapeMPLS, 0.9, false, true}}
	for s := range dissect.NumShapes {
		if _, tunnel := s.Tunnel(); tunnel {
			continue
		}
		if _, ok := dissect.NearMissFrame(s); ok {
			// A gate whose declines cost nothing stays open on traffic
			// its fast path mostly declines; any other closes.
			costly := dissect.DefaultCosts[s].Miss > 0
			tests = append(tests, tc{s, 0.95, false, true}, tc{s, 0.01, true, !costly})
		}
	}
	for _, tc := range tests {
		d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates.Without(tc.s))
		if tc.start {
			d.SetGates(dissect.AllGates)
		}
		d.EnableAuto(cfg)
		var k dissect.FlowKeys
		for _, f := range mixStream(rng, tc.s, tc.share, 40000) {
			d.DissectFrame(&k, f)
		}
		if d.Gates().Has(tc.s) != tc.open {
			st, _ := d.AutoState()
			t.Errorf("%v at share %.3f: open=%v, want %v (%v; DefaultCosts %+v)", tc.s, tc.share, d.Gates().Has(tc.s), tc.open, st[tc.s], dissect.DefaultCosts[tc.s])
		}
	}
}

// TestAutoLeavesTunnelGates: auto mode has no costs for the tunnel shapes,
// whose fast paths run only under a descent policy, and keeps their gates as
// they were set, open or closed, whatever share of their class they take.
func TestAutoLeavesTunnelGates(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range []dissect.Shape{dissect.ShapeVXLAN, dissect.ShapeGTPU} {
		p, _ := tunnelOnly(s)
		for _, start := range []dissect.Gates{dissect.AllGates, dissect.AllGates.Without(s)} {
			d := dissect.NewDissector(dissect.DefaultFlags, start)
			d.SetDescent(p)
			d.EnableAuto(dissect.AutoConfig{Window: 1000, MinDwell: 1, MinSample: 32})
			for _, share := range []float64{0.01, 0.99} {
				for _, f := range mixStream(rng, s, share, 5000) {
					var k, want dissect.FlowKeys
					ok, _ := d.DissectFrame(&k, f)
					if wantOK := dissect.DissectFrameDescend(&want, f, dissect.DefaultFlags, p); ok != wantOK || k != want {
						t.Fatalf("%v: auto mode changed the keys of %x", s, f)
					}
				}
			}
			if d.Gates().Has(s) != start.Has(s) {
				t.Errorf("%v: gate open=%v after auto mode, set %v", s, d.Gates().Has(s), start.Has(s))
			}
			if c := d.Counters(); c.Shape[s].Fast+c.Shape[s].Slow != 10000 {
				t.Errorf("%v: %d frames counted in its class, want 10000", s, c.Shape[s].Fast+c.Shape[s].Slow)
			}
		}
	}
}

func TestParseGates(t *testing.T) {
	tests := []struct {
		in      string
		want    dissect.Gates
		wantErr bool
	}{
		{"all", dissect.AllGates, false},
		{"none", dissect.NoGates, false},
		{"eth_ip,vlan", dissect.NoGates.With(dissect.ShapeEthIP).With(dissect.ShapeVLAN), false},
		{"gre", dissect.NoGates.With(dissect.ShapeGRE), false},
		{"eth_ip,bogus", 0, true},
	}
	for _, tc := range tests {
		got, err := dissect.ParseGates(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseGates(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err == nil {
			if back, _ := dissect.ParseGates(got.String()); back != got {
				t.Errorf("%q does not round-trip: %q", tc.in, got.String())
			}
		}
	}
}

func TestDissectorAllocations(t *testing.T) {
	d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
	d.EnableAuto(dissect.AutoConfig{Window: 100})
	frames := make([][]byte, dissect.NumShapes)
	for s := range dissect.NumShapes {
		frames[s] = dissect.SampleFrame(s)
	}
	var k dissect.FlowKeys
	if n := testing.AllocsPerRun(1000, func() {
		for _, f := range frames {
			d.DissectFrame(&k, f)
			d.DissectFrameTagged(&k, f, metadataTags[1].tag)
			dissect.DissectFrameTagged(&k, f, metadataTags[2].tag, dissect.DefaultFlags)
		}
	}); n != 0 {
		t.Errorf("Dissector allocates %v times per round (untagged and tagged frames), want 0", n)
	}
}

// FuzzFastSlow is the differential fuzzer of the contract: on arbitrary input,
// every fast path that accepts must produce the slow path's keys and result,
// and so must the Dissector for the frame received with each metadata VLAN
// tag (corpus.MetadataTags).
func FuzzFastSlow(f *testing.F) {
	for s := range dissect.NumShapes {
		f.Add(dissect.SampleFrame(s))
	}
	for _, fr := range corpus.Bases() {
		f.Add(fr.Data)
	}
	f.Add(nestedChain(dissect.MaxReDispatch, 1))
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkContract(t, "fuzz", frame)
		for _, mt := range metadataTags[1:] {
			checkTaggedContract(t, "fuzz", frame, mt.tag)
		}
	})
}
