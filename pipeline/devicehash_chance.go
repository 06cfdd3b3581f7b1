package pipeline

import "math"

// The partition check compares two 32-bit hashes of each frame, and two
// different flows can have equal hashes by chance: among F flows about
// F²/2³³ pairs share a device hash, and as many share ours. Neither is a
// conflict. A pair sharing our hash is told apart by its keys, which differ
// (split). A pair sharing the device's hash has keys that differ too, since
// ours differs; the device's view of them is unknown, so the check takes
// such a pair for chance only while there are no more of them than chance
// gives F flows, except with probability chanceTail (merged). F is the
// count of our distinct hashes (fairness.Distinct).

// chanceTail is how unlikely it must be that chance alone gives more
// device hashes shared by two flows than the check allows.
const chanceTail = 1e-9

// maxChanceCollisions bounds the device hashes the check takes for chance.
const maxChanceCollisions = 64

// chanceCollision is a device hash dev that two flows share by chance, and
// our hashes of the two.
type chanceCollision struct {
	dev      uint32
	own, two uint32
}

// merged tells whether a frame is a chance collision when its device hash
// dev is an earlier frame's and its hash of ours, own, is not (the earlier
// frame's is first): the pair is already taken for one, or chance allows
// one more. A third flow on a device hash is never chance.
func (c *deviceCheck) merged(dev, first, own uint32) bool {
	for _, x := range c.chance {
		if x.dev == dev {
			return own == x.own || own == x.two
		}
	}
	if len(c.chance) >= chanceCollisions(c.flows.Estimate()) {
		return false
	}
	c.chance = append(c.chance, chanceCollision{dev: dev, own: first, two: own})
	return true
}

// chanceCollisions is the most device hashes that flows distinct flows
// share pairwise by chance, except with probability chanceTail: the upper
// tail of the Poisson distribution of equal pairs among them (mean
// flows(flows-1)/2³³), at most maxChanceCollisions.
func chanceCollisions(flows uint64) int {
	f := float64(flows)
	mean := f * (f - 1) / (1 << 33)
	term := math.Exp(-mean) // P(X = 0)
	tail := 1 - term        // P(X > 0)
	k := 0
	for tail > chanceTail && k < maxChanceCollisions {
		k++
		term *= mean / float64(k)
		tail -= term
	}
	return k
}
