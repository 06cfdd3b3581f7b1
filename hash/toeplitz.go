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
// one 256-entry table per position, built from the key once, and hashes with
// one load and XOR per byte. The tables are a fixed-size array so that the
// fixed tuples (HashIPv4, HashIPv6) index them with constants and bytes,
// without a bounds check.
type Toeplitz struct {
	tables [maxToeplitzInput][256]uint32 // tables[i][b]: the hash of byte b at input offset i
	n      int                           // the input the key covers: its length less 4
}

// maxToeplitzInput is the longest input of the longest key (52 bytes).
const maxToeplitzInput = 52 - 4

// NewToeplitz builds the tables for key, which must be 40 bytes (most NICs) or
// 52 bytes (Intel XL710 and E810). A key of n bytes covers inputs up to n-4
// bytes.
func NewToeplitz(key []byte) (*Toeplitz, error) {
	if len(key) != 40 && len(key) != 52 {
		return nil, fmt.Errorf("create Toeplitz hash from a %d-byte key: %w", len(key), ErrRSSKeyLength)
	}
	t := &Toeplitz{n: len(key) - 4}
	for i := range t.n {
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
func (t *Toeplitz) maxInput() int { return t.n }

// Hash returns the Toeplitz hash of input. It panics if input is longer than
// [Toeplitz.maxInput], a programming error: the tuples NICs hash (at most 36
// bytes) fit any supported key.
func (t *Toeplitz) Hash(input []byte) uint32 {
	if len(input) > t.n {
		panic(fmt.Sprintf("hash: Toeplitz input of %d bytes, the key covers %d", len(input), t.n))
	}
	tables := t.tables[:len(input)]
	var h uint32
	for i, b := range input {
		h ^= tables[i][b]
	}
	return h
}

// HashIPv4 returns the hash of the IPv4 tuple src, dst and, when withPorts
// is set, sport and dport: a NIC's TCP/UDP-over-IPv4 input (12 bytes), its
// IPv4 input without the ports (8 bytes). It allocates nothing.
func (t *Toeplitz) HashIPv4(src, dst *[4]byte, sport, dport uint16, withPorts bool) uint32 {
	tb := &t.tables
	h := tb[0][src[0]] ^ tb[1][src[1]] ^ tb[2][src[2]] ^ tb[3][src[3]] ^
		tb[4][dst[0]] ^ tb[5][dst[1]] ^ tb[6][dst[2]] ^ tb[7][dst[3]]
	if withPorts {
		h ^= tb[8][uint8(sport>>8)] ^ tb[9][uint8(sport)] ^ tb[10][uint8(dport>>8)] ^ tb[11][uint8(dport)]
	}
	return h
}

// HashIPv6 is [Toeplitz.HashIPv4] for IPv6 addresses: 36 bytes with the
// ports, 32 without.
func (t *Toeplitz) HashIPv6(src, dst *[16]byte, sport, dport uint16, withPorts bool) uint32 {
	tb := &t.tables
	h := tb[0][src[0]] ^ tb[1][src[1]] ^ tb[2][src[2]] ^ tb[3][src[3]] ^
		tb[4][src[4]] ^ tb[5][src[5]] ^ tb[6][src[6]] ^ tb[7][src[7]] ^
		tb[8][src[8]] ^ tb[9][src[9]] ^ tb[10][src[10]] ^ tb[11][src[11]] ^
		tb[12][src[12]] ^ tb[13][src[13]] ^ tb[14][src[14]] ^ tb[15][src[15]] ^
		tb[16][dst[0]] ^ tb[17][dst[1]] ^ tb[18][dst[2]] ^ tb[19][dst[3]] ^
		tb[20][dst[4]] ^ tb[21][dst[5]] ^ tb[22][dst[6]] ^ tb[23][dst[7]] ^
		tb[24][dst[8]] ^ tb[25][dst[9]] ^ tb[26][dst[10]] ^ tb[27][dst[11]] ^
		tb[28][dst[12]] ^ tb[29][dst[13]] ^ tb[30][dst[14]] ^ tb[31][dst[15]]
	if withPorts {
		h ^= tb[32][uint8(sport>>8)] ^ tb[33][uint8(sport)] ^ tb[34][uint8(dport>>8)] ^ tb[35][uint8(dport)]
	}
	return h
}

// hashIPv4 is HashIPv4 on address values.
func (t *Toeplitz) hashIPv4(src, dst [4]byte, sport, dport uint16, withPorts bool) uint32 {
	return t.HashIPv4(&src, &dst, sport, dport, withPorts)
}

// hashIPv6 is HashIPv6 on address values.
func (t *Toeplitz) hashIPv6(src, dst [16]byte, sport, dport uint16, withPorts bool) uint32 {
	return t.HashIPv6(&src, &dst, sport, dport, withPorts)
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
