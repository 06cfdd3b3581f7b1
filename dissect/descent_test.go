package dissect_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
)

// Named frames of the descent's tests. Outer 198.18.0.1 -> 198.19.0.2,
// inner 198.18.1.1 -> 198.19.1.2 (or 2001:db8:a::1 -> 2001:db8:b::2), inner
// TCP/UDP 1025 -> 80/53.
var (
	a4, b4   = netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.19.0.2")
	a4i, b4i = netip.MustParseAddr("198.18.1.1"), netip.MustParseAddr("198.19.1.2")
	a6, b6   = netip.MustParseAddr("2001:db8::1:0:0:1"), netip.MustParseAddr("2001:db8::2")
	a6i, b6i = netip.MustParseAddr("2001:db8:a::1"), netip.MustParseAddr("2001:db8:b::2")
	teb      = corpus.Ethernet{Dst: [6]byte{2, 0, 0, 0, 0, 3}, Src: [6]byte{2, 0, 0, 0, 0, 4}}
	in4      = corpus.IPv4{TTL: 64, Src: a4i, Dst: b4i}
	out4     = corpus.IPv4{TTL: 64, Src: a4, Dst: b4}
	in6      = corpus.IPv6{HopLimit: 64, Src: a6i, Dst: b6i}
	out6     = corpus.IPv6{HopLimit: 64, Src: a6, Dst: b6}
	innerTCP = corpus.TCP{Src: 1025, Dst: 80, Flags: 2}
	vxlanHdr = corpus.VXLAN{Flags: corpus.VXLANFlagVNI, VNI: 42}
)

func vxlanFrame(layers ...corpus.Layer) []byte {
	return corpus.Stack(append([]corpus.Layer{corpus.Ethernet{}, out4, corpus.UDP{Src: 49152, Dst: 4789}, vxlanHdr, teb}, layers...)...)
}

func gtpuFrame(layers ...corpus.Layer) []byte {
	return corpus.Stack(append([]corpus.Layer{corpus.Ethernet{}, out4, corpus.UDP{Src: 2152, Dst: 2152}, corpus.GTPU{TEID: 7}}, layers...)...)
}

// descend dissects frame under the corpus's policy entering ts.
func descend(tb testing.TB, frame []byte, ts dissect.Tunnels, flags dissect.Flags) (dissect.FlowKeys, bool) {
	tb.Helper()
	var k dissect.FlowKeys
	ok := dissect.DissectFrameDescend(&k, frame, flags, corpusDescent(ts))
	return k, ok
}

func ports(k dissect.FlowKeys) [4]byte { return [4]byte(k[dissect.OffPorts:]) }

