package hash

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/xdphash/xdphash/dissect"
)

// DefaultRSSKey is the 40-byte key of Microsoft's RSS verification suite, also
// the Intel 82599 datasheet's example key (section 7.1.2.8.3) and the key many
// drivers fall back to. Copy it before changing it: it is shared.
var DefaultRSSKey = [40]byte{
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
}

// Symmetry selects how an RSS hash is made the same for both directions of a
// flow, by rewriting its input before hashing.
type Symmetry uint8

const (
	// SymmetricNone hashes source and destination as they are.
	SymmetricNone Symmetry = iota
	// SymmetricXOR replaces both the source and the destination address by
	// src XOR dst, and both ports by sport XOR dport: Linux's RXH_XFRM_SYM_XOR
	// ("ethtool -X DEV hfunc toeplitz symmetric-xor", 6.8+), whose uapi comment
	// says "both copies of the XOR'ed fields are fed into the RSS and RXHASH
	// calculation". The input keeps its length (8/12/32/36 bytes); DPDK's
	// SYMMETRIC_TOEPLITZ is the same transformation. Linux's later
	// RXH_XFRM_SYM_OR_XOR (one copy OR, one XOR; mlx5) is not modelled.
	SymmetricXOR
	// SymmetricSort puts the smaller address first and, on its own, the smaller
	// port first, both compared as numbers in network byte order (DPDK's
	// SYMMETRIC_TOEPLITZ_SORT).
	SymmetricSort
)

func (s Symmetry) String() string {
	switch s {
	case SymmetricNone:
		return "none"
	case SymmetricXOR:
		return "symmetric-xor"
	case SymmetricSort:
		return "sort"
	}
	return fmt.Sprintf("Symmetry(%d)", uint8(s))
}

// Toeplitz is a NIC's RSS Toeplitz hash under one key. Every input bit XORs
// the 32 key bits that start at its position into the result, so each input
// byte's contribution depends only on its value and position: Toeplitz keeps
// one 256-entry table per position and hashes with one load and XOR per byte,
// far faster than the bit loop (BenchmarkToeplitz compares them;
// docs/instructions.md has the figures).
type Toeplitz struct {
	tables [][256]uint32 // tables[i][b]: the hash of byte b at input offset i
}

// NewToeplitz builds the tables for key, which must be 40 bytes (most NICs) or
// 52 bytes (Intel XL710 and E810). A key of n bytes covers inputs up to n-4
// bytes.
func NewToeplitz(key []byte) (*Toeplitz, error) {
	if len(key) != 40 && len(key) != 52 {
		return nil, fmt.Errorf("create Toeplitz hash from a %d-byte key: %w", len(key), ErrRSSKeyLength)
	}
	t := &Toeplitz{tables: make([][256]uint32, len(key)-4)}
	for i := range t.tables {
		tab := &t.tables[i]
		for bit := range 8 {
			tab[0x80>>bit] = keyWindow(key, 8*i+bit)
		}
		// The hash is linear in its input: a byte's entry is the XOR of the
		// entries of its bits, and b minus its lowest set bit is already done.
		for b := 1; b < 256; b++ {
			low := b & -b
			tab[b] = tab[b&^low] ^ tab[low]
		}
	}
	return t, nil
}

// keyWindow returns the 32 key bits starting at bit off, most significant bit
// of key[0] being bit 0.
func keyWindow(key []byte, off int) uint32 {
	i, s := off/8, uint(off%8)
	return binary.BigEndian.Uint32(key[i:])<<s | uint32(key[i+4])>>(8-s)
}

// maxInput is the longest input the key covers: its length less 4 bytes.
func (t *Toeplitz) maxInput() int { return len(t.tables) }

// Hash returns the Toeplitz hash of input. It panics if input is longer than
// [Toeplitz.maxInput], a programming error: the tuples NICs hash (at most 36
// bytes) fit any supported key.
func (t *Toeplitz) Hash(input []byte) uint32 {
	tables := t.tables[:len(input)]
	var h uint32
	// Four bytes per round, as every RSS tuple is a multiple of 4 bytes long,
	// which BenchmarkToeplitz found faster than a byte per round. (Testing
	// both lengths lets the compiler drop the bounds checks.)
	for len(input) >= 4 && len(tables) >= 4 {
		h ^= tables[0][input[0]] ^ tables[1][input[1]] ^ tables[2][input[2]] ^ tables[3][input[3]]
		input, tables = input[4:], tables[4:]
	}
	for i, b := range input {
		h ^= tables[i][b]
	}
	return h
}

