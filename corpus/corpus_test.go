package corpus

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/testenv"
)

func TestBuild(t *testing.T) {
	frames := Build()
	if len(frames) < 2000 {
		t.Errorf("Build() has %d frames, want at least 2000", len(frames))
	}
	if again := Build(); !slices.EqualFunc(frames, again, func(a, b Frame) bool {
		return a.Name == b.Name && bytes.Equal(a.Data, b.Data)
	}) {
		t.Error("Build() is not deterministic")
	}
	names := make(map[string]bool, len(frames))
	for _, f := range frames {
		if names[f.Name] {
			t.Errorf("duplicate name %q", f.Name)
		}
		names[f.Name] = true
		if !Comparable(f.Data) {
			t.Errorf("%s: not comparable (%d bytes)", f.Name, len(f.Data))
		}
		if !names[f.Family()+"/base"] {
			t.Errorf("%s: family %q has no base frame before it", f.Name, f.Family())
		}
	}
	bases := Bases()
	for _, b := range bases {
		i := slices.IndexFunc(frames, func(f Frame) bool { return f.Name == b.Name })
		if i < 0 || !bytes.Equal(frames[i].Data, b.Data) {
			t.Errorf("Bases() frame %s differs from Build()'s", b.Name)
		}
	}
	t.Logf("%d frames in %d families", len(frames), len(bases))
}

// TestFamilyAddresses checks that every base frame uses only the reserved
// ranges and locally administered unicast MACs.
func TestFamilyAddresses(t *testing.T) {
	v4 := netip.MustParsePrefix("198.18.0.0/15")
	v6 := netip.MustParsePrefix("2001:db8::/32")
	for _, fam := range families() {
		frame, fields := stack(fam.layers...)
		for _, f := range fields {
			b := frame[f.Off : f.Off+f.Len]
			switch {
			case strings.HasPrefix(f.Name, "ipv4.src"), strings.HasPrefix(f.Name, "ipv4.dst"),
				f.Name == "arp.spa", f.Name == "arp.tpa":
				if a := netip.AddrFrom4([4]byte(b)); !v4.Contains(a) {
					t.Errorf("%s: %s %v outside %v", fam.name, f.Name, a, v4)
				}
			case f.Name == "ipv6.src", f.Name == "ipv6.dst":
				if a := netip.AddrFrom16([16]byte(b)); !v6.Contains(a) {
					t.Errorf("%s: %s %v outside %v", fam.name, f.Name, a, v6)
				}
			case f.Name == "eth.src", f.Name == "eth.dst", f.Name == "batman.dest":
				if b[0]&0x03 != 0x02 {
					t.Errorf("%s: %s % x is not a locally administered unicast MAC", fam.name, f.Name, b)
				}
			}
		}
	}
}

func TestStackLengths(t *testing.T) {
	frame := Stack(Ethernet{}, VLAN{ID: 100}, ip4(v4A, v4B), udp(), Payload("abcd"))
	want := []byte{
		// Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 802.1Q
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x81, 0x00,
		// 802.1Q: priority 0, VLAN 100, type IPv4
		0x00, 0x64, 0x08, 0x00,
		// IPv4: IHL 5, total length 32, id 1, DF, TTL 64, UDP, checksum,
		// 198.18.0.1 -> 198.19.0.2
		0x45, 0x00, 0x00, 0x20, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
		198, 18, 0, 1, 198, 19, 0, 2,
		// UDP: 1025 -> 53, length 12, checksum 0
		0x04, 0x01, 0x00, 0x35, 0x00, 0x0c, 0x00, 0x00,
		'a', 'b', 'c', 'd',
	}
	csum := checksum(want[18:38])
	want[28], want[29] = byte(csum>>8), byte(csum)
	if !bytes.Equal(frame, want) {
		t.Errorf("Stack:\n got % x\nwant % x", frame, want)
	}
	if checksum(frame[18:38]) != 0 {
		t.Error("IPv4 header checksum does not verify")
	}
}

func TestMutate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	again := rand.New(rand.NewPCG(1, 2))
	kinds := map[MutationKind]int{}
	var buf, buf2 []byte
	for _, b := range Bases() {
		for range 20 {
			var m, m2 Mutation
			buf, m = Mutate(rng, b.Data, buf)
			buf2, m2 = Mutate(again, b.Data, buf2)
			if m != m2 || !bytes.Equal(buf, buf2) {
				t.Fatalf("%s: same seed gave %v and %v", b.Name, m, m2)
			}
			if !Comparable(buf) {
				t.Errorf("%s: %v made an incomparable %d-byte frame", b.Name, m, len(buf))
			}
			kinds[m.Kind]++
		}
	}
	for k := FlipBits; k <= SwapDirection; k++ {
		if kinds[k] == 0 {
			t.Errorf("no mutation of kind %v", Mutation{Kind: k})
		}
	}
}

// newOracle loads the kernel oracle, closed when the test ends.
func newOracle(tb testing.TB) *kernel.HashOracle {
	tb.Helper()
	testenv.RequireRoot(tb)
	o, err := kernel.NewHashOracle()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { o.Close() })
	return o
}

