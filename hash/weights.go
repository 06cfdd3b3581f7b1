package hash

// WeightsOf returns the per-queue weights for which NewRETA (and ethtool -X
// weight, which fills a table the same way) builds exactly the table
// entries, over queues queues; ok is false when no weights do: a queue's
// entries are not one contiguous run in ethtool's order.
func WeightsOf(entries []uint16, queues int) (weights []int, ok bool) {
	weights = make([]int, queues)
	for _, q := range entries {
		if int(q) >= queues {
			return nil, false
		}
		weights[q]++
	}
	r, err := NewRETA(len(entries), queues, weights)
	if err != nil || len(r.table) != len(entries) {
		return nil, false
	}
	for i, q := range entries {
		if r.table[i] != q {
			return nil, false
		}
	}
	return weights, true
}
