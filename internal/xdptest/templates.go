package xdptest

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/xdphash/xdphash/corpus"
)

// Templates returns the template frames of a named mix for a synthetic
// source (with FlowPortOffset as its flow field): "default", every
// fast-path shape and a few frames only the slow path dissects, or
// "ipv4-tcp", one plain TCP template. The pipeline's tests and benchmarks
// run on them, so that their figures stay comparable across changes.
func Templates(name string) ([][]byte, error) {
	switch name {
	case "default":
		return defaultTemplates(), nil
	case "ipv4-tcp":
		return [][]byte{stack4(corpus.TCP{Src: 1025, Dst: 80, Flags: 0x10})}, nil
	}
	names := []string{"default", "ipv4-tcp"}
	slices.Sort(names)
	return nil, fmt.Errorf("unknown template mix %q: want one of %s", name, strings.Join(names, ", "))
}

// Addresses of the synthetic traffic: the benchmarking ranges.
var (
	synthSrc4, synthDst4 = netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.19.0.1")
	synthSrc6, synthDst6 = netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8:1::1")
)

func stack4(upper ...corpus.Layer) []byte {
	return corpus.Stack(append([]corpus.Layer{corpus.Ethernet{}, corpus.IPv4{TTL: 64, Src: synthSrc4, Dst: synthDst4}}, upper...)...)
}

// defaultTemplates spans every fast-path shape, mostly plain TCP and UDP over
// Ethernet as on most links, and a few frames the fast paths decline (IPv4
// options, a non-first fragment, an IPv6 extension header, ARP). Frame sizes
// vary so that byte and packet rates differ.
func defaultTemplates() [][]byte {
	tcp := corpus.TCP{Src: 1025, Dst: 80, Seq: 1, Flags: 0x10}
	udp := corpus.UDP{Src: 1025, Dst: 53}
	pad := func(n int) corpus.Payload { return make(corpus.Payload, n) }
	ip4 := corpus.IPv4{TTL: 64, Src: synthSrc4, Dst: synthDst4}
	ip6 := corpus.IPv6{HopLimit: 64, Src: synthSrc6, Dst: synthDst6}
	inner4 := corpus.IPv4{TTL: 64, Src: netip.MustParseAddr("198.18.1.1"), Dst: netip.MustParseAddr("198.19.1.1")}
	eth := corpus.Ethernet{}
	return [][]byte{
		// eth_ip: 13 of 23.
		corpus.Stack(eth, ip4, tcp),
		corpus.Stack(eth, ip4, tcp, pad(1460)),
		corpus.Stack(eth, ip4, tcp),
		corpus.Stack(eth, ip4, tcp, pad(536)),
		corpus.Stack(eth, ip4, tcp),
		corpus.Stack(eth, ip4, tcp, pad(1460)),
		corpus.Stack(eth, ip4, udp, pad(64)),
		corpus.Stack(eth, ip4, udp, pad(512)),
		corpus.Stack(eth, ip6, tcp),
		corpus.Stack(eth, ip6, tcp, pad(1440)),
		corpus.Stack(eth, ip6, udp, pad(64)),
		corpus.Stack(eth, ip4, tcp),
		corpus.Stack(eth, ip6, tcp),
		// One of each other shape.
		corpus.Stack(eth, corpus.VLAN{ID: 100}, ip4, tcp, pad(200)),
		corpus.Stack(eth, corpus.VLAN{TPID: 0x88a8, ID: 10}, corpus.VLAN{ID: 100}, ip4, udp, pad(100)),
		corpus.Stack(eth, corpus.PPPoE{Session: 42}, ip4, tcp, pad(100)),
		corpus.Stack(eth, corpus.MPLS{Label: 100, TTL: 64}, ip4, tcp, pad(100)),
		corpus.Stack(eth, ip4, inner4, tcp, pad(100)),
		corpus.Stack(eth, ip4, corpus.GRE{Flags: corpus.GREKey, Key: 7}, inner4, tcp, pad(100)),
		// The slow path's.
		corpus.Stack(eth, corpus.IPv4{TTL: 64, Src: synthSrc4, Dst: synthDst4, Options: []byte{0x94, 4, 0, 0}}, tcp),
		corpus.Stack(eth, corpus.IPv4{TTL: 64, Src: synthSrc4, Dst: synthDst4, Frag: 0x00b9}, udp, pad(64)),
		corpus.Stack(eth, ip6, corpus.IPv6Options{Type: 0}, udp, pad(64)),
		corpus.Stack(eth, corpus.ARP{Op: 1, SenderAddr: synthSrc4, TargetAddr: synthDst4}),
	}
}