// Mutations of fields the kernel's flow keys never hold: the frame must
// stay in its base frame's flow. (A prefix "outer." is removed first.)
var ignoredFields = []string{
	"eth.src=", "eth.dst=", "vlan.dei=",
	"ipv4.ttl=", "ipv4.csum=", "ipv4.totlen=", "ipv4.tos=", "ipv4.id=", "ipv4.ver=", "ipv4.opts=",
	"ipv6.tc=", "ipv6.hlim=", "ipv6.plen=", "ipv6.ver=",
	"frag.id=", "frag.res=",
	"tcp.", "udp.len=", "udp.csum=", "udp.cscov=", "sctp.", "dccp.", "esp.seq=", "ah.seq=", "ah.icv=", "icmp.",
	"payload=", "pppoe.session=", "pppoe.len=", "ppp.addrctl=", "mpls.",
	"gre.csum=", "gre.seq=", "gre.ack=", "gre.paylen=",
	"arp.", "tipc.dest=", "tipc.w", "batman.ttl=", "batman.ttvn=", "batman.dest=", "hsr.seq=", "hsr.pathsize=",
	"swap-inner", "swap-addrs", "swap-ports",
}

// asymmetric are the families whose reply direction (every layer swapped)
// the kernel puts in another flow: an IPv4 header inside IPv6 overwrites
// only the first 8 bytes of the IPv6 addresses in the keys, and the IPv4
// hash covers 4 stale bytes, 8..11 of the outer source address. Only
// 4in6/tcp has outer addresses that differ in those bytes.
var asymmetric = []string{"4in6/tcp"}

func ignored(mutation string) bool {
	m := strings.TrimPrefix(mutation, "outer.")
	for _, p := range ignoredFields {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// TestKernelPartition runs the whole corpus through the kernel oracle: every
// frame must be accepted, hash the same twice, and the partition must have
// the expected structure.
func TestKernelPartition(t *testing.T) {
	o := newOracle(t)
	frames := Build()
	hashes := make([]uint32, len(frames))
	for i, f := range frames {
		h, err := o.Hash(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if h2, err := o.Hash(f.Data); err != nil || h2 != h {
			t.Errorf("%s: hashes %#08x then %#08x (%v)", f.Name, h, h2, err)
		}
		hashes[i] = h
	}
	distinct := map[uint32]bool{}
	for _, h := range hashes {
		distinct[h] = true
	}
	t.Logf("%d frames, %d distinct kernel hashes", len(frames), len(distinct))
	if len(distinct) <= 100 {
		t.Errorf("only %d distinct kernel hashes", len(distinct))
	}

	type stats struct{ frames, same, separated int }
	fams := map[string]*stats{}
	var base uint32
	var asym []string
	for i, f := range frames {
		s := fams[f.Family()]
		if s == nil {
			s = &stats{}
			fams[f.Family()] = s
		}
		s.frames++
		m := f.Mutation()
		if m == "base" {
			base = hashes[i]
			continue
		}
		same := hashes[i] == base
		if same {
			s.same++
		} else {
			s.separated++
		}
		switch {
		case m == "swap":
			if !same {
				asym = append(asym, f.Family())
			}
		case ignored(m) && !same:
			t.Errorf("%s: changes the flow, but the kernel should ignore that field", f.Name)
		}
	}
	if !slices.Equal(asym, asymmetric) {
		t.Errorf("families whose reply direction is another flow: %q, want %q", asym, asymmetric)
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if s := fams[n]; s.same == 0 || s.separated == 0 {
			t.Errorf("family %s: %d frames, %d mutations in the base flow, %d in other flows; want both", n, s.frames, s.same, s.separated)
		}
	}
}

// TestMutateKernel checks that the oracle accepts random mutations.
func TestMutateKernel(t *testing.T) {
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var buf []byte
	for _, b := range Bases() {
		for range 50 {
			var m Mutation
			buf, m = Mutate(rng, b.Data, buf)
			if _, err := o.Hash(buf); err != nil {
				t.Errorf("%s %v: %v", b.Name, m, err)
			}
		}
	}
}

// FuzzFitsOracle compares FitsOracle with the kernel's own refusals.
func FuzzFitsOracle(f *testing.F) {
	for _, b := range Bases() {
		f.Add(b.Data)
	}
	// Every length of an IPv4 and an IPv6 frame, across both refusal limits.
	for _, b := range [][]byte{Stack(Ethernet{}, ip4(v4A, v4B), tcp()), Stack(Ethernet{}, ip6(v6A, v6B), udp())} {
		for n := range len(b) {
			f.Add(b[:n])
		}
	}
	f.Add(make([]byte, maxFrameLen+1))
	o := newOracle(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		_, err := o.Hash(frame)
		refused := errors.Is(err, kernel.ErrFrameRefused)
		if err != nil && !refused {
			t.Fatal(err)
		}
		if FitsOracle(frame) == refused {
			t.Errorf("FitsOracle(% x) = %v, kernel refused = %v", frame, !refused, refused)
		}
	})
}