// TestDescentEntersEachTunnel: each tunnel's base frame is entered by its
// own tunnel's policy alone, which sets FLOW_DIS_ENCAPSULATION and gives the
// inner flow's keys (those of the inner packet alone, hashed region), and by
// no other.
func TestDescentEntersEachTunnel(t *testing.T) {
	cases := []struct {
		t      dissect.Tunnel
		frame  []byte
		inner  []byte // the inner packet as an Ethernet frame
		nProto uint16
	}{
		{dissect.TunnelVXLAN, vxlanFrame(in4, innerTCP), corpus.Stack(teb, in4, innerTCP), 0x0800},
		{dissect.TunnelGeneve, corpus.Stack(corpus.Ethernet{}, out4, corpus.UDP{Src: 5, Dst: 6081}, corpus.Geneve{VNI: 1}, teb, in6, innerTCP), corpus.Stack(teb, in6, innerTCP), 0x86dd},
		{dissect.TunnelGTPU, gtpuFrame(in4, innerTCP), corpus.Stack(corpus.Ethernet{}, in4, innerTCP), 0x0800},
		{dissect.TunnelGUE, corpus.Stack(corpus.Ethernet{}, out6, corpus.UDP{Src: 5, Dst: corpus.GUEPort}, corpus.GUE{}, in6, innerTCP), corpus.Stack(corpus.Ethernet{}, in6, innerTCP), 0x86dd},
		{dissect.TunnelFOU, corpus.Stack(corpus.Ethernet{}, out4, corpus.UDP{Src: 5, Dst: corpus.FOUPortIPIP}, in4, innerTCP), corpus.Stack(corpus.Ethernet{}, in4, innerTCP), 0x0800},
	}
	for _, tc := range cases {
		var plain, inner dissect.FlowKeys
		dissect.DissectFrame(&plain, tc.frame, dissect.DefaultFlags)
		dissect.DissectFrame(&inner, tc.inner, dissect.DefaultFlags)
		for u := range dissect.NumTunnels {
			k, ok := descend(t, tc.frame, dissect.Tunnels(0).With(u), dissect.DefaultFlags)
			if u != tc.t {
				if k != plain {
					t.Errorf("%v frame under %v: keys %x, want the outer keys %x", tc.t, u, k[:], plain[:])
				}
				continue
			}
			if !ok || k.Flags()&dissect.FlagEncapsulation == 0 || k.NProto() != tc.nProto {
				t.Errorf("%v: ok=%v flags %#x n_proto %#x, want true, encapsulation, %#x", tc.t, ok, k.Flags(), k.NProto(), tc.nProto)
			}
			if got, want := hashedRegion(k), hashedRegion(inner); string(got) != string(want) {
				t.Errorf("%v: hashed region\n got %x\nwant %x (the inner packet's)", tc.t, got, want)
			}
		}
	}
}

// TestDescentNearMissesKeepOuterKeys: every near miss of the corpus's UDP
// tunnel families (a wrong port, VXLAN-GBP/GPE, Geneve options, OAM or
// version 1, GTP-U with E, S or PN, another message type, GTPv0, an IPv6
// outer where the tunnel wants IPv4, an inner VLAN, ...) keeps the outer
// keys under every tunnel.
func TestDescentNearMissesKeepOuterKeys(t *testing.T) {
	n := 0
	for _, f := range corpus.Build() {
		if !strings.HasPrefix(f.Mutation(), corpus.MissPrefix) {
			continue
		}
		n++
		var plain dissect.FlowKeys
		dissect.DissectFrame(&plain, f.Data, dissect.DefaultFlags)
		if k, _ := descend(t, f.Data, dissect.AllTunnels, dissect.DefaultFlags); k != plain {
			t.Errorf("%s: descended: keys %x, want the outer keys %x", f.Name, k[:], plain[:])
		}
	}
	if n < 30 {
		t.Errorf("%d near misses in the corpus, want every match condition", n)
	}
}

// TestDescentOff: the zero policy changes no key of any corpus frame.
func TestDescentOff(t *testing.T) {
	for _, f := range corpus.Build() {
		var plain dissect.FlowKeys
		okp := dissect.DissectFrame(&plain, f.Data, dissect.DefaultFlags)
		if k, ok := descend(t, f.Data, 0, dissect.DefaultFlags); k != plain || ok != okp {
			t.Fatalf("%s: keys %x under no descent, want %x", f.Name, k[:], plain[:])
		}
	}
}

// TestDescentQuirkInnerFlowLabelKeepsOuterPorts: an inner IPv6 header with
// a non-zero flow label ends the dissection there under skb_get_hash's
// flags (STOP_AT_FLOW_LABEL), so the outer UDP ports stay in the keys.
func TestDescentQuirkInnerFlowLabelKeepsOuterPorts(t *testing.T) {
	labelled := in6
	labelled.FlowLabel = 0xbeef
	f := gtpuFrame(labelled, innerTCP)
	k, ok := descend(t, f, dissect.AllTunnels, dissect.DefaultFlags)
	if want := [4]byte{0x08, 0x68, 0x08, 0x68}; !ok || ports(k) != want || k.FlowLabel() != 0xbeef || k.Flags()&dissect.FlagEncapsulation == 0 {
		t.Errorf("ok=%v ports %x label %#x flags %#x, want true, the outer ports %x, 0xbeef, encapsulation", ok, ports(k), k.FlowLabel(), k.Flags(), want)
	}
}

