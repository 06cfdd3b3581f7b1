package nicrss

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

// configs are the parses the corpus and the fuzzer compare: the default,
// UDP hashed on addresses only, the _EX types, the inner level and QEMU
// 7.2's quirks.
var configs = map[string]ParseConfig{
	"default":   {Types: TypesDefault},
	"udp-sd":    {Types: TypesDefault &^ (TypeUDPv4 | TypeUDPv6)},
	"ex":        {Types: TypeIPv4 | TypeTCPv4 | TypeUDPv4 | TypeIPv6Ex | TypeTCPv6Ex | TypeUDPv6Ex},
	"inner":     {Types: TypesDefault, Level: LevelInner},
	"qemu-7.2":  {Types: TypesDefault, Quirks: QuirkQEMU72},
	"ipv4-only": {Types: TypeIPv4},
}

// TestParseFamilies: the hash type of every corpus family's base frame, by
// the device's rules at the outer and the inner level.
func TestParseFamilies(t *testing.T) {
	// want is family -> outer report; inner lists the families whose report
	// differs at the inner level.
	want := map[string]Report{}
	for _, fam := range []string{"ipv4/tcp", "ipv4+opts4/tcp", "ipv4+opts40/tcp", "vlan/ipv4/tcp", "qinq/ipv4/tcp"} {
		want[fam] = ReportTCPv4
	}
	for _, fam := range []string{"ipv4/udp", "ipv4+opts8/udp", "vlan-ad/ipv4/udp"} {
		want[fam] = ReportUDPv4
	}
	for _, fam := range []string{"ipv6/tcp", "ipv6+hbh/tcp", "ipv6+dstopt/tcp", "ipv6+hbh+rt+dstopt/tcp", "ipv6-label/tcp"} {
		want[fam] = ReportTCPv6
	}
	for _, fam := range []string{"ipv6/udp", "ipv6+rt/udp", "ipv6-label+hbh/udp", "vlan/ipv6/udp"} {
		want[fam] = ReportUDPv6
	}
	// Not TCP or UDP, fragments, a missing transport header, and IPIP/GRE
	// outer headers: the address-only type.
	for _, fam := range []string{"ipv4/udplite", "ipv4/sctp", "ipv4/dccp", "ipv4/esp", "ipv4/ah/tcp", "ipv4/icmp", "ipv4/proto253",
		"ipv4-frag-first/udp", "ipv4-frag-first/tcp", "ipv4-frag-middle/udp", "ipv4-frag-last/tcp", "ipv4/tcp-missing", "ipv4/proto0/hbh/tcp",
		"gre/ipv4/tcp", "gre-k/ipv4/tcp", "gre-c-k-s/ipv4/tcp", "gre-k/ipv6/udp", "gre-r/ipv4/tcp", "gre-teb/ipv6/udp", "pptp-k/ipv4/tcp",
		"ipip/tcp", "ipip/udp", "6in4/udp", "gre-k/ipip/tcp", "depth/ipip/n=16", "depth/gre-k/n=16"} {
		want[fam] = ReportIPv4
	}
	for _, fam := range []string{"ipv6/udplite", "ipv6/sctp", "ipv6/esp", "ipv6/icmp", "ipv6/ah/tcp", "ipv6+dstopt+ah/tcp",
		"ipv6+frag-first/udp", "ipv6+frag-atomic/tcp", "ipv6+frag-last/tcp", "ipv6+hbh+frag-first+dstopt/udp", "ipv6/udp-missing",
		"4in6/tcp", "6in6/tcp", "ipv6/gre-k/ipv4/tcp", "6in6/label/tcp", "depth/6in6/n=16"} {
		want[fam] = ReportIPv6
	}
	// Not IP after at most the tags the device skips: no hash.
	for _, fam := range []string{"qinq-8100/ipv6/tcp", "vlan3/ipv4/udp", "vlan/arp", "vlan/mpls/ipv4/tcp", "pppoe/ipv4/tcp", "pppoe/ipv6/udp",
		"mpls/ipv4/tcp", "depth/vlan/n=16", "arp", "fcoe", "batman/ipv4/tcp", "hsr/ipv4/tcp", "ptp", "802.3/llc", "ethertype/0x88b5"} {
		want[fam] = ReportNone
	}
	want["depth/ipv6-hbh/n=16"] = ReportTCPv6 // 16 hop-by-hop headers: the device walks them all
	inner := map[string]Report{
		"ipip/tcp": ReportTCPv4, "ipip/udp": ReportUDPv4, "6in4/udp": ReportUDPv6, "4in6/tcp": ReportTCPv4, "6in6/tcp": ReportTCPv6,
		"gre/ipv4/tcp": ReportTCPv4, "gre-k/ipv4/tcp": ReportTCPv4, "gre-c-k-s/ipv4/tcp": ReportTCPv4, "gre-k/ipv6/udp": ReportUDPv6,
		"ipv6/gre-k/ipv4/tcp": ReportTCPv4, "6in6/label/tcp": ReportTCPv6,
		// One level only: the tunnel inside the tunnel is the inner header.
		"gre-k/ipip/tcp": ReportIPv4, "depth/ipip/n=16": ReportIPv4, "depth/gre-k/n=16": ReportIPv4, "depth/6in6/n=16": ReportIPv6,
	}
	seen := map[string]bool{}
	for _, f := range corpus.Bases() {
		fam := f.Family()
		w, ok := want[fam]
		if !ok {
			continue
		}
		seen[fam] = true
		for _, level := range []Level{LevelOuter, LevelInner} {
			wl := w
			if r, ok := inner[fam]; ok && level == LevelInner {
				wl = r
			}
			c := ParseConfig{Types: TypesDefault, Level: level}
			var tu Tuple
			got := c.Parse(&tu, f.Data)
			if got != (wl != ReportNone) || tu.Report != wl {
				t.Errorf("%s, level %v: Parse = %v, report %v; want %v", fam, level, got, tu.Report, wl)
			}
		}
	}
	for fam := range want {
		if !seen[fam] {
			t.Errorf("family %s is not in the corpus", fam)
		}
	}
}

