package xdptest

import (
	"net/netip"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
)

// portTCP is a TCP frame with IPv4 fragment field frag.
func portTCP(frag uint16) []byte {
	return corpus.Stack(corpus.Ethernet{},
		corpus.IPv4{TTL: 64, Frag: frag, Src: netip.MustParseAddr("198.18.0.1"), Dst: netip.MustParseAddr("198.19.0.1")},
		corpus.TCP{Src: 2794, Dst: 1766})
}

func TestFlowPortOffset(t *testing.T) {
	for _, tt := range []struct {
		name  string
		frame []byte
		want  int
	}{
		{"tcp", portTCP(0), 34},
		{"vlan", dissect.SampleFrame(dissect.ShapeVLAN), 38},
		{"gre inner", dissect.SampleFrame(dissect.ShapeGRE), 14 + 20 + 8 + 20},
		{"fragment", portTCP(0x2001), -1},
		{"arp", corpus.Stack(corpus.Ethernet{}, corpus.ARP{Op: 1}), -1},
	} {
		if got := FlowPortOffset(tt.frame); got != tt.want {
			t.Errorf("%s: offset %d, want %d", tt.name, got, tt.want)
		}
	}
}
