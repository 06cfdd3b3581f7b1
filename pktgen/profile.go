package pktgen

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xdphash/xdphash/internal/kernel"
)

// Profile describes generated traffic: which shapes, how many flows, how
// frames spread over them, how long frames are and which way they go. Its
// frames repeat after Cycle frames.
type Profile struct {
	// Name names the profile in reports.
	Name string
	// Flows is the number of flows, split over the shapes by weight (each
	// shape gets at least one). A flow is a 5-tuple and its reply direction.
	Flows int
	// Mix is each shape's share of the frames, as a weight.
	Mix []ShapeWeight
	// FlowSizes is how a shape's frames spread over its flows.
	FlowSizes FlowSizes
	// FrameSizes is the distribution of frame lengths.
	FrameSizes FrameSizes
	// ReplyShare is the share of frames sent in the reply direction, from
	// server to client, between 0 and 1.
	ReplyShare float64
	// Cycle is the number of frames after which the traffic repeats; 0
	// takes DefaultCycle(Flows).
	Cycle int
	// Seed seeds the shuffles and the draws of a range of frame sizes: the
	// same profile and seed give the same frames.
	Seed uint64
	// HotSet, when set, makes a few flows at a time carry a share of the
	// frames, a different few as the cycle goes on.
	HotSet HotSet
}

// HotSet is a set of flows that carries a share of the frames and shifts
// over the cycle: the cycle is cut into Phases equal segments, and in
// segment i the flows i·Step to i·Step+Flows-1 (modulo the flows) carry
// Share of the segment's frames, each rising and falling over the segments
// it is hot in; the other flows carry the rest as FlowSizes says. Its zero
// value is no hot set.
//
// A shape gets its part of the hot flows in proportion to its flows, and
// its part of the hot set moves on by the same proportion of Step, so that a
// flow of any shape stays hot for about Flows/Step segments. In a segment a
// shape's hot flows, in window order from the one that is leaving to the one
// that has just come in, get weights 1, 2, …, peak, …, 2, 1; a shape whose
// hot flows are all its flows sends them all its frames, and a shape given
// no hot flow sends its frames as FlowSizes says.
type HotSet struct {
	// Flows is the number of hot flows at a time, 1 to the profile's flows.
	Flows int
	// Share is the hot flows' share of a segment's frames, strictly between
	// 0 and 1.
	Share float64
	// Phases is the number of segments, 1 to the cycle's frames; 0 means no
	// hot set.
	Phases int
	// Step is how many flows the hot set moves on from one segment to the
	// next, 0 (a hot set that stays) to the profile's flows.
	Step int
}

// String is the hot set as the profile file writes it.
func (h HotSet) String() string {
	return fmt.Sprintf("{flows: %d, share: %g, phases: %d, step: %d}", h.Flows, h.Share, h.Phases, h.Step)
}

// ShapeWeight is one entry of a profile's mix.
type ShapeWeight struct {
	Shape  Shape
	Weight float64
}

// Dist is a flow-size distribution.
type Dist uint8

// The flow-size distributions.
const (
	// Uniform gives every flow of a shape the same number of frames (to
	// within one).
	Uniform Dist = iota
	// Zipf gives the k-th flow of a shape (from 1) a share proportional to
	// 1/k^Exponent.
	Zipf
	// Elephants gives ElephantFlows of the flows ElephantShare of the frames,
	// evenly, and the other flows (the mice) the rest, evenly.
	Elephants
)

var distNames = [...]string{Uniform: "uniform", Zipf: "zipf", Elephants: "elephants"}

func (d Dist) String() string {
	if int(d) < len(distNames) {
		return distNames[d]
	}
	return "dist(" + strconv.Itoa(int(d)) + ")"
}

// FlowSizes is a flow-size distribution with its parameters.
type FlowSizes struct {
	Dist Dist
	// Exponent is Zipf's exponent, > 0 (1 is the classic Zipf law).
	Exponent float64
	// ElephantFlows is the elephants' share of the flows and ElephantShare
	// their share of the frames, both strictly between 0 and 1.
	ElephantFlows, ElephantShare float64
}

// String is the distribution as the profile file writes it.
func (f FlowSizes) String() string {
	switch f.Dist {
	case Zipf:
		return fmt.Sprintf("zipf %g", f.Exponent)
	case Elephants:
		return fmt.Sprintf("elephants %g of the flows carry %g of the frames", f.ElephantFlows, f.ElephantShare)
	}
	return f.Dist.String()
}

