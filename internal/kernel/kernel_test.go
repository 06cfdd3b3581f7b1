//go:build linux

package kernel

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/xdptest"
)

func TestMain(m *testing.M) { xdptest.Main(m) }

// newHashOracle loads an oracle that is closed when the test ends.
func newHashOracle(tb testing.TB) *HashOracle {
	tb.Helper()
	return xdptest.Open(tb, NewHashOracle)
}

// kernelHash returns the oracle's hash of frame, failing the test on error.
func kernelHash(tb testing.TB, o *HashOracle, frame []byte) uint32 {
	tb.Helper()
	h, err := o.Hash(frame)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// ipv4TCP returns a fresh 58-byte Ethernet + IPv4 + TCP frame with 4 bytes of
// payload; the offsets below index into it.
func ipv4TCP() []byte {
	return []byte{
		// Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type IPv4
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x08, 0x00,
		// IPv4: version 4 IHL 5, TOS 0, total length 44, id 1, DF, TTL 64,
		// protocol 6, checksum 0x1234 (wrong on purpose: never checked),
		// 198.18.0.1 -> 198.19.0.2
		0x45, 0x00, 0x00, 0x2c, 0x00, 0x01, 0x40, 0x00,
		0x40, 0x06, 0x12, 0x34,
		0xc6, 0x12, 0x00, 0x01,
		0xc6, 0x13, 0x00, 0x02,
		// TCP: 1025 -> 80, seq 1, ack 0, data offset 5, SYN, window 512,
		// checksum 0, urgent 0
		0x04, 0x01, 0x00, 0x50,
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x50, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
		// payload
		0xde, 0xad, 0xbe, 0xef,
	}
}

// Offsets into ipv4TCP.
const (
	offTTL      = 14 + 8
	offIPCsum   = 14 + 10
	offIPSrc    = 14 + 12
	offIPDst    = 14 + 16
	offSrcPort  = 34
	offDstPort  = 36
	offTCPCsum  = 34 + 16
	offPayload  = 54
	lenEthernet = 14
)

// swapDirection exchanges the IPv4 addresses and the TCP ports of an ipv4TCP
// frame, making it the reply direction of the same connection.
func swapDirection(f []byte) {
	for i := range 4 {
		f[offIPSrc+i], f[offIPDst+i] = f[offIPDst+i], f[offIPSrc+i]
	}
	for i := range 2 {
		f[offSrcPort+i], f[offDstPort+i] = f[offDstPort+i], f[offSrcPort+i]
	}
}

func TestHashOracleFlows(t *testing.T) {
	o := newHashOracle(t)
	base := kernelHash(t, o, ipv4TCP())
	tests := []struct {
		name     string
		mutate   func(f []byte)
		sameFlow bool
	}{
		{"same frame", func([]byte) {}, true},
		{"direction swapped", swapDirection, true},
		{"TTL", func(f []byte) { f[offTTL] = 1 }, true},
		{"IP checksum", func(f []byte) { f[offIPCsum] ^= 0xff }, true},
		{"TCP checksum", func(f []byte) { f[offTCPCsum] = 0x77 }, true},
		{"payload", func(f []byte) { copy(f[offPayload:], "flow") }, true},
		{"source port", func(f []byte) { f[offSrcPort+1]++ }, false},
		{"destination port", func(f []byte) { f[offDstPort+1] = 0x51 }, false},
		{"source address", func(f []byte) { f[offIPSrc+3] = 9 }, false},
		{"source port only swapped", func(f []byte) {
			f[offSrcPort], f[offDstPort] = f[offDstPort], f[offSrcPort]
			f[offSrcPort+1], f[offDstPort+1] = f[offDstPort+1], f[offSrcPort+1]
		}, true}, // the kernel sorts ports independently of addresses
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := ipv4TCP()
			tt.mutate(f)
			got := kernelHash(t, o, f)
			if (got == base) != tt.sameFlow {
				t.Errorf("hash %#08x, base %#08x: same flow = %v, want %v", got, base, got == base, tt.sameFlow)
			}
		})
	}
}

