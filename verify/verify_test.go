package verify

import (
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
	d := Partition(build(tagIgnored(testKey)))
	if len(d) != 1 || !d[0].KernelSame || d[0].B.Name != "tagged" {
		t.Fatalf("tag ignored: got %v, want one kernel-same divergence for the tagged frame", d)
	}
	if s := d[0].String(); !strings.Contains(s, "metadata VLAN tag 0x8100:0x0064") {
		t.Errorf("report does not show the metadata tag:\n%s", s)
	}
}
