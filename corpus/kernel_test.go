package corpus_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// The kernel oracle's tests are external: xdptest, whose oracle and
// TestMain they use, imports corpus.

func TestMain(m *testing.M) { xdptest.Main(m) }

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
	o := xdptest.Open(t, kernel.NewHashOracle)
	frames := corpus.Build()
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
	o := xdptest.Open(t, kernel.NewHashOracle)
	rng := rand.New(rand.NewPCG(3, 4))
	var buf []byte
	for _, b := range corpus.Bases() {
		for range 50 {
			var m corpus.Mutation
			buf, m = corpus.Mutate(rng, b.Data, buf)
			if _, err := o.Hash(buf); err != nil {
				t.Errorf("%s %v: %v", b.Name, m, err)
			}
		}
	}
}

// FuzzFitsOracle compares FitsOracle with the kernel's own refusals.
func FuzzFitsOracle(f *testing.F) {
	for _, b := range corpus.Bases() {
		f.Add(b.Data)
	}
	// Every length of an IPv4 and an IPv6 frame, across both refusal limits.
	for _, b := range [][]byte{corpus.IPv4TCP(), corpus.IPv6UDP()} {
		for n := range len(b) {
			f.Add(b[:n])
		}
	}
	f.Add(make([]byte, corpus.MaxFrameLen+1))
	o := xdptest.Open(f, kernel.NewHashOracle)
	f.Fuzz(func(t *testing.T, frame []byte) {
		_, err := o.Hash(frame)
		refused := errors.Is(err, kernel.ErrFrameRefused)
		if err != nil && !refused {
			t.Fatal(err)
		}
		if corpus.FitsOracle(frame) == refused {
			t.Errorf("FitsOracle(% x) = %v, kernel refused = %v", frame, !refused, refused)
		}
	})
}