func TestHashOracleRefusals(t *testing.T) {
	o := newHashOracle(t)
	// frame returns n bytes: an Ethernet header of the given type, then zeros.
	frame := func(etherType uint16, n int) []byte {
		f := make([]byte, n)
		if n >= lenEthernet {
			copy(f, ipv4TCP()[:12])
			f[12], f[13] = byte(etherType>>8), byte(etherType)
		}
		return f
	}
	tests := []struct {
		name    string
		frame   []byte
		refused bool
	}{
		{"empty", nil, true},
		{"13 bytes", frame(0x0800, 13), true},
		{"Ethernet header only, ARP", frame(0x0806, 14), false},
		{"Ethernet header only, 802.1Q", frame(0x8100, 14), false},
		{"Ethernet header only, PPPoE", frame(0x8864, 14), false},
		{"Ethernet header only, 802.3 length", frame(0x0010, 14), false},
		{"IPv4 type, nothing after", frame(0x0800, 14), true},
		{"IPv4 type, 19 bytes after", frame(0x0800, 14+19), true},
		{"IPv4 type, 20 bytes after", frame(0x0800, 14+20), false},
		{"IPv6 type, 39 bytes after", frame(0x86dd, 14+39), true},
		{"IPv6 type, 40 bytes after", frame(0x86dd, 14+40), false},
		{"3712 bytes, one page less headroom and shared info", frame(0x0800, 3712), false},
		{"3713 bytes", frame(0x0800, 3713), true},
		{"3713 bytes, unknown type", frame(0x88b5, 3713), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := o.Hash(tt.frame)
			if got := errors.Is(err, ErrFrameRefused); got != tt.refused {
				t.Fatalf("refused = %v (err %v), want %v", got, err, tt.refused)
			}
			if tt.refused && !strings.HasPrefix(err.Error(), fmt.Sprintf("kernel test run of %d-byte frame: ", len(tt.frame))) {
				t.Errorf("error %q lacks the frame length context", err)
			}
		})
	}
}

func TestHashOracleClose(t *testing.T) {
	xdptest.RequireRoot(t)
	o, err := NewHashOracle()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := o.Hash(ipv4TCP()); !errors.Is(err, ErrClosed) {
		t.Errorf("Hash after Close: %v, want ErrClosed", err)
	}
}

func TestMissingCapabilities(t *testing.T) {
	missing, err := MissingCapabilities()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 && len(missing) != 0 {
		t.Errorf("as root: missing %v, want none", missing)
	}
}

func TestMissingCapabilitiesRule(t *testing.T) {
	const (
		bpf      = 1 << unix.CAP_BPF
		netAdmin = 1 << unix.CAP_NET_ADMIN
		sysAdmin = 1 << unix.CAP_SYS_ADMIN
	)
	tests := []struct {
		name    string
		eff     uint64
		lastCap int
		want    []string
	}{
		{"root", ^uint64(0), 40, nil},
		{"CAP_BPF and CAP_NET_ADMIN", bpf | netAdmin, 40, nil},
		{"CAP_SYS_ADMIN alone", sysAdmin, 40, nil},
		{"nothing", 0, 40, []string{"CAP_BPF", "CAP_NET_ADMIN"}},
		{"CAP_BPF alone", bpf, 40, []string{"CAP_NET_ADMIN"}},
		{"CAP_NET_ADMIN alone", netAdmin, 40, []string{"CAP_BPF"}},
		{"kernel before CAP_BPF, CAP_NET_ADMIN", netAdmin, 38, []string{"CAP_SYS_ADMIN"}},
		{"kernel before CAP_BPF, CAP_SYS_ADMIN", sysAdmin, 38, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := missingCapabilities(tt.eff, tt.lastCap); !slices.Equal(got, tt.want) {
				t.Errorf("missingCapabilities(%#x, %d) = %v, want %v", tt.eff, tt.lastCap, got, tt.want)
			}
		})
	}
}

// loadWithout loads the oracle from a locked OS thread whose effective
// capability set lacks drop (capabilities are per thread).
func loadWithout(tb testing.TB, drop []uint) (o *HashOracle, err error) {
	tb.Helper()
	if cerr := xdptest.WithoutCapabilities(drop, func() { o, err = NewHashOracle() }); cerr != nil {
		return nil, cerr
	}
	return o, err
}

// TestNewHashOracleWithoutCapabilities checks the capability rule of
// MissingCapabilities against the kernel and the error that names them.
func TestNewHashOracleWithoutCapabilities(t *testing.T) {
	xdptest.RequireRoot(t)
	tests := []struct {
		name    string
		drop    []uint
		missing string // "" when loading must succeed
	}{
		{"all three", []uint{unix.CAP_BPF, unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN}, "missing CAP_BPF and CAP_NET_ADMIN"},
		{"CAP_NET_ADMIN and CAP_SYS_ADMIN", []uint{unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN}, "missing CAP_NET_ADMIN"},
		{"CAP_BPF and CAP_SYS_ADMIN", []uint{unix.CAP_BPF, unix.CAP_SYS_ADMIN}, "missing CAP_BPF"},
		{"CAP_SYS_ADMIN only", []uint{unix.CAP_SYS_ADMIN}, ""},
		{"CAP_BPF and CAP_NET_ADMIN, CAP_SYS_ADMIN stands in", []uint{unix.CAP_BPF, unix.CAP_NET_ADMIN}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := loadWithout(t, tt.drop)
			if o != nil {
				o.Close()
			}
			if tt.missing == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNotPermitted) {
				t.Fatalf("err = %v, want ErrNotPermitted", err)
			}
			for _, want := range []string{"load hash oracle: ", tt.missing + ";", "run as root or grant CAP_BPF and CAP_NET_ADMIN"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}
