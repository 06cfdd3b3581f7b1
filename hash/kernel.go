package hash

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/dchest/siphash"

	"github.com/xdphash/xdphash/dissect"
)

// Lengths of the hashed region of the keys by address type (flow_keys_hash_length):
// from basic (offset 8) to the end of the 80-byte struct, less the part of the
// 32-byte address union the active address type does not use. Because the struct's
// size counts its 4 tail-padding bytes, each region reaches 4 bytes past the active
// addresses (IPv4 hashes bytes 52..55, IPv6 the tail padding).
const (
	addrUnionSize = 32
	regionNone    = len(dissect.FlowKeys{}) - dissect.HashOffset - addrUnionSize // 40
	regionIPv4    = regionNone + 8                                               // 48
	regionIPv6    = regionNone + 32                                              // 72
	regionTIPC    = regionNone + 4                                               // 44
)

// Key is a 128-bit SipHash key as 16 bytes: k0 is the little-endian value of
// bytes 0..7, k1 of bytes 8..15. That is how the kernel's per-boot hashrnd (16
// random bytes read as two u64 on x86-64) keys its flow hash, so a Key written
// out by one run reproduces the same hashes in the next.
type Key [16]byte

// ParseKey parses a key written as exactly 32 hex digits (the form
// [Key.String] prints).
func ParseKey(s string) (Key, error) {
	var k Key
	if len(s) != hex.EncodedLen(len(k)) {
		return Key{}, fmt.Errorf("parse hash key %q: %w, got %d", s, ErrKeySyntax, len(s))
	}
	if _, err := hex.Decode(k[:], []byte(s)); err != nil {
		return Key{}, fmt.Errorf("parse hash key %q: %w: %w", s, ErrKeySyntax, err)
	}
	return k, nil
}

// RandomKey draws a key from crypto/rand, as the kernel draws hashrnd once per
// boot with get_random_bytes.
func RandomKey() Key {
	var k Key
	// Since Go 1.24 crypto/rand.Read never returns an error (it crashes the
	// program instead), so there is nothing to handle here.
	_, _ = rand.Read(k[:])
	return k
}

// String returns the key as 32 lowercase hex digits.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// MarshalText implements encoding.TextMarshaler with the [Key.String] form.
func (k Key) MarshalText() ([]byte, error) { return hex.AppendEncode(nil, k[:]), nil }

// UnmarshalText implements encoding.TextUnmarshaler with [ParseKey], so a Key
// can be a flag (flag.TextVar) or a configuration field.
func (k *Key) UnmarshalText(text []byte) error {
	p, err := ParseKey(string(text))
	if err != nil {
		return err
	}
	*k = p
	return nil
}

// Kernel is the kernel's software flow hash (__flow_hash_from_keys, Linux 6.x)
// under one SipHash key. The zero Kernel hashes with the all-zero key.
type Kernel struct{ k0, k1 uint64 }

// NewKernel returns the flow hash keyed with key.
func NewKernel(key Key) Kernel {
	return Kernel{
		k0: binary.LittleEndian.Uint64(key[0:8]),
		k1: binary.LittleEndian.Uint64(key[8:16]),
	}
}

