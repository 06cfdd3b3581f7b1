package dissect_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
)

// metadataTags are corpus.MetadataTags as dissect.VLANTags, the zero tag first.
var metadataTags = func() []struct {
	name string
	tag  dissect.VLANTag
} {
	var out []struct {
		name string
		tag  dissect.VLANTag
	}
	for _, m := range corpus.MetadataTags() {
		out = append(out, struct {
			name string
			tag  dissect.VLANTag
		}{m.Name, dissect.VLANTag{TPID: m.TPID, TCI: m.TCI}})
	}
	return out
}()

// taggedGated is gated's twin for tagged frames: one Dissector with every gate
// open for all the frames checkTaggedContract sees.
var taggedGated = dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)

// checkTaggedContract holds the Dissector to the slow path on frame received
// with tag, and reports the path it took.
func checkTaggedContract(tb testing.TB, name string, frame []byte, tag dissect.VLANTag) dissect.Path {
	tb.Helper()
	var slow, again, got dissect.FlowKeys
	slowOK := dissect.DissectFrameTagged(&slow, frame, tag, dissect.DefaultFlags)
	if dissect.DissectFrameTagged(&again, frame, tag, dissect.DefaultFlags); again != slow {
		return dissect.PathSlow // random keys (TIPC keep-alives): nothing to compare
	}
	gated.Lock()
	defer gated.Unlock()
	ok, path := taggedGated.DissectFrameTagged(&got, frame, tag)
	if ok != slowOK || got != slow {
		tb.Errorf("%s with tag %v: the Dissector (path %v) differs from the slow path on frame %x\n slow ok=%v keys %x\n gated ok=%v keys %x",
			name, tag, path, frame, slowOK, slow[:], ok, got[:])
	}
	return path
}

// TestTaggedMatchesInlineTag checks the hw-tag branch against the in-line
// one over the whole corpus: a frame received with a metadata tag has the
// keys of the same frame with the tag in line, but for thoff, which counts
// the 4 bytes the tag no longer takes, when its type field is an ethertype.
// skb->protocol of an 802.3 frame is 0x0001 or 0x0004 (eth_type_trans), which
// the tag then carries as its inner type; in line the length field is.
func TestTaggedMatchesInlineTag(t *testing.T) {
	for _, f := range corpus.Build() {
		if len(f.Data) < dissect.EthernetHdrLen || !corpus.Comparable(f.Data) {
			continue
		}
		for _, mt := range metadataTags[1:] {
			var hw, inline dissect.FlowKeys
			hwOK := dissect.DissectFrameTagged(&hw, f.Data, mt.tag, dissect.DefaultFlags)
			inlineOK := dissect.DissectFrame(&inline, corpus.InsertTag(f.Data, mt.tag.TPID, mt.tag.TCI), dissect.DefaultFlags)
			typ := binary.BigEndian.Uint16(f.Data[12:])
			if typ < 0x0600 {
				if hwOK || hw.NProto() != dissect.EthProtocol(f.Data) || hw.VLANEthType() != hw.NProto() {
					t.Errorf("%s %s: 802.3 frame: ok=%v n_proto %#x vlan type %#x, want bad on skb->protocol %#x",
						f.Name, mt.name, hwOK, hw.NProto(), hw.VLANEthType(), dissect.EthProtocol(f.Data))
				}
				continue
			}
			binary.LittleEndian.PutUint16(inline[dissect.OffTHoff:], inline.THoff()-4)
			if hwOK != inlineOK || hw != inline {
				t.Errorf("%s %s:\n metadata ok=%v keys %x\n in line  ok=%v keys %x (thoff less 4)", f.Name, mt.name, hwOK, hw[:], inlineOK, inline[:])
			}
		}
	}
}

