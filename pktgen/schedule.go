package pktgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"slices"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/kernel"
)

// MACs are the Ethernet addresses of generated frames.
type MACs struct {
	// Dst is the receiver's address: the MAC of the interface that takes
	// the frames (the other end of a veth). Required.
	Dst net.HardwareAddr
	// Src is the frames' source address; nil takes DefaultSrcMAC.
	Src net.HardwareAddr
}

// DefaultSrcMAC is the source address of generated frames unless MACs.Src
// says otherwise: locally administered, "pg" in its second and third bytes.
var DefaultSrcMAC = net.HardwareAddr{0x02, 0x70, 0x67, 0x00, 0x00, 0x01}

// Schedule is one cycle of a profile's frames in mix order, built once: the
// frames the generators send, over and over. It is immutable and safe for
// concurrent use.
type Schedule struct {
	profile Profile
	table   kernel.FrameTable
	// Per distinct frame: its shape (index into the profile's mix), flow
	// and direction.
	frameShape []uint16
	frameFlow  []uint32
	frameReply []bool
	// prefix[i] is the number of bytes at cycle positions 0 to i-1.
	prefix []uint64
	flows  int
}

// ShapeCount is what one shape contributes to a cycle.
type ShapeCount struct {
	Shape  Shape
	Frames int // frames in the cycle
	Reply  int // of which in the reply direction
	Flows  int // flows with at least one frame in the cycle
}

// NewSchedule builds the cycle of p's frames, addressed with macs. Every
// distinct frame is built once with package corpus; positions that repeat a
// frame share it.
func NewSchedule(p Profile, macs MACs) (*Schedule, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var dst, src [6]byte
	if len(macs.Dst) != 6 {
		return nil, fmt.Errorf("build schedule of profile %s: destination MAC %q, want the receiver's 6-byte address", p.Name, macs.Dst)
	}
	copy(dst[:], macs.Dst)
	copy(src[:], DefaultSrcMAC)
	if macs.Src != nil {
		if len(macs.Src) != 6 {
			return nil, fmt.Errorf("build schedule of profile %s: source MAC %q, want a 6-byte address", p.Name, macs.Src)
		}
		copy(src[:], macs.Src)
	}
	cycle := p.cycle()
	weights := make([]float64, len(p.Mix))
	for i, sw := range p.Mix {
		weights[i] = sw.Weight
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x7067656e)) // "pgen"

	// Frames and flows per shape; every shape has at least one flow.
	frames := largestRemainder(cycle, weights)
	flows := largestRemainder(p.Flows-len(p.Mix), weights)
	for s := range flows {
		flows[s]++
		if frames[s] == 0 {
			return nil, fmt.Errorf("build schedule of profile %s: %w: a cycle of %d frames gives shape %s no frame; raise its weight or the cycle", p.Name, ErrInvalidProfile, cycle, p.Mix[s].Shape)
		}
	}

	// Per shape, the sequence of its frames' flows (each flow as often as
	// its size says, shuffled; with a hot set, segment by segment) and of
	// their directions.
	order := interleave(frames, cycle)
	flowSeq := make([][]uint32, len(p.Mix))
	if p.HotSet.Phases > 0 {
		flowSeq = hotSetSequences(&p, order, frames, flows, rng)
	}
	replySeq := make([][]bool, len(p.Mix))
	var base uint32 // the shape's first global flow number
	for s := range p.Mix {
		if flowSeq[s] == nil {
			counts := largestRemainder(frames[s], p.FlowSizes.shares(flows[s]))
			seq := make([]uint32, 0, frames[s])
			for k, c := range counts {
				for range c {
					seq = append(seq, base+uint32(k))
				}
			}
			rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
			flowSeq[s] = seq
		}
		reply := make([]bool, frames[s])
		for i := range int(math.Round(float64(frames[s]) * p.ReplyShare)) {
			reply[i] = true
		}
		rng.Shuffle(len(reply), func(i, j int) { reply[i], reply[j] = reply[j], reply[i] })
		replySeq[s] = reply
		base += uint32(flows[s])
	}
	lengths := frameLengths(p.FrameSizes, cycle, rng)

	sc := &Schedule{profile: p, prefix: make([]uint64, cycle+1)}
	sc.table.Order = make([]uint32, cycle)
	type key struct {
		shape uint16
		flow  uint32
		reply bool
		len   uint16
	}
	index := map[key]uint32{}
	hdrLens := map[[2]int]int{} // (shape, flow parity) -> header bytes
	present := map[uint32]bool{}
	next := make([]int, len(p.Mix))
	for pos, s := range order {
		f := flowFields{g: flowSeq[s][next[s]], shape: s, reply: replySeq[s][next[s]], dst: dst, src: src}
		next[s]++
		present[f.g] = true
		shape := p.Mix[s].Shape
		hk := [2]int{s, int(f.g % 2)}
		hl, ok := hdrLens[hk]
		if !ok {
			hl = len(corpus.Stack(shape.build(f)...))
			if hl > kernel.HeadLen {
				return nil, fmt.Errorf("build schedule of profile %s: %w: shape %s has %d bytes of headers; the generators write at most %d", p.Name, ErrInvalidProfile, shape, hl, kernel.HeadLen)
			}
			hdrLens[hk] = hl
		}
		n := max(lengths[pos], hl, MinFrameLen)
		k := key{uint16(s), f.g, f.reply, uint16(n)}
		i, ok := index[k]
		if !ok {
			f.payload = n - hl
			frame := corpus.Stack(shape.build(f)...)
			i = uint32(len(sc.table.Lens))
			index[k] = i
			var head [kernel.HeadLen]byte
			copy(head[:], frame)
			sc.table.Heads = append(sc.table.Heads, head[:]...)
			sc.table.Lens = append(sc.table.Lens, uint16(len(frame)))
			sc.frameShape = append(sc.frameShape, uint16(s))
			sc.frameFlow = append(sc.frameFlow, f.g)
			sc.frameReply = append(sc.frameReply, f.reply)
		}
		sc.table.Order[pos] = i
		sc.prefix[pos+1] = sc.prefix[pos] + uint64(sc.table.Lens[i])
	}
	sc.flows = len(present)
	if err := sc.table.Validate(); err != nil {
		return nil, fmt.Errorf("build schedule of profile %s: %w", p.Name, err)
	}
	return sc, nil
}