// TestParseCorpusReference: on every corpus frame (every family, every
// mutation, truncations included) and every configuration, Parse gives the
// reference parser's tuple.
func TestParseCorpusReference(t *testing.T) {
	frames := corpus.Build()
	for name, c := range configs {
		bad := 0
		for _, f := range frames {
			var got Tuple
			ok := c.Parse(&got, f.Data)
			want, wok := refParse(c, f.Data)
			if ok != wok || got != want {
				if bad++; bad <= 5 {
					t.Errorf("%s: %s: Parse = %v %+v, reference %v %+v", name, f.Name, ok, got, wok, want)
				}
			}
		}
	}
}

// TestParsePortsAndLabels: the device reads the ports of IPv6 TCP whatever
// the flow label (the kernel's default dissection stops at a label), and of
// unfragmented TCP and UDP only.
func TestParsePortsAndLabels(t *testing.T) {
	c := configs["default"]
	for _, f := range corpus.Bases() {
		var tu Tuple
		if !c.Parse(&tu, f.Data) {
			continue
		}
		if tu.Report.HasPorts() != (tu.Sport != 0) {
			t.Errorf("%s: report %v with ports %d > %d", f.Name, tu.Report, tu.Sport, tu.Dport)
		}
		if strings.Contains(f.Name, "frag") && tu.Report.HasPorts() {
			t.Errorf("%s: a fragment hashed with its ports", f.Name)
		}
	}
	var tu Tuple
	for _, f := range corpus.Bases() {
		if f.Family() == "ipv6-label/tcp" && (!c.Parse(&tu, f.Data) || tu.Sport != 1025 || tu.Dport != 80) {
			t.Errorf("%s: tuple %+v, want ports 1025 > 80", f.Name, tu)
		}
	}
}

// ipv4TCPFrame is an Ethernet frame of IPv4 TCP from src:sport to
// dst:dport.
func ipv4TCPFrame(src, dst string, sport, dport uint16, fragOff uint16) []byte {
	f := make([]byte, 14+20+20)
	binary.BigEndian.PutUint16(f[12:], 0x0800) // Ethernet: IPv4
	ip := f[14:]
	ip[0] = 0x45                                // version 4, IHL 5
	binary.BigEndian.PutUint16(ip[2:], 40)      // total length
	binary.BigEndian.PutUint16(ip[6:], fragOff) // flags, fragment offset
	ip[8], ip[9] = 64, 6                        // TTL, TCP
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(ip[12:], s[:])
	copy(ip[16:], d[:])
	binary.BigEndian.PutUint16(ip[20:], sport) // TCP ports
	binary.BigEndian.PutUint16(ip[22:], dport)
	ip[32] = 0x50 // data offset 5
	return f
}