// TestHWTagBranch pins the cases of the hw-tag branch one by one.
func TestHWTagBranch(t *testing.T) {
	eth := func(typ uint16) []byte {
		return []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, byte(typ >> 8), byte(typ)}
	}
	ipv4UDP := []byte{
		0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2, // IPv4, UDP
		0x04, 0x01, 0x00, 0x35, 0, 8, 0, 0, // UDP 1025 -> 53
	}
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	q := func(tci uint16) dissect.VLANTag { return dissect.VLANTag{TPID: dissect.EtherTypeVLAN, TCI: tci} }
	tests := []struct {
		name    string
		frame   []byte
		tag     dissect.VLANTag
		ok      bool
		thoff   uint16
		nProto  uint16
		vlanTCI uint16 // as stored: DEI dropped
		tpid    uint16
		vlanEth uint16
		sport   uint16
	}{
		{"no tag", cat(eth(0x0800), ipv4UDP), dissect.VLANTag{}, true, 34, 0x0800, 0, 0, 0, 1025},
		{"802.1Q, nothing consumed", cat(eth(0x0800), ipv4UDP), q(3<<13 | 100), true, 34, 0x0800, 3<<13 | 100, 0x8100, 0x0800, 1025},
		{"802.1AD, DEI dropped", cat(eth(0x0800), ipv4UDP), dissect.VLANTag{TPID: 0x88a8, TCI: 0x1005}, true, 34, 0x0800, 5, 0x88a8, 0x0800, 1025},
		{"priority tag, VLAN 0", cat(eth(0x0800), ipv4UDP), q(0), true, 34, 0x0800, 0, 0x8100, 0x0800, 1025},
		// The tag still in the frame is the second: CVLAN, not stored, but
		// consumed.
		{"in-line tag after it", cat(eth(0x8100), []byte{0x00, 0x07, 0x08, 0x00}, ipv4UDP), q(100), true, 38, 0x0800, 100, 0x8100, 0x8100, 1025},
		{"802.3 frame", cat(eth(0x002e), []byte{0xaa, 0xaa, 0x03}), q(100), false, 14, 0x0004, 100, 0x8100, 0x0004, 0},
		{"ARP", cat(eth(0x0806), make([]byte, 28)), q(100), true, 14, 0x0806, 100, 0x8100, 0x0806, 0},
		{"truncated IPv4", cat(eth(0x0800), ipv4UDP[:10]), q(100), false, 14, 0x0800, 100, 0x8100, 0x0800, 0},
		// Tags no device reports: the dissection starts on the TPID.
		{"TPID 0x9100", cat(eth(0x0800), ipv4UDP), dissect.VLANTag{TPID: 0x9100, TCI: 100}, false, 14, 0x9100, 0, 0, 0, 0},
		{"TPID 0, TCI set", cat(eth(0x0800), ipv4UDP), dissect.VLANTag{TCI: 100}, false, 14, 0, 0, 0, 0, 0},
	}
	for _, tc := range tests {
		var k dissect.FlowKeys
		ok := dissect.DissectFrameTagged(&k, tc.frame, tc.tag, dissect.DefaultFlags)
		got := []uint16{k.THoff(), k.NProto(), binary.LittleEndian.Uint16(k[dissect.OffVLANTCI:]), k.VLANTPID(), k.VLANEthType(), k.SrcPort()}
		want := []uint16{tc.thoff, tc.nProto, tc.vlanTCI, tc.tpid, tc.vlanEth, tc.sport}
		if ok != tc.ok || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: ok=%v thoff, n_proto, tci, tpid, vlan type, sport = %#x; want ok=%v %#x", tc.name, ok, got, tc.ok, want)
		}
		checkTaggedContract(t, tc.name, tc.frame, tc.tag)
	}
}

// TestTaggedFastPathEquivalence holds the Dissector to the slow path over
// every corpus frame, and every truncation of it, received with each
// metadata tag, and checks that the vlan fast path takes some of them.
func TestTaggedFastPathEquivalence(t *testing.T) {
	fast := 0
	for _, f := range corpus.Build() {
		for _, mt := range metadataTags {
			if checkTaggedContract(t, f.Name+" "+mt.name, f.Data, mt.tag) == dissect.FastPath(dissect.ShapeVLAN) && !mt.tag.IsZero() {
				fast++
			}
			for n := range len(f.Data) {
				checkTaggedContract(t, fmt.Sprintf("%s %s cut to %d", f.Name, mt.name, n), f.Data[:n], mt.tag)
			}
		}
	}
	if fast == 0 {
		t.Fatal("no tagged corpus frame took the vlan fast path")
	}
	t.Logf("%d tagged corpus frames taken by the vlan fast path", fast)
}