// largestRemainder splits total into integers proportional to weights that
// add up to total: each gets the floor of its quota, and the units left over
// go to the largest fractional parts (the first of equal ones). Weights are
// finite and > 0; they are scaled by the largest first, so that their sum
// stays finite however large each is.
func largestRemainder(total int, weights []float64) []int {
	top := slices.Max(weights)
	var sum float64
	for _, w := range weights {
		sum += w / top
	}
	out := make([]int, len(weights))
	frac := make([]float64, len(weights))
	left := total
	for i, w := range weights {
		q := float64(total) * min(1, w/top/sum)
		out[i] = min(int(q), left)
		frac[i] = q - float64(out[i])
		left -= out[i]
	}
	idx := make([]int, len(weights))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case frac[a] > frac[b]:
			return -1
		case frac[a] < frac[b]:
			return 1
		}
		return 0
	})
	for i := 0; left > 0; i = (i + 1) % len(idx) {
		out[idx[i]]++
		left--
	}
	return out
}

// interleave spreads counts[s] positions of each shape s over a cycle of
// total positions by smooth weighted round robin: between two frames of a
// shape lie about total/counts[s] positions.
func interleave(counts []int, total int) []int {
	order := make([]int, total)
	cur := make([]int, len(counts))
	for pos := range order {
		best := 0
		for s, c := range counts {
			cur[s] += c
			if cur[s] > cur[best] {
				best = s
			}
		}
		cur[best] -= total
		order[pos] = best
	}
	return order
}

