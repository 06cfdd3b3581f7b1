package fairness

// Number is what the measures of a set of loads accept.
type Number interface {
	~int | ~int64 | ~uint32 | ~uint64 | ~float64
}

// Jain is Jain's fairness index of the loads x (Jain, Chiu and Hawe, 1984):
// (Σx)² / (n·Σx²). It is 1 when all loads are equal and 1/n when one takes
// everything. It is 0, meaning undefined, when x is empty or all zero: a
// report must not call an idle set of queues fair or unfair.
func Jain[T Number](x []T) float64 {
	var sum, sq float64
	for _, v := range x {
		f := float64(v)
		sum += f
		sq += f * f
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(x)) * sq)
}

// MaxMean is the largest load over the mean load of x, the imbalance a
// reader feels: the busiest queue works MaxMean times as hard as it would if
// the load were spread evenly. It is 0 when x is empty or all zero.
func MaxMean[T Number](x []T) float64 {
	var sum, mx float64
	for _, v := range x {
		f := float64(v)
		sum += f
		mx = max(mx, f)
	}
	if sum == 0 {
		return 0
	}
	return mx * float64(len(x)) / sum
}

// Shares returns each load's fraction of the total, in the order of x; all
// zero when the total is.
func Shares[T Number](x []T) []float64 {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	s := make([]float64, len(x))
	if sum == 0 {
		return s
	}
	for i, v := range x {
		s[i] = float64(v) / sum
	}
	return s
}
