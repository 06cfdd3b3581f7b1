package verify

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

// ipv4TCP is eth + IPv4 198.18.0.1 -> 198.18.0.2 + TCP sport -> 80.
func ipv4TCP(sport uint16) []byte {
	return []byte{
		0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00, // Ethernet, IPv4
		0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, // IPv4 header, proto 6
		198, 18, 0, 1, 198, 18, 0, 2, // addresses
		byte(sport >> 8), byte(sport), 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0, // TCP
	}
}

var testKey = hash.Key{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// portsIgnored is a deliberately wrong flow hash: it hashes the keys with the ports
// zeroed, as a broken dissector would.
func portsIgnored(key hash.Key) FlowFunc {
	right := KernelFlow(key)
	h := hash.NewKernel(key)
	return func(frame []byte, tag dissect.VLANTag) (dissect.FlowKeys, bool, uint32) {
		k, ok, _ := right(frame, tag)
		noPorts := k
		clear(noPorts[dissect.OffPorts : dissect.OffPorts+4])
		v, _ := h.Hash(&noPorts)
		return k, ok, v
	}
}

func TestPartition(t *testing.T) {
	// Kernel hashes stand in for the oracle: frames 0 and 2 are one flow, 1 another.
	frames := [][]byte{ipv4TCP(1025), ipv4TCP(1026), ipv4TCP(1025)}
	kernel := []uint32{0x1111, 0x2222, 0x1111}
	build := func(flow FlowFunc) []Sample {
		var s []Sample
		for i, f := range frames {
			s = append(s, NewSample("f", f, flow, kernel[i]))
		}
		return s
	}
	if d := Partition(build(KernelFlow(testKey))); len(d) != 0 {
		t.Fatalf("right hash: %d divergences, want 0:\n%v", len(d), d)
	}
	d := Partition(build(portsIgnored(testKey)))
	if len(d) != 1 {
		t.Fatalf("ports ignored: %d divergences, want 1: %v", len(d), d)
	}
	if d[0].KernelSame || !slices.Contains(d[0].Fields, "sport") {
		t.Errorf("divergence = kernel same %v, fields %v; want kernel different, fields naming sport", d[0].KernelSame, d[0].Fields)
	}
	if s := d[0].String(); !strings.Contains(s, "kernel: different flows") || !strings.Contains(s, "sport") {
		t.Errorf("report does not say what the kernel said and which field:\n%s", s)
	}
}

func TestPartitionKernelMerges(t *testing.T) {
	// The kernel merges two frames xdphash separates: reported as kernel-same.
	a := NewSample("a", ipv4TCP(1), KernelFlow(testKey), 7)
	b := NewSample("b", ipv4TCP(2), KernelFlow(testKey), 7)
	d := Partition([]Sample{a, b})
	if len(d) != 1 || !d[0].KernelSame || !slices.Equal(d[0].Fields, []string{"sport"}) {
		t.Fatalf("got %v, want one kernel-same divergence naming sport", d)
	}
}

func TestPairs(t *testing.T) {
	a := NewSample("a", ipv4TCP(1), portsIgnored(testKey), 1)
	b := NewSample("b", ipv4TCP(2), portsIgnored(testKey), 2)
	c := NewSample("c", ipv4TCP(1), portsIgnored(testKey), 1)
	d := Pairs([][2]Sample{{a, b}, {a, c}})
	if len(d) != 1 || d[0].B.Name != "b" {
		t.Fatalf("got %v, want the (a, b) pair only", d)
	}
}

func TestDiffFieldsIgnoresDirection(t *testing.T) {
	fwd := ipv4TCP(1025)
	rev := slices.Clone(fwd)
	copy(rev[26:30], fwd[30:34])
	copy(rev[30:34], fwd[26:30])
	copy(rev[34:36], fwd[36:38])
	copy(rev[36:38], fwd[34:36])
	var a, b dissect.FlowKeys
	dissect.DissectFrame(&a, fwd, dissect.DefaultFlags)
	dissect.DissectFrame(&b, rev, dissect.DefaultFlags)
	if f := DiffFields(&a, &b); len(f) != 0 {
		t.Errorf("a frame and its reply differ in %v, want nothing", f)
	}
}

// tagIgnored is a deliberately wrong FlowFunc: it drops the metadata tag, as
// dissecting only the bytes an AF_XDP socket gets would.
func tagIgnored(key hash.Key) FlowFunc {
	right := KernelFlow(key)
	return func(frame []byte, _ dissect.VLANTag) (dissect.FlowKeys, bool, uint32) {
		return right(frame, dissect.VLANTag{})
	}
}

func TestPartitionTagged(t *testing.T) {
	// Kernel hashes stand in for the oracle: the frame with a metadata tag is
	// the flow of the frame with the tag in line, not of the bare frame.
	tag := dissect.VLANTag{TPID: dissect.EtherTypeVLAN, TCI: 100}
	bare := ipv4TCP(1025)
	inline := append(append(slices.Clone(bare[:12]), 0x81, 0x00, 0x00, 100), bare[12:]...)
	build := func(flow FlowFunc) []Sample {
		return []Sample{
			NewSample("bare", bare, flow, 0x1111),
			NewSample("inline", inline, flow, 0x2222),
			NewTaggedSample("tagged", bare, tag, flow, 0x2222),
		}
	}
	if d := Partition(build(KernelFlow(testKey))); len(d) != 0 {
		t.Fatalf("right flow: %d divergences, want 0:\n%v", len(d), d)
	}
	// The tagged frame has the bare frame's keys (the tag dropped), which
	// the kernel separates: a divergence no collision explains.
	d := Partition(build(tagIgnored(testKey)))
	if len(d) != 1 || d[0].KernelSame || d[0].A.Name != "bare" || d[0].B.Name != "tagged" || len(d[0].Fields) != 0 {
		t.Fatalf("tag ignored: got %v, want one divergence: the tagged frame has the bare frame's keys, which the kernel separates", d)
	}
	if s := d[0].String(); !strings.Contains(s, "metadata VLAN tag 0x8100:0x0064") {
		t.Errorf("report does not show the metadata tag:\n%s", s)
	}
}

// flowFrame is a TCP frame of flow i: addresses in 198.18.0.0/15 and ports
// from i.
func flowFrame(i int) []byte {
	f := ipv4TCP(uint16(1024 + i%30000))
	f[28], f[29] = byte(i>>16), byte(i>>8)
	f[33] = byte(i)
	return f
}

// TestPartitionCollisions: among 400000 distinct flows, a kernel that hashes
// with another key shares 32-bit hashes between different flows by chance
// on both sides (about 19 pairs each); those pairs are explained by
// collisions, not divergences. A wrong hash over the same flows still is.
func TestPartitionCollisions(t *testing.T) {
	const n = 400000
	kernelSide := KernelFlow(hash.Key{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0})
	run := func(flow FlowFunc) PartitionResult {
		p := NewPartitioner(4)
		for i := range n {
			f := flowFrame(i)
			_, _, kh := kernelSide(f, dissect.VLANTag{})
			p.Add(NewSample("f", f, flow, kh))
		}
		return p.Result()
	}
	r := run(KernelFlow(testKey))
	if r.Count != 0 || r.Flows != n {
		t.Errorf("right hash: %d divergences over %d flows, want 0 over %d: %v", r.Count, r.Flows, n, r.Divergences)
	}
	for side, c := range r.Collision {
		if c.Pairs == 0 || !c.Explained || c.Expected < 10 || c.Expected > 30 {
			t.Errorf("side %d: %+v, want some pairs, about 19 expected, explained", side, c)
		}
	}
	r = run(portsIgnored(testKey))
	if r.Count < 1000 || r.Collision[0].Explained {
		t.Errorf("ports ignored: %d divergences, %+v; want thousands, not explained", r.Count, r.Collision[0])
	}
}

// TestPartitionerMemory: the partitioner holds flows, not samples: two
// million samples of a thousand flows leave a heap of less than 4 MB, and
// past its bound on flows it counts samples as unchecked instead of holding
// them.
func TestPartitionerMemory(t *testing.T) {
	flow := KernelFlow(testKey)
	samples := make([]Sample, 1000)
	for i := range samples {
		f := flowFrame(i)
		samples[i] = NewSample("f", f, flow, uint32(i))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := NewPartitioner(20)
	for i := range 2_000_000 {
		p.Add(samples[i%len(samples)])
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if r := p.Result(); r.Samples != 2_000_000 || r.Flows != 1000 || r.Count != 0 {
		t.Fatalf("%+v", r)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4<<20 {
		t.Errorf("heap grew by %d bytes over 2M samples of 1000 flows, want under 4 MB", grown)
	}
	runtime.KeepAlive(p)

	p = NewPartitioner(20)
	p.maxFlows = 10
	for i := range 15 {
		p.Add(samples[i])
	}
	p.Add(samples[3])
	if r := p.Result(); r.Flows != 10 || r.Unchecked != 5 || r.Samples != 16 {
		t.Errorf("past the bound: %+v, want 10 flows, 5 unchecked, 16 samples", r)
	}
}
