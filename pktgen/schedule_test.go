package pktgen

import (
	"bytes"
	"math"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

// testDst is the receiver MAC of the schedules built here.
var testDst = net.HardwareAddr{0x02, 0x78, 0x68, 0, 0, 1}

// newSchedule builds p's schedule to testDst, failing the test on error.
func newSchedule(tb testing.TB, p Profile) *Schedule {
	tb.Helper()
	s, err := NewSchedule(p, MACs{Dst: testDst})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// builtinSchedules builds every built-in profile's schedule once per test
// binary: together they take about a second.
var builtinSchedules = map[string]*Schedule{}

func builtinSchedule(tb testing.TB, name string) *Schedule {
	tb.Helper()
	if s, ok := builtinSchedules[name]; ok {
		return s
	}
	p, err := Builtin(name)
	if err != nil {
		tb.Fatal(err)
	}
	s := newSchedule(tb, p)
	builtinSchedules[name] = s
	return s
}

// TestScheduleMix checks a cycle against its profile. The stated tolerances:
// each shape's frames and reply frames are within one frame of their exact
// shares (largest remainder rounding); weighted frame lengths within one
// frame of theirs; a range of lengths has a mean within 4 standard errors of
// the range's midpoint.
func TestScheduleMix(t *testing.T) {
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			s := builtinSchedule(t, name)
			p := s.Profile()
			L := float64(s.Len())
			var W float64
			for _, sw := range p.Mix {
				W += sw.Weight
			}
			flows := 0
			for i, c := range s.Mix() {
				want := L * p.Mix[i].Weight / W
				if math.Abs(float64(c.Frames)-want) >= 1 {
					t.Errorf("%s: %d frames, want %.2f ± 1", c.Shape, c.Frames, want)
				}
				wantReply := float64(c.Frames) * p.ReplyShare
				if math.Abs(float64(c.Reply)-wantReply) > 0.5 {
					t.Errorf("%s: %d reply frames of %d, want %.2f ± 0.5", c.Shape, c.Reply, c.Frames, wantReply)
				}
				flows += c.Flows
			}
			if flows != s.Flows() {
				t.Errorf("shapes have %d flows, schedule %d", flows, s.Flows())
			}
			// Lengths only: hotset's cycle is millions of frames.
			lens := make([]int, s.Len())
			st := s.Stream(1)
			for i := range lens {
				lens[i] = len(st.Next())
			}
			if fs := p.FrameSizes; len(fs.Sizes) > 0 {
				// Lengths are raised to the headers' length, which stays
				// below every weighted length but the smallest here.
				for i, sw := range fs.Sizes[1:] {
					n := 0
					for _, l := range lens {
						if l == sw.Len {
							n++
						}
					}
					want := L * sw.Weight / totalWeight(fs.Sizes)
					if math.Abs(float64(n)-want) >= 1 {
						t.Errorf("frames of %d bytes (weight %d): %d, want %.2f ± 1", sw.Len, i+1, n, want)
					}
				}
			} else {
				var sum float64
				for _, l := range lens {
					sum += float64(l)
				}
				mid := float64(fs.Min+fs.Max) / 2
				se := float64(fs.Max-fs.Min+1) / math.Sqrt(12) / math.Sqrt(L)
				if mean := sum / L; math.Abs(mean-mid) > 4*se+1 {
					t.Errorf("mean length %.1f, want %.1f ± %.1f", mean, mid, 4*se+1)
				}
			}
		})
	}
}

func totalWeight(ws []SizeWeight) float64 {
	var sum float64
	for _, w := range ws {
		sum += w.Weight
	}
	return sum
}

