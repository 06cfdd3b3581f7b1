package nicrss

import (
	"testing"

	"github.com/xdphash/xdphash/hash"
)

// TestQEMU72Ports: under QEMU 7.2's quirk a TCP fragment hashes as TCP with
// the ports of the last unfragmented TCP/UDP frame, which QEMU72Ports keeps;
// the fragment itself leaves them alone.
func TestQEMU72Ports(t *testing.T) {
	h, _ := NewHasher(nil, hash.SymmetricNone, ParseConfig{Types: TypesDefault, Quirks: QuirkQEMU72})
	var q QEMU72Ports
	var tu Tuple
	first := ipv4TCPFrame("198.18.0.1", "198.19.0.2", 1025, 80, 0)
	frag := ipv4TCPFrame("198.18.0.7", "198.19.0.8", 5000, 6000, 0x2000) // MF: the first fragment
	if !h.Parse.Parse(&tu, frag) || !tu.Stale || tu.Report != ReportTCPv4 || q.Fill(&tu) {
		t.Fatalf("a fragment before any frame: tuple %+v, want a stale tcp4 tuple that nothing fills", tu)
	}
	q.Observe(first)
	q.Observe(frag)
	h.Parse.Parse(&tu, frag)
	if !q.Fill(&tu) || tu.Sport != 1025 || tu.Dport != 80 {
		t.Fatalf("filled tuple %+v, want the first frame's ports 1025 > 80", tu)
	}
	// The device's hash: the fragment's addresses with the kept ports.
	want, _ := (&Hasher{Parse: ParseConfig{Types: TypesDefault}, toeplitz: h.toeplitz}).Hash(&Tuple{}, ipv4TCPFrame("198.18.0.7", "198.19.0.8", 1025, 80, 0))
	if got := h.HashTuple(&tu); got != want {
		t.Errorf("hash of the filled tuple %#x, want %#x", got, want)
	}
	// Without the quirk a fragment hashes its addresses only.
	plain, _ := NewHasher(nil, hash.SymmetricNone, ParseConfig{Types: TypesDefault})
	if plain.Parse.Parse(&tu, frag); tu.Stale || tu.Report != ReportIPv4 {
		t.Errorf("fragment without the quirk: %+v, want an ipv4 tuple", tu)
	}
}
