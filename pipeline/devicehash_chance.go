package pipeline

import (
	"math"
	"math/bits"
)

// The partition check compares two 32-bit hashes of each frame, and two
// different flows can have equal hashes by chance: among F flows about
// F²/2³³ pairs share a device hash, and as many share ours. Neither is a
// conflict. A pair sharing our hash is told apart by its keys, which differ
// (split). A pair sharing the device's hash has keys that differ too, since
// ours differs; the device's view of them is unknown, so the check takes
// such a pair for chance only while there are no more of them than chance
// gives F flows, except with probability chanceTail (merged).

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
	if len(c.chance) >= chanceCollisions(c.flows.estimate()) {
		return false
	}
	c.chance = append(c.chance, chanceCollision{dev: dev, own: first, two: own})
	return true
}

// chanceCollisions is the most device hashes that flows distinct flows
// share pairwise by chance, except with probability chanceTail: the upper
// tail of the Poisson distribution of equal pairs among them (mean
// flows(flows-1)/2³³), at most maxChanceCollisions.
func chanceCollisions(flows float64) int {
	if math.IsInf(flows, 1) {
		return maxChanceCollisions
	}
	mean := flows * (flows - 1) / (1 << 33)
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

// flowCountBits is the bitmap of a flowCount: it counts up to a few million
// flows within a few percent.
const flowCountBits = 1 << 20

// flowCount estimates how many distinct hashes it was given by linear
// counting: one bit per hash prefix, and the share of bits left clear.
type flowCount struct {
	bits []uint64
	set  int
}

// add counts hash h.
func (f *flowCount) add(h uint32) {
	i := h >> (32 - bits.Len(flowCountBits-1))
	w, b := &f.bits[i/64], uint64(1)<<(i%64)
	if *w&b == 0 {
		*w |= b
		f.set++
	}
}

// estimate is the number of distinct hashes added, or +Inf when the bitmap
// is full.
func (f *flowCount) estimate() float64 {
	unset := flowCountBits - f.set
	if unset == 0 {
		return math.Inf(1)
	}
	return -flowCountBits * math.Log(float64(unset)/flowCountBits)
}