// TestDescentQuirkInnerFragmentKeepsOuterPorts: an inner IPv4 fragment ends
// the dissection at its header; no L4 pass follows to replace the outer
// UDP ports.
func TestDescentQuirkInnerFragmentKeepsOuterPorts(t *testing.T) {
	frag := in4
	frag.Frag = 0x2000
	k, _ := descend(t, vxlanFrame(frag, innerTCP), dissect.AllTunnels, dissect.DefaultFlags)
	if want := [4]byte{0xc0, 0x00, 0x12, 0xb5}; ports(k) != want || k.Flags()&dissect.FlagIsFragment == 0 {
		t.Errorf("ports %x flags %#x, want the outer ports %x and a fragment", ports(k), k.Flags(), want)
	}
}

// TestDescentInnerICMPClearsPorts: a protocol without ports inside the
// tunnel writes a zero ports word, as every L4 pass does.
func TestDescentInnerICMPClearsPorts(t *testing.T) {
	k, _ := descend(t, vxlanFrame(in4, corpus.ICMP{Type: 8}), dissect.AllTunnels, dissect.DefaultFlags)
	if ports(k) != [4]byte{} || k.IPProto() != 1 {
		t.Errorf("ports %x ip_proto %d, want zero ports, ICMP", ports(k), k.IPProto())
	}
}

// TestDescentQuirkOuterVLANKept: the outer tag stays the VLAN key, with the
// outer ethertype after it (not the inner frame's).
func TestDescentQuirkOuterVLANKept(t *testing.T) {
	f := corpus.Stack(corpus.Ethernet{}, corpus.VLAN{ID: 100}, out4, corpus.UDP{Src: 1, Dst: 4789}, vxlanHdr, teb, in6, corpus.UDP{Src: 1025, Dst: 53})
	k, _ := descend(t, f, dissect.AllTunnels, dissect.DefaultFlags)
	if got := k[dissect.OffVLANTCI : dissect.OffVLANTCI+6]; string(got) != "\x64\x00\x81\x00\x08\x00" || k.NProto() != 0x86dd {
		t.Errorf("VLAN key %x n_proto %#x, want 64 00 81 00 08 00 and 0x86dd", got, k.NProto())
	}
}

// TestDescentQuirkIPv4InsideIPv6KeepsAddressTail: an inner IPv4 header
// behind an outer IPv6 one (FOU, GUE) writes only 8 bytes of the address
// union; the IPv4 hashed region's last 4 bytes are the outer source
// address's bytes 8..11.
func TestDescentQuirkIPv4InsideIPv6KeepsAddressTail(t *testing.T) {
	f := corpus.Stack(corpus.Ethernet{}, out6, corpus.UDP{Src: 1, Dst: corpus.FOUPortIPIP}, in4, innerTCP)
	k, _ := descend(t, f, dissect.AllTunnels, dissect.DefaultFlags)
	src := a6.As16()
	if k.AddrType() != dissect.AddrIPv4 || string(k[52:56]) != string(src[8:12]) {
		t.Errorf("addr_type %v bytes 52..55 %x, want ipv4 and the outer source's bytes 8..11 %x", k.AddrType(), k[52:56], src[8:12])
	}
}

// TestDescentQuirkGTPUAsksIPv4Room: GTP-U descends only when an IPv4
// header's room (20 bytes) follows its header, for an inner IPv6 header
// too; with that room but not 40 bytes, the inner IPv6 step fails, after
// the descent.
func TestDescentQuirkGTPUAsksIPv4Room(t *testing.T) {
	f := gtpuFrame(in6, innerTCP)
	udpOff := 14 + 20
	k, ok := descend(t, f[:udpOff+16+20], dissect.AllTunnels, dissect.DefaultFlags)
	if ok || k.Flags()&dissect.FlagEncapsulation == 0 || k.NProto() != 0x86dd {
		t.Errorf("cut after 20 inner bytes: ok=%v flags %#x n_proto %#x, want false, encapsulation, 0x86dd", ok, k.Flags(), k.NProto())
	}
	k, ok = descend(t, f[:udpOff+16+19], dissect.AllTunnels, dissect.DefaultFlags)
	if !ok || k.Flags()&dissect.FlagEncapsulation != 0 {
		t.Errorf("cut after 19 inner bytes: ok=%v flags %#x, want the outer dissection", ok, k.Flags())
	}
}