// TestHasherVerificationSuite: frames built from the Microsoft RSS
// verification suite's IPv4 rows hash to its published values: "IPv4 with
// TCP" under the default fields, "IPv4 only" with tcp4 set to sd, and for a
// fragment.
func TestHasherVerificationSuite(t *testing.T) {
	rows := []struct {
		dst, src         string
		dport, sport     uint16
		ipOnly, withPort uint32
	}{
		{"161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178},
		{"65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea},
		{"12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a},
		{"209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f},
		{"202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2},
	}
	full, err := NewHasher(nil, hash.SymmetricNone, ParseConfig{Types: TypesDefault})
	if err != nil {
		t.Fatal(err)
	}
	sd, _ := NewHasher(nil, hash.SymmetricNone, configs["ipv4-only"])
	for _, r := range rows {
		var tu Tuple
		f := ipv4TCPFrame(r.src, r.dst, r.sport, r.dport, 0)
		if h, ok := full.Hash(&tu, f); !ok || h != r.withPort || tu.Report != ReportTCPv4 {
			t.Errorf("%s:%d > %s:%d: hash %#x (%v, %v), want %#x tcp4", r.src, r.sport, r.dst, r.dport, h, ok, tu.Report, r.withPort)
		}
		if h, ok := sd.Hash(&tu, f); !ok || h != r.ipOnly || tu.Report != ReportIPv4 {
			t.Errorf("%s > %s, tcp4 sd: hash %#x (%v, %v), want %#x ipv4", r.src, r.dst, h, ok, tu.Report, r.ipOnly)
		}
		if h, ok := full.Hash(&tu, ipv4TCPFrame(r.src, r.dst, r.sport, r.dport, 0x2000)); !ok || h != r.ipOnly {
			t.Errorf("%s > %s, first fragment: hash %#x, want the address-only %#x", r.src, r.dst, h, r.ipOnly)
		}
	}
}

// TestParseAllocs: the parse and the hash allocate nothing, on every base
// frame of the corpus.
func TestParseAllocs(t *testing.T) {
	h, err := NewHasher(nil, hash.SymmetricXOR, ParseConfig{Types: TypesDefault | TypeIPv6Ex, Level: LevelInner})
	if err != nil {
		t.Fatal(err)
	}
	bases := corpus.Bases()
	var tu Tuple
	if a := testing.AllocsPerRun(20, func() {
		for _, f := range bases {
			h.Hash(&tu, f.Data)
		}
	}); a != 0 {
		t.Errorf("%.1f allocations per pass over %d frames, want 0", a, len(bases))
	}
}

// FuzzParse compares Parse with the reference parser under every
// configuration, from the corpus's base frames.
func FuzzParse(f *testing.F) {
	for _, b := range corpus.Bases() {
		f.Add(b.Data)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		for name, c := range configs {
			var got Tuple
			ok := c.Parse(&got, frame)
			want, wok := refParse(c, frame)
			if ok != wok || got != want {
				t.Fatalf("%s: Parse = %v %+v, reference %v %+v", name, ok, got, wok, want)
			}
		}
	})
}

// BenchmarkNICHash is the NIC parse and hash of each corpus base frame.
func BenchmarkNICHash(b *testing.B) {
	h, _ := NewHasher(nil, hash.SymmetricNone, ParseConfig{Types: TypesDefault})
	bases := corpus.Bases()
	var tu Tuple
	b.ResetTimer()
	for i := range b.N {
		h.Hash(&tu, bases[i%len(bases)].Data)
	}
}

// TestNICParseVersusKernelKeys: the NIC's hash and the Toeplitz hash of the
// kernel dissector's keys agree on plain frames and differ exactly where the
// issue says the kernel's view is not the NIC's: after a tunnel, and on IPv6
// TCP with a flow label (the default dissection stops at the label).
func TestNICParseVersusKernelKeys(t *testing.T) {
	tz, _ := hash.NewToeplitz(hash.DefaultRSSKey[:])
	h, _ := NewHasher(nil, hash.SymmetricNone, ParseConfig{Types: TypesDefault})
	differ := map[string]bool{
		"ipv4/tcp": false, "ipv6/tcp": false, "vlan/ipv4/tcp": false, "ipv4/udp": false, "ipv4-frag-first/tcp": false,
		"ipv6-label/tcp": true, "ipv6-label+hbh/udp": true, "ipip/tcp": true, "gre-k/ipv4/tcp": true, "6in6/tcp": true,
	}
	for _, f := range corpus.Bases() {
		want, ok := differ[f.Family()]
		if !ok {
			continue
		}
		var keys dissect.FlowKeys
		dissect.DissectFrame(&keys, f.Data, dissect.DefaultFlags)
		p := keys.IPProto()
		kh := tz.FromKeys(&keys, (p == 6 || p == 17) && keys.Flags()&dissect.FlagIsFragment == 0, hash.SymmetricNone)
		var tu Tuple
		nh, _ := h.Hash(&tu, f.Data)
		if (kh != nh) != want {
			t.Errorf("%s: kernel-keys hash %#x, NIC hash %#x: differ = %v, want %v", f.Family(), kh, nh, kh != nh, want)
		}
	}
}

// TestParseDeviceSettled pins the rules the virtio lab's device (QEMU 7.2.22)
// settled frame by frame where an earlier model of the NIC parse read the
// frame otherwise (internal/virtiolab's TestNICRSSOnDevice checks every
// corpus frame): the hash type under QuirkQEMU72, and without the quirk.
func TestParseDeviceSettled(t *testing.T) {
	frames := map[string][]byte{}
	for _, f := range corpus.Build() {
		frames[f.Name] = f.Data
	}
	for _, c := range []struct {
		name       string
		q72, plain Report
		port       bool // q72's tuple has the ports read at offset l4 (-1: not checked here)
		l4         int
		why        string
	}{
		{"ipv4/tcp/ipv4.ver=6", ReportIPv4, ReportNone, false, 0, "QEMU 7.2 hashes another IP version as IPv4's addresses"},
		{"ipv4-frag-first/tcp/ipv4.ver=0", ReportIPv4, ReportNone, false, 0, "the same for a fragment"},
		{"ipv4/tcp/ipv4.ihl=4", ReportTCPv4, ReportIPv4, true, 14 + 16, "QEMU 7.2 reads the ports where an IHL below 5 points"},
		{"ipv4/udp/ipv4.ihl=0", ReportUDPv4, ReportIPv4, true, 14, "even IHL 0: the ports are the IPv4 header's first bytes"},
		{"ipv4/tcp/ipv4.frag=0x2000", ReportIPv4, ReportIPv4, false, 0, "a fragment hashes its addresses, QEMU 7.2 too (no ports of an earlier frame)"},
		{"ipv4-frag-first/udp/base", ReportIPv4, ReportIPv4, false, 0, "a first fragment too"},
		{"ipv6/ah/tcp/ah.next=0x11", ReportUDPv6, ReportUDPv6, true, 14 + 40 + (4+1)*8, "AH's length is (len+1)*8, as every extension header's: the ports are read past the AH's real end"},
		{"qinq-8100/ipv6/tcp/base", ReportNone, ReportNone, false, 0, "after an 802.1Q tag the device reads no second tag"},
		{"depth/ipv6-hbh/n=18/base", ReportTCPv6, ReportTCPv6, true, -1, "the device walks any number of extension headers"},
		{"ipv6+hbh+rt+dstopt/tcp/rt.len=255", ReportIPv6, ReportNone, false, 0, "QEMU 7.2 hashes an IPv6 header whose extension headers run past the frame"},
	} {
		f, ok := frames[c.name]
		if !ok {
			t.Fatalf("%s: no such corpus frame", c.name)
		}
		var tu Tuple
		for _, q := range []struct {
			pc   ParseConfig
			want Report
		}{{ParseConfig{Types: TypesDefault, Quirks: QuirkQEMU72}, c.q72}, {ParseConfig{Types: TypesDefault}, c.plain}} {
			if q.pc.Parse(&tu, f); tu.Report != q.want || tu.Stale {
				t.Errorf("%s (quirks %d): %s (stale %v), want %s: %s", c.name, q.pc.Quirks, tu.Report, tu.Stale, q.want, c.why)
			}
		}
		(&ParseConfig{Types: TypesDefault, Quirks: QuirkQEMU72}).Parse(&tu, f)
		if c.port && c.l4 >= 0 {
			if sp, dp := binary.BigEndian.Uint16(f[c.l4:]), binary.BigEndian.Uint16(f[c.l4+2:]); tu.Sport != sp || tu.Dport != dp {
				t.Errorf("%s: ports %d > %d, want %d > %d read at offset %d: %s", c.name, tu.Sport, tu.Dport, sp, dp, c.l4, c.why)
			}
		}
	}
}
