package pktgen

import (
	"errors"
	"math"
	"math/big"
	"testing"
)

// FuzzProfile parses a YAML profile and builds its schedule. A profile
// ParseProfile takes is valid, and NewSchedule either refuses it with
// ErrInvalidProfile or builds a cycle of exactly its length whose shapes get
// their frames by largest remainder, checked against exact rational
// arithmetic: each within one frame of its exact share, all adding up to the
// cycle; with a hot set, every segment's split over the flows is checked the
// same way (checkHotSet). Profiles are cut to 2^12 frames and flows, and hot
// sets to 2^16 phases × flows, before the build, so that an input costs
// milliseconds (the bounds themselves are Validate's).
func FuzzProfile(f *testing.F) {
	f.Add([]byte(campusYAML))
	f.Add([]byte("flows: 8\ncycle: 64\nmix: {ipv4/tcp: 1e308, ipv6/udp: 1e308}\nframe_sizes: {64: 1e308, 128: 1e308}\n"))
	f.Add([]byte("flows: 3\ncycle: 5\nmix: {vlan/ipv4/tcp: 3, ipv6+frag/udp: 1e-300}\nflow_sizes: {dist: elephants, flows: 0.5, share: 0.9}\nframe_sizes: 60-3456\nreply_share: 1\n"))
	f.Add([]byte("flows: 8\ncycle: -1\nmix: {ipv4/tcp: 1}\n---\nflows: 9\n"))
	f.Add([]byte("flows: 64\ncycle: 4000\nmix: {ipv4/tcp: 3, ipv6/udp: 1}\nflow_sizes: {dist: zipf, exponent: 1}\nhot_set: {flows: 16, share: 0.5, phases: 8, step: 4}\n"))
	f.Add([]byte("flows: 5\ncycle: 7\nmix: {ipv4/tcp: 1, ipv6/tcp: 1}\nflow_sizes: {dist: zipf, exponent: 1e300}\nhot_set: {flows: 5, share: 1e-300, phases: 7, step: 5}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data, "fuzz.yaml")
		if err != nil {
			if !errors.Is(err, ErrInvalidProfile) {
				t.Fatalf("error %v does not wrap ErrInvalidProfile", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParseProfile took a profile Validate refuses: %v", err)
		}
		if p.Flows > 1<<12 || p.cycle() > 1<<12 || p.HotSet.Phases*p.Flows > 1<<16 {
			return
		}
		s, err := NewSchedule(p, MACs{Dst: testDst})
		if err != nil {
			if !errors.Is(err, ErrInvalidProfile) {
				t.Fatalf("NewSchedule: %v does not wrap ErrInvalidProfile", err)
			}
			return
		}
		if s.Len() != p.cycle() {
			t.Fatalf("cycle of %d frames, want %d", s.Len(), p.cycle())
		}
		weights := make([]float64, len(p.Mix))
		for i, sw := range p.Mix {
			weights[i] = sw.Weight
		}
		frames := make([]int, len(p.Mix))
		for i, c := range s.Mix() {
			frames[i] = c.Frames
		}
		checkLargestRemainder(t, s.Len(), weights, frames)
		if p.HotSet.Phases > 0 {
			checkHotSet(t, s)
		}
		for _, fr := range s.Frames() {
			if len(fr) < MinFrameLen || len(fr) > MaxFrameLen {
				t.Fatalf("a frame of %d bytes", len(fr))
			}
		}
	})
}

// checkLargestRemainder checks a split of total by weights against the exact
// quotas total·w/Σw: every part is the quota's floor or one more, and the
// parts add up to total.
func checkLargestRemainder(t *testing.T, total int, weights []float64, got []int) {
	t.Helper()
	sum := new(big.Float).SetPrec(2048)
	for _, w := range weights {
		sum.Add(sum, big.NewFloat(w))
	}
	var n int
	for i, w := range weights {
		q := new(big.Float).SetPrec(2048).Mul(big.NewFloat(float64(total)), big.NewFloat(w))
		q.Quo(q, sum)
		exact, _ := q.Float64()
		// The float64 scaling rounds: allow the quota's floor or ceiling,
		// and one more either way only where the quota is within 1e-9 of
		// an integer.
		lo, hi := math.Floor(exact-1e-9), math.Ceil(exact+1e-9)
		if float64(got[i]) < lo || float64(got[i]) > hi {
			t.Fatalf("part %d: %d of %d, exact quota %g (weights %v)", i, got[i], total, exact, weights)
		}
		n += got[i]
	}
	if n != total {
		t.Fatalf("parts add up to %d, want %d (weights %v)", n, total, weights)
	}
}

// FuzzLargestRemainder splits totals by two to four weights, however large
// or small, and checks the split against exact arithmetic.
func FuzzLargestRemainder(f *testing.F) {
	f.Add(uint16(64), 1e308, 1e308, 0.0, 0.0)
	f.Add(uint16(5), 3.0, 1e-300, 7.0, 0.0)
	f.Add(uint16(4096), 45.0, 15.0, 10.0, 1.0)
	f.Fuzz(func(t *testing.T, total uint16, a, b, c, d float64) {
		var weights []float64
		for _, w := range []float64{a, b, c, d} {
			if w > 0 && !math.IsInf(w, 0) {
				weights = append(weights, w)
			}
		}
		if len(weights) == 0 {
			return
		}
		checkLargestRemainder(t, int(total), weights, largestRemainder(int(total), weights))
	})
}
