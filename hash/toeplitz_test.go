package hash

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// toeplitzBitwise is the textbook Toeplitz hash, one input bit at a time: for
// each set bit XOR the key's current leftmost 32 bits into the result, then
// slide the key window left by one bit. It is the reference the tables must
// match.
func toeplitzBitwise(key, input []byte) uint32 {
	var h uint32
	window := binary.BigEndian.Uint32(key)
	next := 32 // index of the key bit that enters the window next
	for _, b := range input {
		for bit := 7; bit >= 0; bit-- {
			if b>>bit&1 != 0 {
				h ^= window
			}
			var in uint32
			if next < 8*len(key) {
				in = uint32(key[next/8]>>(7-next%8)) & 1
			}
			window = window<<1 | in
			next++
		}
	}
	return h
}

// msSuite is Microsoft's RSS verification suite (Microsoft's "Verifying the RSS Hash Calculation"): the
// published table lists the destination first; the hash input is always
// source first.
var msSuite = []struct {
	dst, src        netip.AddrPort
	ipOnly, withTCP uint32
}{
	{netip.MustParseAddrPort("161.142.100.80:1766"), netip.MustParseAddrPort("66.9.149.187:2794"), 0x323e8fc2, 0x51ccc178},
	{netip.MustParseAddrPort("65.69.140.83:4739"), netip.MustParseAddrPort("199.92.111.2:14230"), 0xd718262a, 0xc626b0ea},
	{netip.MustParseAddrPort("12.22.207.184:38024"), netip.MustParseAddrPort("24.19.198.95:12898"), 0xd2d0a5de, 0x5c2b394a},
	{netip.MustParseAddrPort("209.142.163.6:2217"), netip.MustParseAddrPort("38.27.205.30:48228"), 0x82989176, 0xafc7327f},
	{netip.MustParseAddrPort("202.188.127.2:1303"), netip.MustParseAddrPort("153.39.163.191:44251"), 0x5d1809c5, 0x10e828a2},
	{netip.MustParseAddrPort("[3ffe:2501:200:3::1]:1766"), netip.MustParseAddrPort("[3ffe:2501:200:1fff::7]:2794"), 0x2cc18cd5, 0x40207d3d},
	{netip.MustParseAddrPort("[ff02::1]:4739"), netip.MustParseAddrPort("[3ffe:501:8::260:97ff:fe40:efab]:14230"), 0x0f0c461c, 0xdde51bbf},
	{netip.MustParseAddrPort("[fe80::200:f8ff:fe21:67cf]:38024"), netip.MustParseAddrPort("[3ffe:1900:4545:3:200:f8ff:fe21:67cf]:44251"), 0x4b61e985, 0x02d1feef},
}

// defaultToeplitz returns the hash under the Microsoft key.
func defaultToeplitz(tb testing.TB) *Toeplitz {
	tb.Helper()
	tz, err := NewToeplitz(DefaultRSSKey[:])
	if err != nil {
		tb.Fatal(err)
	}
	return tz
}

// tupleKeys returns flow keys holding src and dst as the dissector writes them.
func tupleKeys(src, dst netip.AddrPort) *dissect.FlowKeys {
	var k dissect.FlowKeys
	at, n := dissect.AddrIPv4, 4
	if src.Addr().Is6() {
		at, n = dissect.AddrIPv6, 16
	}
	binary.LittleEndian.PutUint16(k[dissect.OffAddrType:], uint16(at))
	copy(k[dissect.OffAddrs:], src.Addr().AsSlice())
	copy(k[dissect.OffAddrs+n:], dst.Addr().AsSlice())
	binary.BigEndian.PutUint16(k[dissect.OffPorts:], src.Port())
	binary.BigEndian.PutUint16(k[dissect.OffPorts+2:], dst.Port())
	return &k
}

func TestToeplitzMicrosoftSuite(t *testing.T) {
	tz := defaultToeplitz(t)
	for _, tt := range msSuite {
		src, dst := tt.src.Addr(), tt.dst.Addr()
		sp, dp := tt.src.Port(), tt.dst.Port()
		input := append(append(src.AsSlice(), dst.AsSlice()...), byte(sp>>8), byte(sp), byte(dp>>8), byte(dp))
		ipLen := len(input) - 4
		var direct, directTCP uint32
		if src.Is4() {
			direct = tz.hashIPv4(src.As4(), dst.As4(), sp, dp, false)
			directTCP = tz.hashIPv4(src.As4(), dst.As4(), sp, dp, true)
		} else {
			direct = tz.hashIPv6(src.As16(), dst.As16(), sp, dp, false)
			directTCP = tz.hashIPv6(src.As16(), dst.As16(), sp, dp, true)
		}
		keys := tupleKeys(tt.src, tt.dst)
		for _, c := range []struct {
			how       string
			got, want uint32
		}{
			{"bitwise reference, IP only", toeplitzBitwise(DefaultRSSKey[:], input[:ipLen]), tt.ipOnly},
			{"bitwise reference, with TCP", toeplitzBitwise(DefaultRSSKey[:], input), tt.withTCP},
			{"Hash, IP only", tz.Hash(input[:ipLen]), tt.ipOnly},
			{"Hash, with TCP", tz.Hash(input), tt.withTCP},
			{"hashIPv4/6, IP only", direct, tt.ipOnly},
			{"hashIPv4/6, with TCP", directTCP, tt.withTCP},
			{"FromKeys, IP only", tz.FromKeys(keys, false, SymmetricNone), tt.ipOnly},
			{"FromKeys, with TCP", tz.FromKeys(keys, true, SymmetricNone), tt.withTCP},
		} {
			if c.got != c.want {
				t.Errorf("%v -> %v: %s = %#08x, want %#08x", tt.src, tt.dst, c.how, c.got, c.want)
			}
		}
	}
}

func TestToeplitzTablesMatchBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, keyLen := range []int{40, 52} {
		for range 50 {
			key := make([]byte, keyLen)
			for i := range key {
				key[i] = byte(rng.Uint32())
			}
			tz, err := NewToeplitz(key)
			if err != nil {
				t.Fatal(err)
			}
			if tz.maxInput() != keyLen-4 {
				t.Fatalf("maxInput() = %d, want %d", tz.maxInput(), keyLen-4)
			}
			for range 50 {
				input := make([]byte, rng.IntN(keyLen-4+1))
				for i := range input {
					input[i] = byte(rng.Uint32())
				}
				if got, want := tz.Hash(input), toeplitzBitwise(key, input); got != want {
					t.Fatalf("key % x input % x: Hash = %#08x, bitwise = %#08x", key, input, got, want)
				}
			}
		}
	}
}

// FuzzToeplitzTuple compares the fixed tuples' hashes and Hash with the
// bitwise reference, under any key of either length.
func FuzzToeplitzTuple(f *testing.F) {
	f.Add(DefaultRSSKey[:], []byte{66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6}, true)
	f.Add(make([]byte, 52), make([]byte, 36), false)
	f.Fuzz(func(t *testing.T, key, in []byte, withPorts bool) {
		if len(key) != 40 && len(key) != 52 {
			key = append(bytes.Repeat([]byte{0x5a}, 40-min(len(key), 40)), key[:min(len(key), 40)]...)
		}
		tz, err := NewToeplitz(key)
		if err != nil {
			t.Fatal(err)
		}
		var tup [36]byte
		copy(tup[:], in)
		sport, dport := uint16(tup[32])<<8|uint16(tup[33]), uint16(tup[34])<<8|uint16(tup[35])
		// The IPv4 input: the first 8 bytes, then the ports; IPv6's: all 36.
		v4, v6 := append(append([]byte{}, tup[0:8]...), tup[32:36]...), tup[:]
		n4, n6 := 8, 32
		if withPorts {
			n4, n6 = 12, 36
		}
		if got, want := tz.HashIPv4((*[4]byte)(tup[0:4]), (*[4]byte)(tup[4:8]), sport, dport, withPorts), toeplitzBitwise(key, v4[:n4]); got != want {
			t.Errorf("key % x: HashIPv4(% x) = %#08x, bitwise %#08x", key, v4[:n4], got, want)
		}
		if got, want := tz.HashIPv6((*[16]byte)(tup[0:16]), (*[16]byte)(tup[16:32]), sport, dport, withPorts), toeplitzBitwise(key, v6[:n6]); got != want {
			t.Errorf("key % x: HashIPv6(% x) = %#08x, bitwise %#08x", key, v6[:n6], got, want)
		}
		if len(in) <= len(key)-4 {
			if got, want := tz.Hash(in), toeplitzBitwise(key, in); got != want {
				t.Errorf("key % x: Hash(% x) = %#08x, bitwise %#08x", key, in, got, want)
			}
		}
	})
}

func TestToeplitzSymmetric(t *testing.T) {
	def := defaultToeplitz(t)
	// A key with a 16-bit period: swapping two fields moves each by a
	// multiple of 16 bits, under the same key bits.
	var periodic [40]byte
	for i := range periodic {
		periodic[i] = [2]byte{0x6d, 0x5a}[i%2]
	}
	sym, err := NewToeplitz(periodic[:])
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range msSuite {
		fwd, rev := tupleKeys(tt.src, tt.dst), tupleKeys(tt.dst, tt.src)
		for _, withPorts := range []bool{false, true} {
			for _, s := range []Symmetry{SymmetricXOR, SymmetricSort} {
				a, b := def.FromKeys(fwd, withPorts, s), def.FromKeys(rev, withPorts, s)
				if a != b {
					t.Errorf("%v %v ports=%v: forward %#08x, reverse %#08x", tt.src, s, withPorts, a, b)
				}
			}
			a, b := sym.FromKeys(fwd, withPorts, SymmetricNone), sym.FromKeys(rev, withPorts, SymmetricNone)
			if a != b {
				t.Errorf("%v 6d5a key ports=%v: forward %#08x, reverse %#08x", tt.src, withPorts, a, b)
			}
		}
		if def.FromKeys(fwd, true, SymmetricNone) == def.FromKeys(rev, true, SymmetricNone) {
			t.Errorf("%v: plain Toeplitz is symmetric for this tuple; the test proves nothing", tt.src)
		}
	}
}

