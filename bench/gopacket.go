package bench

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// FiveTuple is what a gopacket user extracts to steer a flow.
type FiveTuple struct {
	Src, Dst         [16]byte
	SrcPort, DstPort uint16
	Proto            uint8
}

// GopacketParser is the peer implementation: gopacket's DecodingLayerParser over
// preallocated layers (its fastest documented use), with the innermost IP
// addresses and the transport ports copied into a FiveTuple.
type GopacketParser struct {
	eth     layers.Ethernet
	dot1q   layers.Dot1Q
	ip4     layers.IPv4
	ip6     layers.IPv6
	gre     layers.GRE
	tcp     layers.TCP
	udp     layers.UDP
	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

// NewGopacketParser returns a parser for Ethernet, 802.1Q, IPv4, IPv6, GRE, TCP
// and UDP. gopacket has no DecodingLayer for PPPoE sessions or MPLS, so those
// shapes stop at their outer header.
func NewGopacketParser() *GopacketParser {
	p := &GopacketParser{decoded: make([]gopacket.LayerType, 0, 8)}
	p.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &p.eth, &p.dot1q, &p.ip4, &p.ip6, &p.gre, &p.tcp, &p.udp)
	p.parser.IgnoreUnsupported = true
	return p
}

// Parse decodes frame and fills t; false when no transport header was reached.
func (p *GopacketParser) Parse(frame []byte, t *FiveTuple) bool {
	_ = p.parser.DecodeLayers(frame, &p.decoded)
	*t = FiveTuple{}
	transport := false
	for _, l := range p.decoded {
		switch l {
		case layers.LayerTypeIPv4:
			copy(t.Src[:], p.ip4.SrcIP)
			copy(t.Dst[:], p.ip4.DstIP)
			t.Proto = uint8(p.ip4.Protocol)
		case layers.LayerTypeIPv6:
			copy(t.Src[:], p.ip6.SrcIP)
			copy(t.Dst[:], p.ip6.DstIP)
			t.Proto = uint8(p.ip6.NextHeader)
		case layers.LayerTypeTCP:
			t.SrcPort, t.DstPort = uint16(p.tcp.SrcPort), uint16(p.tcp.DstPort)
			transport = true
		case layers.LayerTypeUDP:
			t.SrcPort, t.DstPort = uint16(p.udp.SrcPort), uint16(p.udp.DstPort)
			transport = true
		}
	}
	return transport
}
