package pktgen

import (
	"math/rand/v2"
	"slices"
)

// hotSetSequences is, per shape, the sequence of its frames' flows under p's
// hot set: segment by segment, the shape's frames in the segment split over
// its flows by one largest remainder (hotSetWeights) and shuffled within the
// segment. order is the cycle's shapes by position, frames and flows the
// frames and flows of each shape.
func hotSetSequences(p *Profile, order, frames, flows []int, rng *rand.Rand) [][]uint32 {
	h := p.HotSet
	hot := hotFlows(h.Flows, flows)
	seqs := make([][]uint32, len(flows))
	sizes := make([][]float64, len(flows))
	for s := range flows {
		seqs[s] = make([]uint32, 0, frames[s])
		sizes[s] = p.FlowSizes.shares(flows[s])
	}
	w := make([]float64, slices.Max(flows))
	inSegment := make([]int, len(flows))
	for i := range h.Phases {
		clear(inSegment)
		for _, s := range order[i*len(order)/h.Phases : (i+1)*len(order)/h.Phases] {
			inSegment[s]++
		}
		var base uint32 // the shape's first global flow number
		for s, n := range flows {
			if inSegment[s] > 0 {
				weights := hotSetWeights(w[:n], sizes[s], h, hot[s], i)
				start := len(seqs[s])
				for k, c := range largestRemainder(inSegment[s], weights) {
					for range c {
						seqs[s] = append(seqs[s], base+uint32(k))
					}
				}
				seg := seqs[s][start:]
				rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			}
			base += uint32(n)
		}
	}
	return seqs
}

// hotFlows splits a hot set of total flows over shapes in proportion to
// their flows; no shape gets more than it has.
func hotFlows(total int, flows []int) []int {
	weights := make([]float64, len(flows))
	for s, n := range flows {
		weights[s] = float64(n)
	}
	hot := largestRemainder(total, weights)
	for s := range hot {
		hot[s] = min(hot[s], flows[s])
	}
	return hot
}

// hotSetWeights writes to w (one per flow of a shape) each flow's weight in
// segment i, for a shape with hot of the hot set's flows and flow sizes
// sizes: the hot flows share h.Share by their place in the window, the
// others the rest in proportion to their sizes. It returns w.
func hotSetWeights(w, sizes []float64, h HotSet, hot, i int) []float64 {
	copy(w, sizes)
	if hot == 0 {
		return w
	}
	n := len(w)
	// The shape's window moves on by Step·hot/h.Flows flows per segment,
	// computed without overflow: i·Step < 2^44 and hot <= h.Flows.
	a := i * h.Step
	start := (a/h.Flows*hot + a%h.Flows*hot/h.Flows) % n
	var tent float64
	for j := range hot {
		w[(start+j)%n] = 0
		tent += float64(min(j+1, hot-j))
	}
	var cold float64
	for _, x := range w {
		cold += x
	}
	for k, x := range w {
		if cold > 0 {
			// x/cold first: (1-Share)/cold may overflow when cold is tiny.
			w[k] = x / cold * (1 - h.Share)
		}
	}
	// The window's first flow has been hot longest and leaves next; its
	// last has just come in.
	for j := range hot {
		w[(start+j)%n] = h.Share * float64(min(j+1, hot-j)) / tent
	}
	return w
}