// TestScheduleFlowSizes checks the flow-size distributions against their
// closed forms: a shape's k-th largest flow has its share of the shape's
// frames to within one frame.
func TestScheduleFlowSizes(t *testing.T) {
	tests := []struct {
		name  string
		sizes FlowSizes
		share func(k, n int) float64 // share of the k-th largest of n flows (from 0)
	}{
		{"uniform", FlowSizes{Dist: Uniform}, func(k, n int) float64 { return 1 / float64(n) }},
		{"zipf 1", FlowSizes{Dist: Zipf, Exponent: 1}, func(k, n int) float64 {
			var h float64
			for i := 1; i <= n; i++ {
				h += 1 / float64(i)
			}
			return 1 / float64(k+1) / h
		}},
		{"elephants", FlowSizes{Dist: Elephants, ElephantFlows: 0.1, ElephantShare: 0.8}, func(k, n int) float64 {
			if k < n/10 {
				return 0.8 / float64(n/10)
			}
			return 0.2 / float64(n-n/10)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Profile{Name: tt.name, Flows: 100, Cycle: 10000, Mix: mix("ipv4/udp", 1), FlowSizes: tt.sizes, FrameSizes: FixedSize(64)}
			s := newSchedule(t, p)
			counts := map[uint32]int{}
			for _, k := range s.table.Order {
				counts[s.frameFlow[k]]++
			}
			var sorted []int
			for _, c := range counts {
				sorted = append(sorted, c)
			}
			slices.SortFunc(sorted, func(a, b int) int { return b - a })
			for k, c := range sorted {
				if want := float64(s.Len()) * tt.share(k, p.Flows); math.Abs(float64(c)-want) >= 1 {
					t.Errorf("flow %d: %d frames, want %.2f ± 1", k, c, want)
				}
			}
		})
	}
}

// TestScheduleFlows dissects and hashes every frame of each built-in
// profile the way the kernel does and checks that the flows the generator
// wrote are the flows the kernel sees: one hash per flow, the same for both
// directions, except where the kernel's dissector stops before the flow's
// fields (MPLS: one flow per VLAN tag in front of it; GTP-U: one per
// tunnel), and, with every UDP tunnel descended into, one hash per flow.
func TestScheduleFlows(t *testing.T) {
	// A fixed key: the test counts a shape's flows by their 32-bit hashes,
	// and with a random key thousands of flows collide now and then (about
	// one run in a thousand per shape of 3,000 flows).
	h := hash.NewKernel(hash.Key{0x78, 0x64, 0x70, 0x68, 0x61, 0x73, 0x68})
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			s := builtinSchedule(t, name)
			hashes := make([]map[uint32]bool, len(s.Profile().Mix))
			descended := make([]map[uint32]bool, len(hashes))
			vlans := make([]map[uint16]bool, len(hashes))
			for i := range hashes {
				hashes[i], descended[i], vlans[i] = map[uint32]bool{}, map[uint32]bool{}, map[uint16]bool{}
			}
			all, err := dissect.NewDescent(dissect.AllTunnels)
			if err != nil {
				t.Fatal(err)
			}
			byFlow := map[uint32]uint32{}
			var keys dissect.FlowKeys
			st := s.Stream(1)
			for pos := range s.Len() {
				f := st.Next()
				k := s.table.Order[pos]
				shape, flow := s.frameShape[k], s.frameFlow[k]
				keys = dissect.FlowKeys{}
				if !dissect.DissectFrame(&keys, f, dissect.DefaultFlags) {
					t.Fatalf("position %d (%s): the dissector rejects the frame %x", pos, s.Profile().Mix[shape].Shape, f)
				}
				v, _ := h.Hash(&keys)
				hashes[shape][v] = true
				var dk dissect.FlowKeys
				dissect.DissectFrameDescend(&dk, f, dissect.DefaultFlags, all)
				dv, _ := h.Hash(&dk)
				descended[shape][dv] = true
				vlans[shape][keys.VLANID()] = true
				if prev, ok := byFlow[flow]; ok && prev != v {
					t.Fatalf("position %d: flow %d hashes to %#x and %#x (direction?)", pos, flow, prev, v)
				}
				byFlow[flow] = v
			}
			for i, c := range s.Mix() {
				want, wantDescended := c.Flows, c.Flows
				switch name := c.Shape.String(); {
				case strings.Contains(name, "mpls"):
					want, wantDescended = len(vlans[i]), len(vlans[i])
				case strings.Contains(name, "gtpu"):
					// The outer headers alone: one flow per tunnel.
					want = min(4, c.Flows)
				}
				if got := len(hashes[i]); got != want {
					t.Errorf("%s: %d distinct kernel flows, want %d", c.Shape, got, want)
				}
				if got := len(descended[i]); got != wantDescended {
					t.Errorf("%s: %d distinct flows with every tunnel descended into, want %d", c.Shape, got, wantDescended)
				}
			}
		})
	}
}