// Hash returns what skb_get_hash stores for keys: skb->hash and skb->l4_hash.
// It hashes [Region] of the keys as [Consistentify] would leave them with
// SipHash-2-4 and keeps the low 32 bits, 0 becoming 1; the caller's keys stay
// as dissected (the kernel sorts its own in place). l4 is true when the ports
// word or the flow label is non-zero, which sorting cannot change.
//
// It is swapsOf and Region written out per address type, so that the type
// is read once and each region is a constant slice. Each comparison branches
// straight to hashSorted, which hashes the keys that need sorting (the other
// half) and decides on the ports itself when the addresses were out of
// order, so that this function never builds the set of swaps on the path
// that needs none, and makes one call on each path.
func (h Kernel) Hash(keys *dissect.FlowKeys) (hash uint32, l4 bool) {
	le := binary.LittleEndian
	ports := le.Uint32(keys[dissect.OffPorts:])
	l4 = ports|le.Uint32(keys[dissect.OffFlowLabel:]) != 0
	const start = dissect.HashOffset
	// The address type as a byte expression rather than keys.AddrType(): an
	// inlined call that is a statement's only work leaves a NOP behind. IPv6
	// is tested first (a switch would test IPv4 first): its address compare
	// costs more, IPv4 pays one compare and branch for it.
	t := dissect.AddrType(uint16(keys[dissect.OffAddrType]) | uint16(keys[dissect.OffAddrType+1])<<8)
	if t == dissect.AddrIPv6 {
		// memcmp order: the 16-byte addresses as two big-endian halves. The
		// high halves, which addresses of one network share, are compared
		// for equality as they lie; only the halves that decide are swapped.
		src, dst := (*[16]byte)(keys[dissect.OffIPv6Src:]), (*[16]byte)(keys[dissect.OffIPv6Dst:])
		if [8]byte(src[:8]) != [8]byte(dst[:8]) {
			if be64(dst[:8]) < be64(src[:8]) {
				return h.hashSorted(keys, swapAddrs, regionIPv6), l4
			}
		} else if be64(dst[8:]) < be64(src[8:]) {
			return h.hashSorted(keys, swapAddrs, regionIPv6), l4
		}
		// LE16 dport < LE16 sport; dport as bytes compares from memory.
		if uint16(keys[dissect.OffPorts+2])|uint16(keys[dissect.OffPorts+3])<<8 < uint16(ports) {
			return h.hashSorted(keys, swapPorts, regionIPv6), l4
		}
		return fold(h.sum64(keys[start : start+regionIPv6])), l4
	}
	switch t {
	case dissect.AddrIPv4:
		if le.Uint32(keys[dissect.OffIPv4Dst:]) < le.Uint32(keys[dissect.OffIPv4Src:]) {
			return h.hashSorted(keys, swapAddrs, regionIPv4), l4
		}
		if uint16(keys[dissect.OffPorts+2])|uint16(keys[dissect.OffPorts+3])<<8 < uint16(ports) {
			return h.hashSorted(keys, swapPorts, regionIPv4), l4
		}
		return fold(h.sum64(keys[start : start+regionIPv4])), l4
	case dissect.AddrTIPC:
		return fold(h.sum64(keys[start : start+regionTIPC])), l4
	}
	return fold(h.sum64(keys[start : start+regionNone])), l4
}

// be64 is binary.BigEndian.Uint64 as the byte expression it inlines to, which
// compiles to the same load and byte swap without the inlined call's NOP.
func be64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[7]) | uint64(b[6])<<8 | uint64(b[5])<<16 | uint64(b[4])<<24 |
		uint64(b[3])<<32 | uint64(b[2])<<40 | uint64(b[1])<<48 | uint64(b[0])<<56
}

// hashSorted is Hash for keys that sw and the order of their ports sort, with
// a region of n bytes: it hashes a sorted copy, leaving the caller's keys as
// they are.
func (h Kernel) hashSorted(keys *dissect.FlowKeys, sw swaps, n int) uint32 {
	if p := keys.PortsWord(); p>>16 < p&0xffff {
		sw |= swapPorts
	}
	sorted := *keys
	swap(&sorted, keys, sw)
	return fold(h.sum64(sorted[dissect.HashOffset : dissect.HashOffset+n]))
}

// sum64 is the one place SipHash is called. siphash.Hash on a slice, of a local
// array or of the caller's keys alike, is the fastest form measured
// (BenchmarkSipHashForms): its amd64 assembly is marked noescape, so a local
// array stays on the stack, whereas the hash.Hash64 form allocates a digest per
// call and is slower. SipHash is nearly all of Hash's cost, close to the
// latency of its 18 (IPv4 region) and 24 (IPv6) dependent SipRounds
// (docs/instructions.md has the counts and times).
func (h Kernel) sum64(p []byte) uint64 { return siphash.Hash(h.k0, h.k1, p) }

// fold truncates a SipHash value to the 32-bit flow hash. The kernel reserves
// 0 for "no hash", so a 0 becomes 1 (__flow_hash_from_keys).
func fold(v uint64) uint32 {
	if h := uint32(v); h != 0 {
		return h
	}
	return 1
}

// Consistentify sorts keys in place so that both directions of a flow give the
// same bytes (__flow_hash_consistentify, 6.x). For IPv4 the two addresses are
// ordered by their raw bytes read as little-endian u32 (unsigned: kernels before
// the 2022 fix "net: core: fix flow symmetric hash" used a signed difference
// and mis-ordered pairs exactly 0x80000000 apart); for IPv6 byte-wise, as memcmp
// does. Then, for both families, the ports are ordered on their own by their raw
// bytes read as little-endian u16, so an address and its port need not stay
// together. Other address types (none, TIPC) are left alone, ports included.
func Consistentify(keys *dissect.FlowKeys) { swap(keys, keys, swapsOf(keys)) }

// swaps is the set of exchanges Consistentify makes.
type swaps uint8

const (
	swapAddrs swaps = 1 << iota
	swapPorts
)