// TestToeplitzSymmetricInput pins down the rewritten inputs.
func TestToeplitzSymmetricInput(t *testing.T) {
	tz := defaultToeplitz(t)
	src := netip.MustParseAddrPort("66.9.149.187:2794")   // 0x0aea
	dst := netip.MustParseAddrPort("161.142.100.80:1766") // 0x06e6
	keys := tupleKeys(src, dst)
	tests := []struct {
		sym   Symmetry
		input []byte
	}{
		// Both copies of src^dst, then both copies of sport^dport (0x0c0c).
		{SymmetricXOR, []byte{0xe3, 0x87, 0xf1, 0xeb, 0xe3, 0x87, 0xf1, 0xeb, 0x0c, 0x0c, 0x0c, 0x0c}},
		// Smaller address first, and, on their own, the smaller port.
		{SymmetricSort, []byte{66, 9, 149, 187, 161, 142, 100, 80, 0x06, 0xe6, 0x0a, 0xea}},
		{SymmetricNone, []byte{66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6}},
	}
	for _, tt := range tests {
		if got, want := tz.FromKeys(keys, true, tt.sym), tz.Hash(tt.input); got != want {
			t.Errorf("%v: FromKeys = %#08x, want Hash(% x) = %#08x", tt.sym, got, tt.input, want)
		}
		if got, want := tz.FromKeys(keys, false, tt.sym), tz.Hash(tt.input[:8]); got != want {
			t.Errorf("%v without ports: FromKeys = %#08x, want Hash(% x) = %#08x", tt.sym, got, tt.input[:8], want)
		}
	}
}

func TestToeplitzFromKeysNoAddresses(t *testing.T) {
	tz := defaultToeplitz(t)
	for _, at := range []dissect.AddrType{dissect.AddrNone, dissect.AddrTIPC} {
		k := flow{addrType: at, ports: "00 50 30 39", addrs: "01 02 03 04"}.keys(t)
		if got := tz.FromKeys(k, true, SymmetricNone); got != 0 {
			t.Errorf("FromKeys(%v keys) = %#08x, want 0", at, got)
		}
	}
}

func TestNewToeplitzErrors(t *testing.T) {
	for _, n := range []int{0, 4, 39, 41, 51, 53} {
		if _, err := NewToeplitz(make([]byte, n)); !errors.Is(err, ErrRSSKeyLength) {
			t.Errorf("NewToeplitz(%d bytes) error = %v, want ErrRSSKeyLength", n, err)
		}
	}
}

func TestToeplitzHashTooLongPanics(t *testing.T) {
	tz := defaultToeplitz(t)
	defer func() {
		if recover() == nil {
			t.Errorf("Hash of 37 bytes under a 40-byte key did not panic")
		}
	}()
	tz.Hash(make([]byte, 37))
}

func TestToeplitzAllocs(t *testing.T) {
	tz := defaultToeplitz(t)
	k4 := tupleKeys(msSuite[0].src, msSuite[0].dst)
	k6 := tupleKeys(msSuite[5].src, msSuite[5].dst)
	var sink uint32
	for name, f := range map[string]func(){
		"hashIPv4": func() { sink += tz.hashIPv4([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, 1, 2, true) },
		"hashIPv6": func() { sink += tz.hashIPv6([16]byte{1}, [16]byte{2}, 1, 2, true) },
		"FromKeys": func() { sink += tz.FromKeys(k4, true, SymmetricSort) + tz.FromKeys(k6, true, SymmetricXOR) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

func BenchmarkToeplitz(b *testing.B) {
	tz := defaultToeplitz(b)
	k4 := tupleKeys(msSuite[0].src, msSuite[0].dst)
	k6 := tupleKeys(msSuite[5].src, msSuite[5].dst)
	src4, dst4 := msSuite[0].src.Addr().As4(), msSuite[0].dst.Addr().As4()
	src6, dst6 := msSuite[5].src.Addr().As16(), msSuite[5].dst.Addr().As16()
	in4 := append(append(src4[:], dst4[:]...), 0x0a, 0xea, 0x06, 0xe6)
	for _, bm := range []struct {
		name string
		f    func() uint32
	}{
		{"hashIPv4", func() uint32 { return tz.hashIPv4(src4, dst4, 2794, 1766, true) }},
		{"hashIPv6", func() uint32 { return tz.hashIPv6(src6, dst6, 2794, 1766, true) }},
		{"FromKeysIPv4", func() uint32 { return tz.FromKeys(k4, true, SymmetricNone) }},
		{"FromKeysIPv4Sort", func() uint32 { return tz.FromKeys(k4, true, SymmetricSort) }},
		{"FromKeysIPv6XOR", func() uint32 { return tz.FromKeys(k6, true, SymmetricXOR) }},
		{"BitwiseIPv4", func() uint32 { return toeplitzBitwise(DefaultRSSKey[:], in4) }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchSink += bm.f()
			}
		})
	}
}
