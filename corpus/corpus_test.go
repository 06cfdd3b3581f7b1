package corpus

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
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