// TestTaggedCounters checks which class a tagged frame counts in, and that a
// closed gate keeps the fast path from running.
func TestTaggedCounters(t *testing.T) {
	tag := dissect.VLANTag{TPID: dissect.EtherTypeVLAN, TCI: 100}
	plain, qinq := dissect.SampleFrame(dissect.ShapeEthIP), dissect.SampleFrame(dissect.ShapeVLAN)
	var k dissect.FlowKeys
	d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
	if _, p := d.DissectFrameTagged(&k, plain, tag); p != dissect.FastPath(dissect.ShapeVLAN) {
		t.Errorf("tagged eth_ip frame: path %v, want fast:vlan", p)
	}
	if _, p := d.DissectFrameTagged(&k, qinq, tag); p != dissect.PathSlow {
		t.Errorf("tagged vlan frame: path %v, want slow", p)
	}
	c := d.Counters()
	if c.Shape[dissect.ShapeVLAN].Fast != 1 || c.Shape[dissect.ShapeQinQ].Slow != 1 {
		t.Errorf("counters %+v: want one vlan fast hit, one qinq slow run", c.Shape)
	}
	d.SetGates(dissect.AllGates.Without(dissect.ShapeVLAN))
	if _, p := d.DissectFrameTagged(&k, plain, tag); p != dissect.PathSlow {
		t.Errorf("vlan gate closed: path %v, want slow", p)
	}
}

// TestTaggedAutoOpensVLAN checks that auto mode learns from tagged frames
// while the vlan gate is closed (its probes run the metadata-tag fast path).
func TestTaggedAutoOpensVLAN(t *testing.T) {
	d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates.Without(dissect.ShapeVLAN))
	d.EnableAuto(dissect.AutoConfig{Window: 1000, MinDwell: 1, MinSample: 8})
	tag := dissect.VLANTag{TPID: dissect.EtherTypeQinQ, TCI: 7}
	f := dissect.SampleFrame(dissect.ShapeEthIP)
	var k dissect.FlowKeys
	for range 5000 {
		d.DissectFrameTagged(&k, f, tag)
	}
	if !d.Gates().Has(dissect.ShapeVLAN) {
		st, _ := d.AutoState()
		t.Errorf("vlan gate still closed after tagged eth_ip frames: %v", st[dissect.ShapeVLAN])
	}
}

func TestParseVLANTag(t *testing.T) {
	tests := []struct {
		in      string
		want    dissect.VLANTag
		wantErr bool
	}{
		{"0x8100:100", dissect.VLANTag{TPID: 0x8100, TCI: 100}, false},
		{"88a8:0x5005", dissect.VLANTag{TPID: 0x88a8, TCI: 0x5005}, false},
		{"802.1Q:0", dissect.VLANTag{TPID: 0x8100}, false},
		{"dot1ad:65535", dissect.VLANTag{TPID: 0x88a8, TCI: 0xffff}, false},
		{"0x8100:65536", dissect.VLANTag{}, true},
		{"0x9100:1", dissect.VLANTag{}, true},
		{"0x0800:1", dissect.VLANTag{}, true},
		{"0x8100", dissect.VLANTag{}, true},
		{"0x8100:", dissect.VLANTag{}, true},
		{"0x8100:-1", dissect.VLANTag{}, true},
		{"0x8100:0x", dissect.VLANTag{}, true},
		{"0x8100:1:2", dissect.VLANTag{}, true},
		{"", dissect.VLANTag{}, true},
	}
	for _, tc := range tests {
		got, err := dissect.ParseVLANTag(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseVLANTag(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err == nil {
			if s := got.String(); len(s) != len("0x8100:0x0064") {
				t.Errorf("%v.String() = %q, want TPID:TCI as 0xhhhh:0xhhhh", got, s)
			}
			if back, err := dissect.ParseVLANTag(got.String()); err != nil || back != got {
				t.Errorf("%q does not round-trip through %q: %v, %v", tc.in, got.String(), back, err)
			}
		}
	}
}
