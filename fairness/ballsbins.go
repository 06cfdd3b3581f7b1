package fairness

import (
	"math"
	"math/rand/v2"
	"sync"
)

// ExpectedMaxMean is the imbalance that hashing alone causes: the expected
// max/mean load when flows equal flows are thrown uniformly at random into
// bins bins (balls into bins), E[max load] / (flows/bins). A measured max/mean
// near it says the hash spreads flows as well as a random function can, and
// the imbalance comes from having few flows; one well above it says the flows
// are unequal (the traffic) or the hash is not uniform over them.
//
// Small cases are computed exactly; larger ones, where the exact sum costs
// too much, by a seeded simulation whose standard error is at most about 1%
// (see simulatedMaxMean). Results are cached, so a report
// may ask again at no cost. It is 0 when flows or bins is below 1.
func ExpectedMaxMean(flows, bins int) float64 {
	if flows < 1 || bins < 1 {
		return 0
	}
	if bins == 1 {
		return 1
	}
	key := [2]int{flows, bins}
	maxMeanCache.Lock()
	v, ok := maxMeanCache.m[key]
	maxMeanCache.Unlock()
	if ok {
		return v
	}
	if exactCost(flows, bins) <= exactBudget {
		v = exactMaxMean(flows, bins)
	} else {
		v = simulatedMaxMean(flows, bins)
	}
	maxMeanCache.Lock()
	maxMeanCache.m[key] = v
	maxMeanCache.Unlock()
	return v
}

var maxMeanCache = struct {
	sync.Mutex
	m map[[2]int]float64
}{m: make(map[[2]int]float64)}

// exactBudget bounds the inner steps of exactMaxMean to tens of milliseconds
// of work: a report computes a handful of expectations and should not wait
// seconds for one.
const exactBudget = 1e7

// exactCost counts the inner steps of exactMaxMean, from the loop bounds of
// probAllBelow, for the loads k up to mean + 8·sqrt(mean) + 8, past which
// P(max ≥ k) is negligible. It stops counting past exactBudget: the count
// itself would otherwise cost as much as the sum for many flows.
func exactCost(flows, bins int) float64 {
	cost, _ := exactCostSteps(flows, bins, exactBudget)
	return cost
}

// exactCostSteps is exactCost, counting until the cost passes limit, and
// the steps the count took: at most limit+1, each step counting as one.
func exactCostSteps(flows, bins int, limit float64) (cost float64, steps int) {
	mean := float64(flows) / float64(bins)
	kmax := int(mean+8*math.Sqrt(mean)) + 8
	for k := (flows+bins-1)/bins + 1; k <= min(kmax, flows); k++ {
		for j := 2; j <= bins; j++ {
			lo, hi := max(0, flows-(bins-j)*(k-1)), min(flows, j*(k-1))
			if j == bins {
				lo = flows
			}
			// Each r sums up to k terms, after a binomial term from log-gamma
			// that costs about 20 of them.
			cost += 1 + float64(max(hi-lo+1, 0))*float64(min(k, hi)+20)
			if steps++; cost > limit {
				return cost, steps
			}
		}
	}
	return cost, steps
}

// ExpectedJain is Jain's index of the loads that flows equal flows thrown
// uniformly into bins bins give: flows/(flows+bins-1). It is the ratio of the
// expectations (Σx)² and n·E[Σx²] rather than the expectation of the ratio,
// which it approaches as flows grow. It is 0 when flows or bins is below 1.
func ExpectedJain(flows, bins int) float64 {
	if flows < 1 || bins < 1 {
		return 0
	}
	f := float64(flows)
	return f / (f + float64(bins) - 1)
}

// ExpectedCollisions is the expected number of bins that receive more than
// one of flows flows thrown uniformly into bins bins: bins minus the expected
// empty bins and bins with exactly one flow,
// N·(1 − (1−1/N)^F − (F/N)·(1−1/N)^(F−1)).
func ExpectedCollisions(flows, bins int) float64 {
	if flows < 2 || bins < 1 {
		return 0
	}
	n, f := float64(bins), float64(flows)
	q := math.Log1p(-1 / n) // log(1-1/N), exact for large N
	return n * (1 - math.Exp(f*q) - f/n*math.Exp((f-1)*q))
}

// exactMaxMean sums E[max] = Σ_k P(max ≥ k) with P(max < k) from
// probAllBelow.
func exactMaxMean(flows, bins int) float64 {
	var emax float64
	for k := 1; k <= flows; k++ {
		if bins*(k-1) < flows {
			emax++ // some bin must hold at least k
			continue
		}
		// Rounding leaves P(max < k) some 1e-13 short of 1 over many bins:
		// stop well above that.
		tail := 1 - probAllBelow(flows, bins, k)
		if tail < 1e-10 {
			break
		}
		emax += tail
	}
	return emax * float64(bins) / float64(flows)
}