// shares returns the share of frames of each of n flows, largest first.
func (f FlowSizes) shares(n int) []float64 {
	p := make([]float64, n)
	switch f.Dist {
	case Zipf:
		var sum float64
		for k := range p {
			p[k] = math.Pow(float64(k+1), -f.Exponent)
			sum += p[k]
		}
		for k := range p {
			p[k] /= sum
		}
	case Elephants:
		e := max(1, int(math.Round(f.ElephantFlows*float64(n))))
		if e >= n {
			e = n - 1
		}
		for k := range p {
			if k < e {
				p[k] = f.ElephantShare / float64(e)
			} else {
				p[k] = (1 - f.ElephantShare) / float64(n-e)
			}
		}
		if n == 1 {
			p[0] = 1
		}
	default:
		for k := range p {
			p[k] = 1 / float64(n)
		}
	}
	return p
}

// FrameSizes is a distribution of frame lengths: weighted lengths, or when
// Sizes is empty every length from Min to Max alike. A length counts the
// frame from its destination MAC address to the end of its payload, without
// the FCS a NIC adds; a length below a shape's headers (or below 60 bytes,
// Ethernet's minimum) is raised to them.
type FrameSizes struct {
	Sizes    []SizeWeight
	Min, Max int
}

// SizeWeight is a frame length and its weight.
type SizeWeight struct {
	Len    int
	Weight float64
}

// IMIX is the simple IMIX: 64, 576 and 1500-byte frames in the ratio 7:4:1.
func IMIX() FrameSizes {
	return FrameSizes{Sizes: []SizeWeight{{64, 7}, {576, 4}, {1500, 1}}}
}

// FixedSize is frames of n bytes.
func FixedSize(n int) FrameSizes { return FrameSizes{Sizes: []SizeWeight{{n, 1}}} }

// SizeRange is frames of every length from min to max alike.
func SizeRange(min, max int) FrameSizes { return FrameSizes{Min: min, Max: max} }