// TestDescentStops: STOP_AT_ENCAP and STOP_BEFORE_ENCAP callers, and an
// outer first fragment parsed with PARSE_1ST_FRAG, keep the outer keys.
func TestDescentStops(t *testing.T) {
	frag := out4
	frag.Frag = 0x2000
	for _, tc := range []struct {
		name  string
		frame []byte
		flags dissect.Flags
	}{
		{"stop-at-encap", vxlanFrame(in4, innerTCP), dissect.FlagStopAtEncap},
		{"stop-before-encap", vxlanFrame(in4, innerTCP), dissect.FlagStopBeforeEncap},
		{"first-fragment", corpus.Stack(corpus.Ethernet{}, frag, corpus.UDP{Src: 1, Dst: 4789}, vxlanHdr, teb, in4, innerTCP), dissect.FlagParse1stFrag},
	} {
		var plain dissect.FlowKeys
		dissect.DissectFrame(&plain, tc.frame, tc.flags)
		if k, _ := descend(t, tc.frame, dissect.AllTunnels, tc.flags); k != plain {
			t.Errorf("%s: keys %x, want the outer keys %x", tc.name, k[:], plain[:])
		}
	}
}

// TestDescentBound: a chain of VXLAN inside VXLAN descends as many times as
// the re-dispatch bound allows; the request past it ends as a success with
// the next inner header's ethertype and offset.
func TestDescentBound(t *testing.T) {
	var layers []corpus.Layer
	for range 20 {
		layers = append(layers, out4, corpus.UDP{Src: 1, Dst: 4789}, vxlanHdr, teb)
	}
	f := corpus.Stack(append(append([]corpus.Layer{corpus.Ethernet{}}, layers...), in4, innerTCP)...)
	d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
	d.SetDescent(corpusDescent(dissect.AllTunnels))
	var k dissect.FlowKeys
	ok, _ := d.DissectFrame(&k, f)
	const per = 20 + 8 + 8 + 14
	if want := 14 + (dissect.MaxReDispatch+1)*per; !ok || int(k.THoff()) != want || k.Flags()&dissect.FlagEncapsulation == 0 {
		t.Errorf("ok=%v thoff %d flags %#x, want true, %d, encapsulation", ok, k.THoff(), k.Flags(), want)
	}
	if got := d.Counters().Descended[dissect.TunnelVXLAN]; got != dissect.MaxReDispatch+1 {
		t.Errorf("%d VXLAN descents counted, want %d", got, dissect.MaxReDispatch+1)
	}
}

// TestDescentCountsAndDeclines: a Dissector with every gate open takes a
// GTP-U frame by the gtpu fast path under a policy entering GTP-U, declines
// a UDP frame the policy descends into that another fast path would end at
// its outer UDP header (behind a VLAN tag), and counts each descent per
// tunnel.
func TestDescentCountsAndDeclines(t *testing.T) {
	d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
	d.SetDescent(corpusDescent(dissect.Tunnels(0).With(dissect.TunnelGTPU)))
	var k dissect.FlowKeys
	if _, path := d.DissectFrame(&k, gtpuFrame(in4, innerTCP)); path != dissect.FastPath(dissect.ShapeGTPU) {
		t.Errorf("GTP-U frame took %v, want fast:gtpu", path)
	}
	tagged := corpus.Stack(corpus.Ethernet{}, corpus.VLAN{ID: 5}, out4, corpus.UDP{Src: 2152, Dst: 2152}, corpus.GTPU{TEID: 7}, in4, innerTCP)
	if _, path := d.DissectFrame(&k, tagged); path != dissect.PathSlow {
		t.Errorf("GTP-U frame behind a VLAN tag took %v, want the slow path", path)
	}
	if _, path := d.DissectFrame(&k, vxlanFrame(in4, innerTCP)); path != dissect.FastPath(dissect.ShapeEthIP) {
		t.Errorf("VXLAN frame (not descended) took %v, want fast:eth_ip", path)
	}
	c := d.Counters()
	if c.Descended != (dissect.TunnelCounts{dissect.TunnelGTPU: 2}) || c.Shape[dissect.ShapeVLAN].Declined != 1 || c.Shape[dissect.ShapeGTPU].Fast != 1 {
		t.Errorf("descended %v, vlan declines %d, gtpu fast %d; want two GTP-U descents, one decline, one fast", c.Descended, c.Shape[dissect.ShapeVLAN].Declined, c.Shape[dissect.ShapeGTPU].Fast)
	}
}