// probAllBelow is P(every bin holds fewer than k balls) for F balls thrown
// uniformly into N bins. With f_j(r) the probability for r balls in j bins,
// the first of the j bins takes b ~ Binomial(r, 1/j) and the other j-1 the
// rest: f_j(r) = Σ_{b<k} Binom(r, 1/j)(b) · f_{j-1}(r−b), f_1(r) = [r < k].
// Only the r that can still fill the other bins to F are kept.
func probAllBelow(flows, bins, k int) float64 {
	cur := make([]float64, flows+1)
	next := make([]float64, flows+1)
	pmf := make([]float64, k)
	for r := range min(k, flows+1) {
		cur[r] = 1
	}
	for j := 2; j <= bins; j++ {
		lo := max(0, flows-(bins-j)*(k-1)) // the bins after these hold at most k-1 each
		hi := min(flows, j*(k-1))
		if j == bins {
			lo = flows
		}
		clear(next)
		q := 1 / float64(j)
		for r := lo; r <= hi; r++ {
			top := min(k-1, r)
			binomialPMF(pmf[:top+1], r, q)
			var s float64
			for b := 0; b <= top; b++ {
				s += pmf[b] * cur[r-b]
			}
			next[r] = s
		}
		cur, next = next, cur
	}
	return cur[flows]
}

// binomialPMF fills p[b] = P(Binomial(n, q) = b) for b < len(p). It starts
// from the term nearest the mode, computed with log-gamma, and walks away
// from it, so the terms that underflow are the ones too small to matter.
func binomialPMF(p []float64, n int, q float64) {
	top := len(p) - 1
	m := min(int(float64(n+1)*q), top)
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	p[m] = math.Exp(lg(n) - lg(m) - lg(n-m) + float64(m)*math.Log(q) + float64(n-m)*math.Log1p(-q))
	odds := q / (1 - q)
	for b := m; b < top; b++ {
		p[b+1] = p[b] * float64(n-b) / float64(b+1) * odds
	}
	for b := m; b > 0; b-- {
		p[b-1] = p[b] * float64(b) / float64(n-b+1) / odds
	}
}

// simulatedMaxMean throws flows balls into bins bins, trials times, and
// averages max/mean. The trial count keeps the work near 2·10^7 throws (tens
// of milliseconds) and between 100 and 20000 trials. The maximum of one trial varies by
// less than a ball or two when the load per bin is small, and by about 0.4
// standard deviations of a bin's load when it is large, which leaves a
// standard error of at most about 1% of the answer, below the differences a
// report points out. The seed is fixed: the same question always gets the
// same answer.
func simulatedMaxMean(flows, bins int) float64 {
	if flows > maxSimulatedFlows {
		return normalMaxMean(flows, bins)
	}
	trials := min(max(2e7/(flows+bins), 100), 20000)
	rng := rand.New(rand.NewPCG(0x5eed, uint64(flows)<<32|uint64(bins)))
	load := make([]uint32, bins)
	var sum uint64
	for range trials {
		clear(load)
		for range flows {
			load[rng.Uint32N(uint32(bins))]++
		}
		var mx uint32
		for _, l := range load {
			mx = max(mx, l)
		}
		sum += uint64(mx)
	}
	return float64(sum) / float64(trials) * float64(bins) / float64(flows)
}

// maxSimulatedFlows bounds the flows simulatedMaxMean throws: beyond it each
// bin's load is large enough for normalMaxMean, whose cost does not grow
// with the flows (a run's statistics may claim any number of them).
const maxSimulatedFlows = 200_000

// normalMaxMean is ExpectedMaxMean for many flows: each bin's load is then
// close to normal, mean μ = F/N and deviation σ = √(F/N·(1−1/N)), and the
// expected maximum is μ + σ·E[max of N standard normals], the last term
// simulated at a cost of bins × trials normal draws.
func normalMaxMean(flows, bins int) float64 {
	trials := min(max(2e7/bins, 100), 20000)
	rng := rand.New(rand.NewPCG(0x5eed, uint64(bins)))
	var sum float64
	for range trials {
		mx := math.Inf(-1)
		for range bins {
			mx = max(mx, rng.NormFloat64())
		}
		sum += mx
	}
	mu := float64(flows) / float64(bins)
	sigma := math.Sqrt(mu * (1 - 1/float64(bins)))
	return (mu + sigma*sum/float64(trials)) / mu
}