// String is the distribution as the profile file writes it.
func (s FrameSizes) String() string {
	if len(s.Sizes) == 0 {
		return fmt.Sprintf("%d-%d", s.Min, s.Max)
	}
	if slices.Equal(s.Sizes, IMIX().Sizes) {
		return "imix"
	}
	if len(s.Sizes) == 1 {
		return strconv.Itoa(s.Sizes[0].Len)
	}
	parts := make([]string, len(s.Sizes))
	for i, sw := range s.Sizes {
		parts[i] = fmt.Sprintf("%d: %g", sw.Len, sw.Weight)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Bounds of a profile.
const (
	// MaxFlows bounds Profile.Flows.
	MaxFlows = 1 << 22
	// MaxCycle bounds Profile.Cycle: a cycle costs 4 bytes per frame in the
	// XDP generator's order map, 136 bytes per distinct frame in its heads
	// map, and 8 bytes per frame for the byte counts.
	MaxCycle = 1 << 22
	// MaxHotSetWork bounds a hot set's phases times the profile's flows:
	// each phase splits its frames over every flow, and together the splits
	// cost no more than a profile of MaxFlows flows costs once.
	MaxHotSetWork = MaxFlows
	// MinFrameLen and MaxFrameLen bound frame lengths (without FCS): 60
	// bytes is Ethernet's minimum; the XDP generator's live frames must fit
	// one page with the kernel's headroom and tailroom.
	MinFrameLen = kernel.MinFrameLen
	MaxFrameLen = kernel.MaxFrameLen
)

// DefaultCycle is the cycle of a profile with flows flows that sets none:
// four frames per flow, at least 4096 and at most MaxCycle frames.
func DefaultCycle(flows int) int { return min(max(4096, 4*flows), MaxCycle) }

// cycle is p's cycle length.
func (p *Profile) cycle() int {
	if p.Cycle > 0 {
		return p.Cycle
	}
	return DefaultCycle(p.Flows)
}

// Validate checks the profile; its errors wrap ErrInvalidProfile.
func (p *Profile) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("profile %s: %w: %s", p.Name, ErrInvalidProfile, fmt.Sprintf(format, args...))
	}
	if len(p.Mix) == 0 {
		return bad("mix: no shapes")
	}
	seen := map[string]bool{}
	for _, sw := range p.Mix {
		switch {
		case sw.Shape.IsZero():
			return bad("mix: an entry has no shape")
		case seen[sw.Shape.String()]:
			return bad("mix: shape %s appears twice", sw.Shape)
		case !(sw.Weight > 0) || math.IsInf(sw.Weight, 0):
			return bad("mix: weight of %s is %g, want a number > 0", sw.Shape, sw.Weight)
		}
		seen[sw.Shape.String()] = true
	}
	if p.Flows < len(p.Mix) || p.Flows > MaxFlows {
		return bad("flows: %d, want %d (one per shape) to %d", p.Flows, len(p.Mix), MaxFlows)
	}
	if c := p.cycle(); p.Cycle < 0 || c < len(p.Mix) || c > MaxCycle {
		if p.Cycle < 0 {
			c = p.Cycle
		}
		return bad("cycle: %d frames, want %d (one per shape) to %d, or 0 for the default", c, len(p.Mix), MaxCycle)
	}
	switch fs := p.FlowSizes; fs.Dist {
	case Uniform:
	case Zipf:
		if !(fs.Exponent > 0) || math.IsInf(fs.Exponent, 0) {
			return bad("flow_sizes: zipf exponent %g, want a number > 0", fs.Exponent)
		}
	case Elephants:
		if !(fs.ElephantFlows > 0 && fs.ElephantFlows < 1) || !(fs.ElephantShare > 0 && fs.ElephantShare < 1) {
			return bad("flow_sizes: elephants %g of the flows with %g of the frames, want both strictly between 0 and 1", fs.ElephantFlows, fs.ElephantShare)
		}
	default:
		return bad("flow_sizes: unknown distribution %v", fs.Dist)
	}
	fs := p.FrameSizes
	if len(fs.Sizes) == 0 {
		if fs.Min < MinFrameLen || fs.Max > MaxFrameLen || fs.Min > fs.Max {
			return bad("frame_sizes: range %d-%d, want %d <= min <= max <= %d", fs.Min, fs.Max, MinFrameLen, MaxFrameLen)
		}
	}
	for _, sw := range fs.Sizes {
		if sw.Len < MinFrameLen || sw.Len > MaxFrameLen {
			return bad("frame_sizes: %d bytes, want %d to %d (without FCS)", sw.Len, MinFrameLen, MaxFrameLen)
		}
		if !(sw.Weight > 0) || math.IsInf(sw.Weight, 0) {
			return bad("frame_sizes: weight of %d bytes is %g, want a number > 0", sw.Len, sw.Weight)
		}
	}
	if !(p.ReplyShare >= 0 && p.ReplyShare <= 1) {
		return bad("reply_share: %g, want 0 to 1", p.ReplyShare)
	}
	if h := p.HotSet; h != (HotSet{}) {
		switch c := p.cycle(); {
		case h.Phases < 1 || h.Phases > c:
			return bad("hot_set: %d phases, want 1 to %d (the cycle's frames)", h.Phases, c)
		case h.Phases > MaxHotSetWork/p.Flows:
			return bad("hot_set: %d phases of %d flows each, want phases × flows <= %d", h.Phases, p.Flows, MaxHotSetWork)
		case h.Flows < 1 || h.Flows > p.Flows:
			return bad("hot_set: %d flows, want 1 to %d (the profile's flows)", h.Flows, p.Flows)
		case !(h.Share > 0 && h.Share < 1):
			return bad("hot_set: share %g, want a number strictly between 0 and 1", h.Share)
		case h.Step < 0 || h.Step > p.Flows:
			return bad("hot_set: step %d, want 0 to %d (the profile's flows)", h.Step, p.Flows)
		}
	}
	return nil
}

// mix builds a mix from names and weights, for the built-in profiles.
func mix(entries ...any) []ShapeWeight {
	var out []ShapeWeight
	for i := 0; i < len(entries); i += 2 {
		out = append(out, ShapeWeight{MustParseShape(entries[i].(string)), float64(entries[i+1].(int))})
	}
	return out
}