// TestTunnelFastPaths holds the vxlan and gtpu fast paths to the descended
// keys of each inner family and transport, under the policy entering their
// tunnel and under every tunnel with the corpus's FOU table; checks the
// frames they decline (the slow path then descends, or does not) and that
// without a policy their frames are eth_ip's; and that they allocate
// nothing.
func TestTunnelFastPaths(t *testing.T) {
	innerUDP := corpus.UDP{Src: 1025, Dst: 53}
	labelled := in6
	labelled.FlowLabel = 0x12345
	type tc struct {
		name  string
		frame []byte
		s     dissect.Shape
		fast  bool
	}
	var tests []tc
	for _, inner := range []struct {
		name string
		ip   corpus.Layer
	}{{"ipv4", in4}, {"ipv6", in6}} {
		for _, l4 := range []struct {
			name string
			l    corpus.Layer
		}{{"tcp", innerTCP}, {"udp", innerUDP}} {
			tests = append(tests,
				tc{"vxlan/" + inner.name + "/" + l4.name, vxlanFrame(inner.ip, l4.l), dissect.ShapeVXLAN, true},
				tc{"gtpu/" + inner.name + "/" + l4.name, gtpuFrame(inner.ip, l4.l), dissect.ShapeGTPU, true})
		}
	}
	opts, outOpts := in4, out4
	opts.Options, outOpts.Options = []byte{1, 1, 1, 1}, []byte{1, 1, 1, 1}
	tests = append(tests,
		tc{"vxlan/gbp", corpus.Stack(corpus.Ethernet{}, out4, corpus.UDP{Src: 1, Dst: 4789}, corpus.VXLAN{Flags: corpus.VXLANFlagVNI | 0x80, VNI: 1}, teb, in4, innerTCP), dissect.ShapeVXLAN, false},
		tc{"vxlan/inner-options", vxlanFrame(opts, innerTCP), dissect.ShapeVXLAN, false},
		tc{"vxlan/outer-options", corpus.Stack(corpus.Ethernet{}, outOpts, corpus.UDP{Src: 1, Dst: 4789}, corpus.VXLAN{Flags: corpus.VXLANFlagVNI, VNI: 1}, teb, in4, innerTCP), dissect.ShapeVXLAN, false},
		tc{"gtpu/outer-options", corpus.Stack(corpus.Ethernet{}, outOpts, corpus.UDP{Src: 2152, Dst: 2152}, corpus.GTPU{TEID: 7}, in6, innerTCP), dissect.ShapeGTPU, false},
		tc{"vxlan/inner-label", vxlanFrame(labelled, innerTCP), dissect.ShapeVXLAN, false},
		tc{"vxlan/in-vxlan", vxlanFrame(out4, corpus.UDP{Src: 2, Dst: 4789}, corpus.VXLAN{Flags: corpus.VXLANFlagVNI, VNI: 2}, teb, in4, innerTCP), dissect.ShapeVXLAN, false},
		tc{"gtpu/seq", corpus.Stack(corpus.Ethernet{}, out4, corpus.UDP{Src: 2152, Dst: 2152}, corpus.GTPU{TEID: 7, Flags: corpus.GTPFlagsV1 | corpus.GTPFlagS}, in4, innerTCP), dissect.ShapeGTPU, false},
		tc{"gtpu/inner-label", gtpuFrame(labelled, innerTCP), dissect.ShapeGTPU, false},
		tc{"gtpu/in-gtpu", gtpuFrame(in4, corpus.UDP{Src: 2152, Dst: 2152}, corpus.GTPU{TEID: 8}, in4, innerTCP), dissect.ShapeGTPU, false},
		tc{"gtpu/to-fou", gtpuFrame(in4, corpus.UDP{Src: 3, Dst: corpus.FOUPortIPIP}, in4, innerTCP), dissect.ShapeGTPU, true},
	)
	for _, tt := range tests {
		tn, _ := tt.s.Tunnel()
		for _, p := range []dissect.Descent{corpusDescent(dissect.Tunnels(0).With(tn)), corpusDescent(dissect.AllTunnels)} {
			fast := tt.fast
			if tt.name == "gtpu/to-fou" && p.Tunnels().Has(dissect.TunnelFOU) {
				fast = false // the inner UDP header is a FOU tunnel's too
			}
			var want, got dissect.FlowKeys
			wantOK := dissect.DissectFrameDescend(&want, tt.frame, dissect.DefaultFlags, p)
			d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
			d.SetDescent(p)
			ok, path := d.DissectFrame(&got, tt.frame)
			if ok != wantOK || got != want {
				t.Errorf("%s, descend %v: path %v keys %x, slow path %x", tt.name, p, path, got[:], want[:])
			}
			c := d.Counters()
			if fast {
				if path != dissect.FastPath(tt.s) || c.Shape[tt.s].Fast != 1 || c.Descended[tn] != 1 || got.Flags()&dissect.FlagEncapsulation == 0 {
					t.Errorf("%s, descend %v: path %v, counters %+v, flags %#x; want fast:%v, one descent, encapsulation", tt.name, p, path, c, got.Flags(), tt.s)
				}
				if n := testing.AllocsPerRun(100, func() { d.DissectFrame(&got, tt.frame) }); n != 0 {
					t.Errorf("%s: %v allocations per frame", tt.name, n)
				}
			} else if path != dissect.PathSlow || c.Shape[tt.s].Declined != 1 || c.Shape[tt.s].Slow != 1 {
				t.Errorf("%s, descend %v: path %v, counters %+v; want a decline of %v", tt.name, p, path, c.Shape[tt.s], tt.s)
			}
		}
		// Without a policy the frame is eth_ip's, to its outer UDP header.
		d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
		var k dissect.FlowKeys
		if strings.HasSuffix(tt.name, "/outer-options") {
			continue // eth_ip declines it: the slow path stops at the UDP header
		}
		if _, path := d.DissectFrame(&k, tt.frame); path != dissect.FastPath(dissect.ShapeEthIP) || k.THoff() != 34 {
			t.Errorf("%s without a policy: path %v thoff %d, want fast:eth_ip at 34", tt.name, path, k.THoff())
		}
	}
}