// hashIPv4 returns the hash of src, dst and, when withPorts is set, sport and
// dport (the NIC's TCP/UDP-over-IPv4 tuple; without ports its IPv4 tuple).
func (t *Toeplitz) hashIPv4(src, dst [4]byte, sport, dport uint16, withPorts bool) uint32 {
	// hashIPv4 and hashIPv6 repeat each other on purpose: one helper on
	// slices of either length was slower (BenchmarkToeplitz), as the
	// fixed-size arrays let the compiler drop every bounds check.
	var in [12]byte
	copy(in[0:4], src[:])
	copy(in[4:8], dst[:])
	binary.BigEndian.PutUint16(in[8:], sport)
	binary.BigEndian.PutUint16(in[10:], dport)
	return t.Hash(in[:tupleLen(4, withPorts)])
}

// hashIPv6 is [Toeplitz.hashIPv4] for IPv6 addresses.
func (t *Toeplitz) hashIPv6(src, dst [16]byte, sport, dport uint16, withPorts bool) uint32 {
	var in [36]byte
	copy(in[0:16], src[:])
	copy(in[16:32], dst[:])
	binary.BigEndian.PutUint16(in[32:], sport)
	binary.BigEndian.PutUint16(in[34:], dport)
	return t.Hash(in[:tupleLen(16, withPorts)])
}

// FromKeys returns the hash a NIC computes for the packet keys were dissected
// from: its input is the source address, destination address, source port and
// destination port as the keys hold them (network order), the ports only when
// withPorts is set, transformed by sym. Keys with neither IPv4 nor IPv6
// addresses hash to 0, as NICs report no RSS hash for such packets. Set
// withPorts as the NIC would: typically for unfragmented TCP and UDP only (as
// "ethtool -n DEV rx-flow-hash tcp4" shows), the addresses alone otherwise.
//
// The keys are the kernel's view, which is not always the NIC's: after a tunnel
// they hold the inner addresses, and where the kernel read no ports (fragments;
// IPv6 with a flow label under the default flags) they hold 0 while a NIC that
// hashes ports would still read them for unfragmented packets.
func (t *Toeplitz) FromKeys(keys *dissect.FlowKeys, withPorts bool, sym Symmetry) uint32 {
	var n int // bytes per address
	switch keys.AddrType() {
	case dissect.AddrIPv4:
		n = 4
	case dissect.AddrIPv6:
		n = 16
	default:
		return 0
	}
	// The keys hold source then destination at OffAddrs for both families; the
	// input wants the ports after them.
	var in [36]byte
	copy(in[:2*n], keys[dissect.OffAddrs:dissect.OffAddrs+2*n])
	copy(in[2*n:2*n+4], keys[dissect.OffPorts:dissect.OffPorts+4])
	if sym != SymmetricNone {
		symmetrize(in[0:n], in[n:2*n], sym)
		symmetrize(in[2*n:2*n+2], in[2*n+2:2*n+4], sym)
	}
	return t.Hash(in[:tupleLen(n, withPorts)])
}

// tupleLen is the input length for two addresses of n bytes, plus 4 bytes of
// ports when withPorts is set.
func tupleLen(n int, withPorts bool) int {
	if withPorts {
		return 2*n + 4
	}
	return 2 * n
}

// symmetrize rewrites the source and destination fields src and dst (same
// length, network order) in place as sym says.
func symmetrize(src, dst []byte, sym Symmetry) {
	switch sym {
	case SymmetricXOR:
		for i := range src {
			x := src[i] ^ dst[i]
			src[i], dst[i] = x, x
		}
	case SymmetricSort:
		if bytes.Compare(dst, src) < 0 {
			for i := range src {
				src[i], dst[i] = dst[i], src[i]
			}
		}
	}
}
