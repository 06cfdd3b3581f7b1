package hash

import (
	"net/netip"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
)

// TestSteeringWorker checks worker choices computed by hand.
func TestSteeringWorker(t *testing.T) {
	tests := []struct {
		name  string
		cfg   SteerConfig
		hash  uint32
		queue int
		want  int
	}{
		// RPS: reciprocal_scale(h, n) = h*n >> 32, the hash's high bits.
		{name: "rps 2 low half", cfg: SteerConfig{Workers: 2}, hash: 0x7fffffff, want: 0},
		{name: "rps 2 high half", cfg: SteerConfig{Workers: 2}, hash: 0x80000000, want: 1},
		{name: "rps 3 first third ends", cfg: SteerConfig{Workers: 3}, hash: 0x55555555, want: 0}, // 0xffffffff >> 32
		{name: "rps 3 second third", cfg: SteerConfig{Workers: 3}, hash: 0x55555556, want: 1},     // 0x100000002 >> 32
		{name: "rps 3 last third", cfg: SteerConfig{Workers: 3}, hash: 0xaaaaaaab, want: 2},       // 0x200000001 >> 32
		{name: "rps low bits ignored", cfg: SteerConfig{Workers: 4}, hash: 0x000000ff, want: 0},
		{name: "rps hash 0 stays on queue 5", cfg: SteerConfig{Workers: 4}, hash: 0, queue: 5, want: 1},
		// RETA: table[h % size], the hash's low bits; round robin by default.
		{name: "reta 2 odd", cfg: SteerConfig{Workers: 2, Steer: SteerRETA}, hash: 5, want: 1},
		{name: "reta 2 high bits ignored", cfg: SteerConfig{Workers: 2, Steer: SteerRETA}, hash: 0xffffff80, want: 0},
		{name: "reta 3 entry 127", cfg: SteerConfig{Workers: 3, Steer: SteerRETA}, hash: 127, want: 127 % 3},
		// Weights 3,1 over 4 entries: [0 0 0 1].
		{name: "reta weighted entry 2", cfg: SteerConfig{Workers: 2, Steer: SteerRETA, RETASize: 4, RETAWeights: []int{3, 1}}, hash: 6, want: 0},
		{name: "reta weighted entry 3", cfg: SteerConfig{Workers: 2, Steer: SteerRETA, RETASize: 4, RETAWeights: []int{3, 1}}, hash: 7, want: 1},
		{name: "reta hash 0 stays on queue 3", cfg: SteerConfig{Workers: 2, Steer: SteerRETA}, hash: 0, queue: 3, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSteering(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Worker(tt.hash, tt.queue); got != tt.want {
				t.Errorf("Worker(%#x, queue %d) = %d, want %d", tt.hash, tt.queue, got, tt.want)
			}
		})
	}
}

// msTCP is the first IPv4 case of Microsoft's RSS verification suite:
// 66.9.149.187:2794 -> 161.142.100.80:1766, whose Toeplitz hash under the
// default key is 0x51ccc178 with ports and 0x323e8fc2 without.
func msTCP(frag uint16) []byte {
	return corpus.Stack(corpus.Ethernet{},
		corpus.IPv4{TTL: 64, Frag: frag, Src: netip.MustParseAddr("66.9.149.187"), Dst: netip.MustParseAddr("161.142.100.80")},
		corpus.TCP{Src: 2794, Dst: 1766})
}

// TestSteeringHash checks both hash kinds against the hash package and the
// published Toeplitz values.
func TestSteeringHash(t *testing.T) {
	kernel, err := NewSteering(SteerConfig{Workers: 1, Key: kunitKey})
	if err != nil {
		t.Fatal(err)
	}
	toeplitz, err := NewSteering(SteerConfig{Workers: 1, Hash: KindToeplitz})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		frame  []byte
		s      *Steering
		want   uint32
		wantL4 bool
	}{
		{name: "toeplitz tcp", frame: msTCP(0), s: toeplitz, want: 0x51ccc178, wantL4: true},
		// A fragment is hashed on its addresses alone.
		{name: "toeplitz fragment", frame: msTCP(0x2000), s: toeplitz, want: 0x323e8fc2},
		{name: "toeplitz arp", frame: corpus.Stack(corpus.Ethernet{}, corpus.ARP{Op: 1}), s: toeplitz, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keys dissect.FlowKeys
			dissect.DissectFrame(&keys, tt.frame, dissect.DefaultFlags)
			if h, l4 := tt.s.Hash(&keys); h != tt.want || l4 != tt.wantL4 {
				t.Errorf("hash %#x l4 %v, want %#x %v", h, l4, tt.want, tt.wantL4)
			}
		})
	}
	var keys dissect.FlowKeys
	dissect.DissectFrame(&keys, msTCP(0), dissect.DefaultFlags)
	wh, wl4 := NewKernel(kunitKey).Hash(&keys)
	if h, l4 := kernel.Hash(&keys); h != wh || l4 != wl4 {
		t.Errorf("kernel hash %#x %v, want %#x %v", h, l4, wh, wl4)
	}
}

// TestRSSSpread checks a NIC's queue choice: the Microsoft suite's TCP case
// hashes to 0x51ccc178, entry 0x78 = 120 of the default table, queue 120 % 7
// = 1; a tunnel is hashed on its outer header; ARP goes to queue 0.
func TestRSSSpread(t *testing.T) {
	spread, err := NewRSSSpread(nil, SymmetricNone, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q := spread(msTCP(0)); q != 1 {
		t.Errorf("queue %d, want 1", q)
	}
	// IPIP with the suite's addresses outside: the outer IPv4 tuple hashes
	// to 0x323e8fc2, entry 0x42 = 66, queue 66 % 7 = 3.
	ipip := corpus.Stack(corpus.Ethernet{},
		corpus.IPv4{TTL: 64, Src: netip.MustParseAddr("66.9.149.187"), Dst: netip.MustParseAddr("161.142.100.80")},
		corpus.IPv4{TTL: 64, Src: netip.MustParseAddr("198.18.0.1"), Dst: netip.MustParseAddr("198.18.0.2")},
		corpus.TCP{Src: 1, Dst: 2})
	if q := spread(ipip); q != 3 {
		t.Errorf("IPIP queue %d, want 3", q)
	}
	if q := spread(corpus.Stack(corpus.Ethernet{}, corpus.ARP{Op: 1})); q != 0 {
		t.Errorf("ARP queue %d, want 0", q)
	}
}