// TestScheduleAddresses decodes every distinct frame with gopacket (another
// parser than ours) and checks the address rules: MACs, and every IPv4 and
// IPv6 address in every header, outer and inner.
func TestScheduleAddresses(t *testing.T) {
	v4, v6 := netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("2001:db8::/32")
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			s := builtinSchedule(t, name)
			seen := map[uint32]bool{}
			st := s.Stream(1)
			for pos := range s.Len() {
				f := st.Next()
				if seen[s.table.Order[pos]] {
					continue
				}
				seen[s.table.Order[pos]] = true
				if !bytes.Equal(f[:6], testDst) || f[6]&0x02 == 0 || f[6]&0x01 != 0 {
					t.Fatalf("position %d: MACs %x -> %x: want to %s from a locally administered unicast address", pos, f[6:12], f[:6], testDst)
				}
				pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
				// gopacket guesses application layers from ports: their
				// errors on our zero payloads do not count.
				if el := pkt.ErrorLayer(); el != nil && pkt.TransportLayer() == nil && !isFragmentPayload(pkt) {
					t.Fatalf("position %d: gopacket: %v", pos, el.Error())
				}
				for _, l := range pkt.Layers() {
					var addrs []net.IP
					switch ip := l.(type) {
					case *layers.IPv4:
						addrs = []net.IP{ip.SrcIP, ip.DstIP}
					case *layers.IPv6:
						addrs = []net.IP{ip.SrcIP, ip.DstIP}
					case *layers.Ethernet:
						if ip.SrcMAC[0]&0x02 == 0 || ip.DstMAC[0]&0x02 == 0 {
							t.Fatalf("position %d: inner Ethernet %s -> %s not locally administered", pos, ip.SrcMAC, ip.DstMAC)
						}
					}
					for _, a := range addrs {
						na, _ := netip.AddrFromSlice(a)
						if na = na.Unmap(); !v4.Contains(na) && !v6.Contains(na) {
							t.Fatalf("position %d: address %s outside 198.18.0.0/15 and 2001:db8::/32", pos, na)
						}
					}
				}
			}
		})
	}
}

// isFragmentPayload tells gopacket's complaint about a later fragment's
// payload (which has no L4 header) from a real decoding error.
func isFragmentPayload(pkt gopacket.Packet) bool {
	if l := pkt.Layer(layers.LayerTypeIPv6Fragment); l != nil {
		return true
	}
	ip, ok := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	return ok && (ip.Flags&layers.IPv4MoreFragments != 0 || ip.FragOffset != 0)
}

// TestStream checks that a stream yields the cycle's frames, cycling,
// without allocating.
func TestStream(t *testing.T) {
	s := builtinSchedule(t, "tunnels")
	frames := s.Frames()
	st := s.Stream(4)
	for i := range 2*len(frames) + 3 {
		if f := st.Next(); !bytes.Equal(f, frames[i%len(frames)]) {
			t.Fatalf("frame %d differs from position %d", i, i%len(frames))
		}
	}
	if allocs := testing.AllocsPerRun(1000, func() { st.Next() }); allocs != 0 {
		t.Errorf("Next allocates %.1f times per frame", allocs)
	}
	if s2 := builtinSchedule(t, "simple"); !slices.EqualFunc(s2.Frames(), newSchedule(t, s2.Profile()).Frames(), bytes.Equal) {
		t.Error("the same profile built twice gives different frames")
	}
}