func TestTunnelCountsJSON(t *testing.T) {
	c := dissect.TunnelCounts{dissect.TunnelVXLAN: 3, dissect.TunnelFOU: 1}
	b, err := json.Marshal(c)
	if err != nil || string(b) != `{"vxlan":3,"fou":1}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back dissect.TunnelCounts
	if err := json.Unmarshal(b, &back); err != nil || back != c {
		t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, c)
	}
	if err := json.Unmarshal([]byte(`{"all":1}`), &back); err == nil {
		t.Error(`Unmarshal({"all":1}) took it`)
	}
	if b, _ := json.Marshal(dissect.Counters{}); strings.Contains(string(b), "Descended") {
		t.Errorf("zero counters marshal the descents: %s", b)
	}
}

func TestDescentAllocations(t *testing.T) {
	d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
	p := corpusDescent(dissect.AllTunnels)
	d.SetDescent(p)
	frames := [][]byte{vxlanFrame(in4, innerTCP), gtpuFrame(in6, innerTCP), dissect.SampleFrame(dissect.ShapeEthIP)}
	var k dissect.FlowKeys
	if n := testing.AllocsPerRun(1000, func() {
		for _, f := range frames {
			d.DissectFrame(&k, f)
			dissect.DissectFrameDescend(&k, f, dissect.DefaultFlags, p)
		}
	}); n != 0 {
		t.Errorf("descent allocates %v times per round, want 0", n)
	}
}

func TestParseDescent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want dissect.Tunnels
		err  bool
	}{
		{"none", 0, false}, {"", 0, false}, {"all", dissect.AllTunnels, false},
		{"vxlan,gtpu", dissect.Tunnels(0).With(dissect.TunnelVXLAN).With(dissect.TunnelGTPU), false},
		{"vxlan,nvgre", 0, true},
	} {
		got, err := dissect.ParseTunnels(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseTunnels(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil {
			if back, _ := dissect.ParseTunnels(got.String()); back != got {
				t.Errorf("%v reads back as %v", got, back)
			}
		}
	}
	if e, err := dissect.ParseFOUPort("5555:ipv6"); err != nil || e.Port != 5555 || e.Inner != 41 {
		t.Errorf("ParseFOUPort(5555:ipv6) = %+v, %v", e, err)
	}
	for _, bad := range []string{"5555", "0:ipip", "70000:ipip", "5555:gre"} {
		if _, err := dissect.ParseFOUPort(bad); err == nil {
			t.Errorf("ParseFOUPort(%q) took it", bad)
		}
	}
	_, err := dissect.NewDescent(dissect.AllTunnels, dissect.EncapPort{Port: 6080, GUE: true}, dissect.EncapPort{Port: 6080, Inner: 4})
	if !errors.Is(err, dissect.ErrPortTaken) {
		t.Errorf("a port twice: %v, want ErrPortTaken", err)
	}
}

// hashedRegion is the part of the keys skb_get_hash hashes (by addr_type:
// 48, 72, 44 or 40 bytes from offset 8).
func hashedRegion(k dissect.FlowKeys) []byte {
	n := map[dissect.AddrType]int{dissect.AddrIPv4: 48, dissect.AddrIPv6: 72, dissect.AddrTIPC: 44}[dissect.AddrType(binary.LittleEndian.Uint16(k[dissect.OffAddrType:]))]
	if n == 0 {
		n = 40
	}
	return k[dissect.HashOffset : dissect.HashOffset+n]
}

// BenchmarkDescent: the keys of a VXLAN, Geneve and GTP-U frame (inner
// IPv4/TCP) through a Dissector with every gate open, without a descent
// policy (the outer dissection, the eth_ip fast path) and entering the
// frame's tunnel (the slow path, descended).
func BenchmarkDescent(b *testing.B) {
	for _, tc := range []struct {
		name  string
		t     dissect.Tunnel
		frame []byte
	}{
		{"vxlan", dissect.TunnelVXLAN, vxlanFrame(in4, innerTCP)},
		{"geneve", dissect.TunnelGeneve, corpus.Stack(corpus.Ethernet{}, out4, corpus.UDP{Src: 5, Dst: 6081}, corpus.Geneve{VNI: 1}, teb, in4, innerTCP)},
		{"gtpu", dissect.TunnelGTPU, gtpuFrame(in4, innerTCP)},
	} {
		for _, on := range []bool{false, true} {
			name := tc.name + "/outer"
			d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
			if on {
				name = tc.name + "/descended"
				d.SetDescent(corpusDescent(dissect.Tunnels(0).With(tc.t)))
			}
			b.Run(name, func(b *testing.B) {
				var k dissect.FlowKeys
				for b.Loop() {
					d.DissectFrame(&k, tc.frame)
				}
			})
		}
	}
}

// TestWalkDescendGenerated: walk_descend.go is what gen_walk.go makes of
// walk (go generate ./dissect after changing walk).
func TestWalkDescendGenerated(t *testing.T) {
	out, err := exec.Command("go", "run", "gen_walk.go", "-check").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}