// builtins are the built-in profiles, by name.
var builtins = map[string]func() Profile{
	// simple: plain IPv4 and IPv6 TCP/UDP, equal flows, 64-byte frames.
	"simple": func() Profile {
		return Profile{
			Name: "simple", Flows: 1024, Cycle: 4096, Seed: 1,
			Mix:        mix("ipv4/tcp", 4, "ipv4/udp", 2, "ipv6/tcp", 1, "ipv6/udp", 1),
			FlowSizes:  FlowSizes{Dist: Uniform},
			FrameSizes: FixedSize(64),
		}
	},
	// datacenter: mostly untagged TCP, some VLAN, a few overlay tunnels,
	// heavy-tailed flows and IMIX frames, a third of them replies.
	"datacenter": func() Profile {
		return Profile{
			Name: "datacenter", Flows: 16384, Cycle: 65536, Seed: 1,
			Mix: mix("ipv4/tcp", 45, "ipv6/tcp", 15, "ipv4/udp", 10, "vlan/ipv4/tcp", 15,
				"vlan/ipv6/tcp", 5, "ipv4/gre/eth/ipv4/tcp", 5, "ipv6/ipv6/tcp", 3, "ipv6+label/tcp", 2),
			FlowSizes:  FlowSizes{Dist: Zipf, Exponent: 1.1},
			FrameSizes: IMIX(),
			ReplyShare: 0.35,
		}
	},
	// isp: an access and core network: PPPoE sessions, VLAN and QinQ
	// tagging, MPLS, some fragments; elephants and mice.
	"isp": func() Profile {
		return Profile{
			Name: "isp", Flows: 32768, Cycle: 65536, Seed: 1,
			Mix: mix("pppoe/ipv4/tcp", 20, "pppoe/ipv6/tcp", 8, "vlan/pppoe/ipv4/udp", 7,
				"vlan/ipv4/tcp", 15, "qinq/ipv4/tcp", 12, "qinq/ipv6/udp", 5,
				"mpls/ipv4/tcp", 15, "vlan/mpls/ipv4/udp", 8, "ipv4+frag/udp", 5, "ipv6+hbh/tcp", 3, "ipv6+frag/udp", 2),
			FlowSizes:  FlowSizes{Dist: Elephants, ElephantFlows: 0.02, ElephantShare: 0.6},
			FrameSizes: IMIX(),
			ReplyShare: 0.5,
		}
	},
	// tunnels: the IPIP family, GRE, VXLAN and GTP-U, under plain traffic.
	"tunnels": func() Profile {
		return Profile{
			Name: "tunnels", Flows: 8192, Cycle: 32768, Seed: 1,
			Mix: mix("ipv4/ipv4/tcp", 15, "ipv4/ipv6/tcp", 10, "ipv6/ipv4/udp", 10, "ipv6/ipv6/tcp", 10,
				"ipv4/gre/ipv4/tcp", 20, "ipv4/gre/ipv6/udp", 10, "ipv6/gre/ipv4/tcp", 5, "ipv4/gre/eth/ipv4/tcp", 10, "ipv4/tcp", 10,
				"ipv4/vxlan/eth/ipv4/tcp", 10, "ipv4/gtpu/ipv4/udp", 10),
			FlowSizes:  FlowSizes{Dist: Zipf, Exponent: 0.9},
			FrameSizes: SizeRange(64, 1500),
			ReplyShare: 0.25,
		}
	},
	// vxlan: an overlay between a few hypervisors (the four tunnel
	// endpoint pairs); the outer source port comes from the inner flow.
	"vxlan": func() Profile {
		return Profile{
			Name: "vxlan", Flows: 8192, Cycle: 32768, Seed: 1,
			Mix: mix("ipv4/vxlan/eth/ipv4/tcp", 60, "ipv4/vxlan/eth/ipv4/udp", 20, "ipv4/vxlan/eth/ipv6/tcp", 15,
				"vlan/ipv4/vxlan/eth/ipv4/tcp", 5),
			FlowSizes:  FlowSizes{Dist: Zipf, Exponent: 1.0},
			FrameSizes: IMIX(),
			ReplyShare: 0.3,
		}
	},
	// mobile: GTP-U user plane, many user flows inside four tunnels
	// (endpoint pairs and TEIDs) with the fixed outer source port 2152: to
	// a kernel that stops at the outer UDP header, four flows.
	"mobile": func() Profile {
		return Profile{
			Name: "mobile", Flows: 16384, Cycle: 65536, Seed: 1,
			Mix:        mix("ipv4/gtpu/ipv4/tcp", 60, "ipv4/gtpu/ipv4/udp", 25, "ipv4/gtpu/ipv6/tcp", 15),
			FlowSizes:  FlowSizes{Dist: Zipf, Exponent: 0.9},
			FrameSizes: IMIX(),
			ReplyShare: 0.4,
		}
	},
	// elephants, collide and hotset: uneven load for rebalancing
	// (profile_steering.go).
	"elephants": elephantsProfile,
	"collide":   collideProfile,
	"hotset":    hotSetProfile,
}

// Builtin returns the built-in profile name: simple, datacenter, isp,
// tunnels, vxlan, mobile, elephants, collide or hotset.
func Builtin(name string) (Profile, error) {
	b, ok := builtins[name]
	if !ok {
		return Profile{}, fmt.Errorf("profile %q: %w (built in: %s)", name, ErrUnknownProfile, strings.Join(BuiltinNames(), ", "))
	}
	return b(), nil
}

// BuiltinNames lists the built-in profiles.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