// frameLengths draws the length of each of n frames: weighted lengths in
// exact proportion (largest remainder) and shuffled, or a range drawn
// uniformly.
func frameLengths(fs FrameSizes, n int, rng *rand.Rand) []int {
	out := make([]int, 0, n)
	if len(fs.Sizes) == 0 {
		for range n {
			out = append(out, fs.Min+rng.IntN(fs.Max-fs.Min+1))
		}
		return out
	}
	weights := make([]float64, len(fs.Sizes))
	for i, sw := range fs.Sizes {
		weights[i] = sw.Weight
	}
	for i, c := range largestRemainder(n, weights) {
		for range c {
			out = append(out, fs.Sizes[i].Len)
		}
	}
	rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Profile is the profile the schedule was built from.
func (s *Schedule) Profile() Profile { return s.profile }

// Len is the number of frames in a cycle.
func (s *Schedule) Len() int { return len(s.table.Order) }

// Distinct is the number of distinct frames in a cycle.
func (s *Schedule) Distinct() int { return len(s.table.Lens) }

// Flows is the number of flows with at least one frame in a cycle: the
// profile's flows unless a cycle is too short for the smallest ones.
func (s *Schedule) Flows() int { return s.flows }

// MaxLen is the length of the longest frame.
func (s *Schedule) MaxLen() int { return s.table.MaxLen() }

// Mix counts a cycle's frames, replies and flows per shape, in the
// profile's order.
func (s *Schedule) Mix() []ShapeCount {
	out := make([]ShapeCount, len(s.profile.Mix))
	flows := make([]map[uint32]bool, len(out))
	for i := range out {
		out[i].Shape = s.profile.Mix[i].Shape
		flows[i] = map[uint32]bool{}
	}
	for _, k := range s.table.Order {
		c := &out[s.frameShape[k]]
		c.Frames++
		if s.frameReply[k] {
			c.Reply++
		}
		flows[s.frameShape[k]][s.frameFlow[k]] = true
	}
	for i := range out {
		out[i].Flows = len(flows[i])
	}
	return out
}

// Bytes is the number of bytes (without FCS) of n frames sent from cycle
// position start on.
func (s *Schedule) Bytes(start, n uint64) uint64 {
	l := uint64(s.Len())
	total := s.prefix[l]
	start %= l
	// Whole cycles, then the rest, which may wrap once.
	b := n / l * total
	rest := n % l
	if end := start + rest; end > l {
		return b + total - s.prefix[start] + s.prefix[end-l]
	}
	return b + s.prefix[start+rest] - s.prefix[start]
}

// Frames returns a cycle's frames in order, each in memory of its own.
func (s *Schedule) Frames() [][]byte {
	st := s.Stream(1)
	out := make([][]byte, s.Len())
	for i := range out {
		out[i] = slices.Clone(st.Next())
	}
	return out
}

// Frames returns one cycle of p's frames to dst, from DefaultSrcMAC, in mix
// order: NewSchedule(p, MACs{Dst: dst}).Frames().
func (p Profile) Frames(dst net.HardwareAddr) ([][]byte, error) {
	s, err := NewSchedule(p, MACs{Dst: dst})
	if err != nil {
		return nil, err
	}
	return s.Frames(), nil
}

// Stream yields a schedule's frames in order, cycling, from buffers of its
// own: a frame costs a 128-byte copy and no allocation.
type Stream struct {
	table *kernel.FrameTable
	pos   int
	bufs  [][]byte
	next  int
}

// Stream returns a stream from the start of the cycle whose frames stay
// valid until depth more frames have been yielded (depth >= 1): a batch of
// depth frames can be held at once.
func (s *Schedule) Stream(depth int) *Stream {
	st := &Stream{table: &s.table, bufs: make([][]byte, max(1, depth))}
	n := max(kernel.HeadLen, s.MaxLen())
	for i := range st.bufs {
		st.bufs[i] = make([]byte, n)
	}
	return st
}

// Next returns the next frame, valid until depth more calls.
func (st *Stream) Next() []byte {
	b := st.bufs[st.next]
	n := st.table.Put(b, st.pos)
	if st.pos++; st.pos == len(st.table.Order) {
		st.pos = 0
	}
	if st.next++; st.next == len(st.bufs) {
		st.next = 0
	}
	return b[:n:n]
}

// markedTable is the schedule's frame table with each frame's mark.
func (sc *Schedule) markedTable(mark func(frame []byte) uint32) *kernel.FrameTable {
	t := sc.table
	t.Marks = make([]uint32, len(t.Lens))
	frame := make([]byte, max(kernel.HeadLen, t.MaxLen()))
	for k, n := range t.Lens {
		clear(frame)
		copy(frame, t.Heads[k*kernel.HeadLen:(k+1)*kernel.HeadLen])
		t.Marks[k] = mark(frame[:n])
	}
	return &t
}
