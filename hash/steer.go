package hash

import (
	"fmt"
	"slices"
)

// RPSMap is a receive queue's software RPS map (struct rps_map): the CPUs a
// flow hash may be steered to. The zero RPSMap is "no map": nothing is steered.
type RPSMap struct{ cpus []int }

// NewRPSMap returns the map of the given CPU numbers. Like the kernel, which
// builds the map by walking the rps_cpus mask (store_rps_map), it keeps each
// CPU once, in ascending order, whatever the order given.
func NewRPSMap(cpus []int) (RPSMap, error) {
	for _, c := range cpus {
		if c < 0 {
			return RPSMap{}, fmt.Errorf("create RPS map of CPUs %v: %w %d", cpus, ErrCPU, c)
		}
	}
	sorted := slices.Clone(cpus)
	slices.Sort(sorted)
	return RPSMap{cpus: slices.Compact(sorted)}, nil
}

// Len is the number of CPUs in the map.
func (m RPSMap) Len() int { return len(m.cpus) }

// CPUs returns a copy of the map's CPUs, in ascending order.
func (m RPSMap) CPUs() []int { return slices.Clone(m.cpus) }

// CPU returns the CPU get_rps_cpu picks for hash (net/core/dev.c, RPS part,
// every CPU assumed online): cpus[reciprocal_scale(hash, len)], an index taken
// from the hash's high bits. It returns -1, "stay on the current CPU", when the
// map is empty or the hash is 0, which the kernel treats as no hash (only a
// NIC can report 0; the software hash never is).
func (m RPSMap) CPU(hash uint32) int {
	if len(m.cpus) == 0 || hash == 0 {
		return -1
	}
	return m.cpus[ReciprocalScale(hash, uint32(len(m.cpus)))]
}

// DefaultRETASize is the indirection table size most NICs use and the default of
// [NewRETA].
const DefaultRETASize = 128

// maxRETASize bounds table sizes; the largest real tables (e.g. Intel E810 PF)
// have 2048 entries.
const maxRETASize = 1 << 16

// RETA is a NIC's RSS indirection table: hash -> receive queue, indexed by the
// low bits of the hash.
type RETA struct {
	table []uint16
	mask  uint32
}

// NewRETA fills a table of size entries (a power of two; 0 means
// [DefaultRETASize]) over queues receive queues.
//
// Without weights it is what drivers program by default and "ethtool -X DEV
// equal N" writes (ethtool_rxfh_indir_default): entry i holds queue i % queues.
//
// With weights it is what "ethtool -X DEV weight W0 W1 ..." writes: weights[j]
// is queue j's share, and ethtool gives queue j the contiguous run of entries
// [size*P(j-1)/sum, size*P(j)/sum), P being the running sum of the weights. The
// runs are contiguous, not interleaved, which matters for nothing but reading
// the table, since the hash's low bits spread flows evenly over all entries. As
// in ethtool, the weights must not be negative, their sum must be between 1 and
// size, and there may be no more of them than queues (missing ones are 0).
func NewRETA(size, queues int, weights []int) (*RETA, error) {
	if size == 0 {
		size = DefaultRETASize
	}
	if size < 0 || size > maxRETASize || size&(size-1) != 0 {
		return nil, fmt.Errorf("create RETA: %w: size %d is not a power of two up to %d", ErrRETA, size, maxRETASize)
	}
	if queues < 1 || queues > maxRETASize {
		return nil, fmt.Errorf("create RETA: %w: %d queues, want 1 to %d", ErrRETA, queues, maxRETASize)
	}
	r := &RETA{table: make([]uint16, size), mask: uint32(size - 1)}
	if weights == nil {
		for i := range r.table {
			r.table[i] = uint16(i % queues)
		}
		return r, nil
	}
	if len(weights) > queues {
		return nil, fmt.Errorf("create RETA: %w: %d weights for %d queues", ErrRETA, len(weights), queues)
	}
	sum := 0
	for j, w := range weights {
		if w < 0 {
			return nil, fmt.Errorf("create RETA: %w: weight %d of queue %d is negative", ErrRETA, w, j)
		}
		sum += w
	}
	if sum == 0 || sum > size {
		return nil, fmt.Errorf("create RETA: %w: weights sum to %d, want 1 to the table size %d", ErrRETA, sum, size)
	}
	// ethtool's fill_indir_table: entry i goes to the first queue whose run
	// ends after i. Zero-weight queues have empty runs and are skipped.
	j, partial := -1, 0
	for i := range r.table {
		for i >= size*partial/sum {
			j++
			partial += weights[j]
		}
		r.table[i] = uint16(j)
	}
	return r, nil
}

// Len is the number of entries.
func (r *RETA) Len() int { return len(r.table) }

// Table returns a copy of the entries, as "ethtool -x DEV" lists them.
func (r *RETA) Table() []int {
	t := make([]int, len(r.table))
	for i, q := range r.table {
		t[i] = int(q)
	}
	return t
}

// Queue returns the receive queue the NIC picks for hash: table[hash % size],
// the low bits of the hash (unlike [RPSMap.CPU], which takes the high ones).
func (r *RETA) Queue(hash uint32) int {
	return int(r.table[hash&r.mask])
}

// NewRETAFromTable returns the indirection table whose entries are table's,
// as "ethtool -x DEV" lists a device's (kernel.ReadRSS): a power-of-two size
// up to the bound NewRETA takes, every entry a queue below queues.
func NewRETAFromTable(table []uint32, queues int) (*RETA, error) {
	size := len(table)
	if size == 0 || size > maxRETASize || size&(size-1) != 0 {
		return nil, fmt.Errorf("create RETA: %w: a table of %d entries, want a power of two up to %d", ErrRETA, size, maxRETASize)
	}
	r := &RETA{table: make([]uint16, size), mask: uint32(size - 1)}
	for i, q := range table {
		if q >= uint32(queues) {
			return nil, fmt.Errorf("create RETA: %w: entry %d is queue %d, and there are %d queues", ErrRETA, i, q, queues)
		}
		r.table[i] = uint16(q)
	}
	return r, nil
}