// TestScheduleBytes checks Bytes against a sum over the frames.
func TestScheduleBytes(t *testing.T) {
	s := builtinSchedule(t, "tunnels")
	frames := s.Frames()
	for _, tt := range []struct{ start, n uint64 }{{0, 0}, {0, 1}, {5, 100}, {uint64(len(frames)) - 3, 10}, {7, 3*uint64(len(frames)) + 11}} {
		var want uint64
		for i := range tt.n {
			want += uint64(len(frames[(tt.start+i)%uint64(len(frames))]))
		}
		if got := s.Bytes(tt.start, tt.n); got != want {
			t.Errorf("Bytes(%d, %d) = %d, want %d", tt.start, tt.n, got, want)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		count         uint64
		threads, cyc  int
		quota, starts []uint64
	}{
		{10, 1, 4, []uint64{10}, []uint64{0}},
		{10, 3, 4, []uint64{4, 3, 3}, []uint64{0, 0, 3}},
		{8, 2, 8, []uint64{4, 4}, []uint64{0, 4}},
		{1, 2, 8, []uint64{1, 0}, []uint64{0, 1}},
		{0, 2, 8, []uint64{unbounded, unbounded}, []uint64{0, 4}},
	}
	for _, tt := range tests {
		q, s := split(tt.count, tt.threads, tt.cyc)
		if !slices.Equal(q, tt.quota) || !slices.Equal(s, tt.starts) {
			t.Errorf("split(%d, %d, %d) = %v, %v, want %v, %v", tt.count, tt.threads, tt.cyc, q, s, tt.quota, tt.starts)
		}
	}
}

// TestScheduleHugeWeights builds schedules whose weights are each finite but
// whose sum overflows a float64: the shares are those of the weights'
// ratios.
func TestScheduleHugeWeights(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
	}{
		{"one mix weight", "flows: 8\ncycle: 64\nmix: {ipv4/tcp: 1e308}\n"},
		{"mix sum overflows", "flows: 8\ncycle: 64\nmix: {ipv4/tcp: 1e308, ipv6/udp: 1e308}\n"},
		{"frame sizes sum overflows", "flows: 8\ncycle: 64\nmix: {ipv4/tcp: 1}\nframe_sizes: {64: 1e308, 128: 1e308}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tt.yaml), tt.name)
			if err != nil {
				t.Fatal(err)
			}
			s := newSchedule(t, p)
			if s.Len() != 64 {
				t.Errorf("cycle of %d frames, want 64", s.Len())
			}
			for _, sc := range s.Mix() {
				if want := 64 / len(p.Mix); sc.Frames != want {
					t.Errorf("shape %s: %d frames, want %d", sc.Shape, sc.Frames, want)
				}
			}
			if len(p.FrameSizes.Sizes) == 2 {
				var short int
				for _, f := range s.Frames() {
					if len(f) == 64 {
						short++
					}
				}
				if short != 32 {
					t.Errorf("%d frames of 64 bytes, want 32 of 64", short)
				}
			}
		})
	}
}

func TestNewScheduleErrors(t *testing.T) {
	p := Profile{Name: "x", Flows: 2, Cycle: 10, Mix: mix("ipv4/tcp", 1000, "ipv6/tcp", 1), FrameSizes: FixedSize(64)}
	if _, err := NewSchedule(p, MACs{Dst: testDst}); err == nil || !strings.Contains(err.Error(), "gives shape ipv6/tcp no frame") {
		t.Errorf("tiny weight: %v", err)
	}
	p = Profile{Name: "x", Flows: 2, Mix: mix("ipv6/gre/ipv6/gre/ipv6/tcp", 1), FrameSizes: FixedSize(64)}
	if _, err := NewSchedule(p, MACs{Dst: testDst}); err == nil || !strings.Contains(err.Error(), "bytes of headers") {
		t.Errorf("long headers: %v", err)
	}
	p, _ = Builtin("simple")
	if _, err := NewSchedule(p, MACs{}); err == nil || !strings.Contains(err.Error(), "destination MAC") {
		t.Errorf("no destination: %v", err)
	}
}