// swapsOf decides what Consistentify exchanges in keys.
func swapsOf(keys *dissect.FlowKeys) swaps {
	var sw swaps
	switch keys.AddrType() {
	case dissect.AddrIPv4:
		le := binary.LittleEndian
		if le.Uint32(keys[dissect.OffIPv4Dst:]) < le.Uint32(keys[dissect.OffIPv4Src:]) {
			sw |= swapAddrs
		}
	case dissect.AddrIPv6:
		if ipv6Reversed(keys) {
			sw |= swapAddrs
		}
	default:
		return 0
	}
	if ports := keys.PortsWord(); ports>>16 < ports&0xffff { // LE16 dport < LE16 sport
		sw |= swapPorts
	}
	return sw
}

// ipv6Reversed says whether the IPv6 destination sorts before the source, as
// memcmp compares them: two big-endian halves compare like 16 bytes.
func ipv6Reversed(keys *dissect.FlowKeys) bool {
	be := binary.BigEndian
	sHi, sLo := be.Uint64(keys[dissect.OffIPv6Src:]), be.Uint64(keys[dissect.OffIPv6Src+8:])
	dHi, dLo := be.Uint64(keys[dissect.OffIPv6Dst:]), be.Uint64(keys[dissect.OffIPv6Dst+8:])
	return dHi < sHi || dHi == sHi && dLo < sLo
}

// Little-endian 8-byte words of the keys that swap rewrites. SipHash reads the
// region as 8-byte words from offset 8, so swap stores whole words at the same
// offsets: a word written in 2-, 4- or 8-byte pieces that straddle it makes the
// load that reads it back wait for the stores to retire (store-to-load
// forwarding fails on a partial overlap), a cost BenchmarkKernelHashIPv4 and IPv6 showed on
// every hash whose keys needed a swap.
const (
	wordPorts = dissect.OffPorts - 4 // key id | sport | dport
	wordICMP  = dissect.OffICMP      // icmp | first 4 address bytes
	wordAddr1 = wordICMP + 8         // IPv4 dst | 4 more; IPv6 src[4:12]
	wordAddr2 = wordICMP + 16        // IPv6 src[12:16] | dst[0:4]
	wordAddr3 = wordICMP + 24        // IPv6 dst[4:12]
	wordAddr4 = wordICMP + 32        // IPv6 dst[12:16] | tail padding
	lo32      = 0x00000000ffffffff
)

// swap writes into dst the keys src with the exchanges sw made; dst must be src
// or a copy of it, as only the words that change are written.
func swap(dst, src *dissect.FlowKeys, sw swaps) {
	le := binary.LittleEndian
	if sw&swapAddrs != 0 {
		w0, w1 := le.Uint64(src[wordICMP:]), le.Uint64(src[wordAddr1:])
		if src.AddrType() == dissect.AddrIPv4 {
			le.PutUint64(dst[wordICMP:], w0&lo32|w1<<32)
			le.PutUint64(dst[wordAddr1:], w1&^lo32|w0>>32)
		} else {
			// The 16-byte IPv6 fields lie 16 bytes apart: swapping them moves
			// two whole words and the 4-byte halves at either end.
			w2, w3 := le.Uint64(src[wordAddr2:]), le.Uint64(src[wordAddr3:])
			w4 := le.Uint64(src[wordAddr4:])
			le.PutUint64(dst[wordICMP:], w0&lo32|w2&^lo32)
			le.PutUint64(dst[wordAddr1:], w3)
			le.PutUint64(dst[wordAddr2:], w4&lo32|w0&^lo32)
			le.PutUint64(dst[wordAddr3:], w1)
			le.PutUint64(dst[wordAddr4:], w4&^lo32|w2&lo32)
		}
	}
	if sw&swapPorts != 0 {
		w := le.Uint64(src[wordPorts:])
		sport, dport := w>>32&0xffff, w>>48
		le.PutUint64(dst[wordPorts:], w&lo32|dport<<32|sport<<48)
	}
}

// Region returns the bytes of keys the kernel hashes (flow_keys_hash_start and
// flow_keys_hash_length): keys[8:8+L] with L 48 for IPv4, 72 for IPv6, 44 for
// TIPC and 40 otherwise. Two consistentified keys describe the same kernel flow
// exactly when their regions are equal. The slice aliases keys.
func Region(keys *dissect.FlowKeys) []byte {
	n := regionNone
	switch keys.AddrType() {
	case dissect.AddrIPv4:
		n = regionIPv4
	case dissect.AddrIPv6:
		n = regionIPv6
	case dissect.AddrTIPC:
		n = regionTIPC
	}
	return keys[dissect.HashOffset : dissect.HashOffset+n]
}

// ReciprocalScale maps v into [0, n) by its high bits, as the kernel's
// reciprocal_scale does for RPS maps and fq_codel buckets: (v*n) >> 32.
func ReciprocalScale(v, n uint32) uint32 {
	return uint32(uint64(v) * uint64(n) >> 32)
}
