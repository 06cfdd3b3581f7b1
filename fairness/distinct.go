package fairness

import (
	"math"
	"math/bits"
)

// distinctP is log2 of Distinct's registers: 4096 one-byte registers give a
// standard error of 1.04/sqrt(4096) = 1.6% in 4 KiB.
const distinctP = 12

// distinctExact is how many distinct values Distinct counts exactly, in a
// set of 2 KiB, before it relies on its HyperLogLog: a report of a handful of
// flows must not say 7 for 8 because two hashes share a register.
const distinctExact = 256

// Distinct counts the distinct 32-bit values (flow hashes) added, in fixed
// memory: exactly up to distinctExact values, then by a HyperLogLog
// (Flajolet et al., 2007) with linear counting for small counts (Heule et
// al., 2013). The values are remixed first, so hashes that are not uniform in
// every bit (a Toeplitz hash of few fields) still spread over the registers.
// The zero value is empty and ready to use.
type Distinct struct {
	reg [1 << distinctP]uint8
	// small is an open-addressing set of the values, 0 marking an empty
	// slot (zero is remembered in hasZero); nSmall counts them, and
	// overflow says there were more than distinctExact.
	small    [2 * distinctExact]uint32
	nSmall   int
	hasZero  bool
	overflow bool
}

// Add counts h.
func (d *Distinct) Add(h uint32) {
	x := mix64(uint64(h))
	i := x >> (64 - distinctP)
	// The rank of the first set bit of the remaining bits; the guard bit bounds
	// it at 64-distinctP+1.
	rank := uint8(bits.LeadingZeros64(x<<distinctP|1<<(distinctP-1)) + 1)
	// A store whatever the rank, not a branch on it: a flow hash added
	// again is most of the calls, and the branch mispredicted.
	d.reg[i] = max(d.reg[i], rank)
	if !d.overflow {
		d.addSmall(h, x)
	}
}

// addSmall puts h, whose mix is x, in the exact set.
func (d *Distinct) addSmall(h uint32, x uint64) {
	if h == 0 {
		if !d.hasZero {
			d.hasZero = true
			d.nSmall++
		}
	} else {
		const mask = len(d.small) - 1
		j := int(x) & mask
		for d.small[j] != 0 && d.small[j] != h {
			j = (j + 1) & mask
		}
		if d.small[j] == h {
			return
		}
		d.small[j] = h
		d.nSmall++
	}
	d.overflow = d.nSmall > distinctExact
}

// Estimate is the number of distinct values added: exact up to 256, an
// estimate with a standard error of 1.6% above.
func (d *Distinct) Estimate() uint64 {
	if !d.overflow {
		return uint64(d.nSmall)
	}
	const m = 1 << distinctP
	var sum float64
	zeros := 0
	for _, r := range d.reg {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	if zeros == m {
		return 0
	}
	alpha := 0.7213 / (1 + 1.079/m)
	e := alpha * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(float64(m)/float64(zeros)) // linear counting
	}
	return uint64(math.Round(e))
}

// mix64 is the finaliser of MurmurHash3: every input bit changes every output
// bit with probability about one half.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
