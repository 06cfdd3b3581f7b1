package nicrss

import (
	"fmt"
	"io"
	"strings"

	"github.com/xdphash/xdphash/fairness"
)

// MaxFlows bounds the distinct flows a Predictor tells apart; frames of
// further flows still count in every load, but not in the flow counts.
const MaxFlows = 1 << 20

// Predictor accumulates how a NIC spreads frames over its receive queues.
type Predictor struct {
	h       *Hasher
	t       Tuple
	flows   map[Tuple]int // flow -> its queue
	buckets []uint64      // frames per table entry
	p       Prediction
}

// Prediction is how a NIC spreads a set of frames.
type Prediction struct {
	// Frames and Bytes count every frame; Unhashed the frames the NIC
	// gives no hash (they go to queue 0); Stale the frames hashed over
	// fields of an earlier frame (QuirkQEMU72), hashed here with zeros.
	Frames, Bytes, Unhashed, Stale uint64
	// Queues is the load of each receive queue.
	Queues []QueueLoad
	// Flows is the distinct hashed tuples seen, at most MaxFlows
	// (FlowsCapped then says some were not told apart).
	Flows       int
	FlowsCapped bool
	// MaxMean is the busiest queue's frames over the mean; Expected is the
	// max/mean of Flows equal flows thrown at random into the queues
	// (balls into bins), the imbalance that hashing alone causes.
	MaxMean, Expected float64
	// Weights are the `ethtool -X DEV weight` values whose table makes the
	// busiest queue's frames the least, for this load (each table entry
	// keeps its frames; a queue gets one contiguous run of entries), and
	// WeightsMaxMean the max/mean under them. Nil without hashed frames.
	Weights        []int
	WeightsMaxMean float64
}

// QueueLoad is one receive queue's share.
type QueueLoad struct {
	Queue          int
	Frames, Bytes  uint64
	Flows          int
	FramesUnhashed uint64
}

// NewPredictor returns a predictor for the NIC h, which must have a table.
func NewPredictor(h *Hasher) (*Predictor, error) {
	if h.reta == nil {
		return nil, fmt.Errorf("create NIC predictor: %w: no indirection table", ErrConfig)
	}
	p := &Predictor{h: h, flows: map[Tuple]int{}, buckets: make([]uint64, h.reta.Len())}
	p.p.Queues = make([]QueueLoad, h.queues)
	for i := range p.p.Queues {
		p.p.Queues[i].Queue = i
	}
	return p, nil
}

// Add counts one frame of wireLen bytes on the wire.
func (p *Predictor) Add(frame []byte, wireLen int) {
	hv, ok := p.h.Hash(&p.t, frame)
	q := p.h.Queue(hv, ok)
	p.p.Frames++
	p.p.Bytes += uint64(wireLen)
	ql := &p.p.Queues[q]
	ql.Frames++
	ql.Bytes += uint64(wireLen)
	if !ok {
		p.p.Unhashed++
		ql.FramesUnhashed++
		return
	}
	if p.t.Stale {
		p.p.Stale++
	}
	p.buckets[hv&uint32(len(p.buckets)-1)]++
	if _, seen := p.flows[p.t]; seen {
		return
	}
	if len(p.flows) >= MaxFlows {
		p.p.FlowsCapped = true
		return
	}
	p.flows[p.t] = q
	ql.Flows++
}

// Result is the prediction so far.
func (p *Predictor) Result() Prediction {
	r := p.p
	r.Queues = append([]QueueLoad(nil), p.p.Queues...)
	r.Flows = len(p.flows)
	loads := make([]uint64, len(r.Queues))
	for i, q := range r.Queues {
		loads[i] = q.Frames
	}
	if r.Frames > 0 {
		r.MaxMean = fairness.MaxMean(loads)
	}
	r.Expected = fairness.ExpectedMaxMean(r.Flows, len(r.Queues))
	hashed := r.Frames - r.Unhashed
	if hashed > 0 {
		var runMax uint64
		r.Weights, runMax = BestWeights(p.buckets, len(r.Queues))
		// Unhashed frames stay on queue 0 whatever the table.
		most := max(runMax, r.Weights0Load(p.buckets)+r.Unhashed)
		r.WeightsMaxMean = float64(most) / (float64(r.Frames) / float64(len(r.Queues)))
	}
	return r
}

// Weights0Load is the hashed load the table of r.Weights gives queue 0.
func (r *Prediction) Weights0Load(buckets []uint64) uint64 {
	var s uint64
	for _, b := range buckets[:min(len(buckets), r.Weights[0])] {
		s += b
	}
	return s
}

// BestWeights returns the weights, one per queue and summing to
// len(buckets), whose `ethtool -X weight` table (queue j takes the j-th
// contiguous run of weights[j] entries, hash.NewRETA) makes the largest
// run's load the least, and that load. It searches the bound by bisection,
// each step a greedy fill, which is exact for contiguous runs.
func BestWeights(buckets []uint64, queues int) ([]int, uint64) {
	var lo, hi uint64
	for _, b := range buckets {
		lo = max(lo, b)
		hi += b
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if runsNeeded(buckets, mid) <= queues {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	w := make([]int, queues)
	j, sum := 0, uint64(0)
	for i, b := range buckets {
		// Close the run when this bucket would pass the bound, or when
		// every remaining queue needs an entry of its own.
		if j < queues-1 && (sum+b > lo || len(buckets)-i == queues-1-j) && w[j] > 0 {
			j, sum = j+1, 0
		}
		w[j]++
		sum += b
	}
	return w, lo
}

// runsNeeded is how many contiguous runs of at most bound each the buckets
// need.
func runsNeeded(buckets []uint64, bound uint64) int {
	n, sum := 1, uint64(0)
	for _, b := range buckets {
		if sum+b > bound {
			n, sum = n+1, 0
		}
		sum += b
	}
	return n
}

// WriteText writes the prediction as the run's NIC report: one line per
// queue, then the imbalance and the weights.
func (r *Prediction) WriteText(w io.Writer, name string) error {
	if name == "" {
		name = "DEV"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "NIC RSS prediction: %d frames, %d bytes, %d flows over %d queues", r.Frames, r.Bytes, r.Flows, len(r.Queues))
	if r.FlowsCapped {
		fmt.Fprintf(&b, " (flows counted up to %d)", MaxFlows)
	}
	fmt.Fprintf(&b, "; %d frames without a hash (queue 0)", r.Unhashed)
	if r.Stale > 0 {
		fmt.Fprintf(&b, ", %d hashed over an earlier frame's fields (qemu-7.2: their queue is not predictable)", r.Stale)
	}
	b.WriteString("\n  queue  frames      share   bytes        flows\n")
	for _, q := range r.Queues {
		share := 0.0
		if r.Frames > 0 {
			share = 100 * float64(q.Frames) / float64(r.Frames)
		}
		fmt.Fprintf(&b, "  %-5d  %-10d  %5.1f%%  %-11d  %d\n", q.Queue, q.Frames, share, q.Bytes, q.Flows)
	}
	fmt.Fprintf(&b, "  imbalance: max/mean %.3f; balls into bins with %d flows expects %.3f\n", r.MaxMean, r.Flows, r.Expected)
	if r.Weights != nil {
		ws := make([]string, len(r.Weights))
		for i, v := range r.Weights {
			ws[i] = fmt.Sprint(v)
		}
		fmt.Fprintf(&b, "  best table: ethtool -X %s weight %s  (max/mean %.3f)\n", name, strings.Join(ws, " "), r.WeightsMaxMean)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
