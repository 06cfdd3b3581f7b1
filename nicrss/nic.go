package nicrss

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/xdphash/xdphash/hash"
)

// Errors of this package.
var (
	// ErrConfig reports a NIC configuration this package refuses: a field
	// out of range, or a device feature it does not model.
	ErrConfig = errors.New("invalid NIC RSS configuration")
)

// Bounds of a NIC configuration.
const (
	// MaxFileSize bounds a configuration file: a 65536-entry table written
	// out with spaces fits.
	MaxFileSize = 1 << 20
	// MaxTable bounds the indirection table, as hash.NewRETAFromTable does.
	MaxTable = 1 << 16
	// MaxQueues bounds the receive queues.
	MaxQueues = 1 << 16
)

// NIC is a device's whole RSS configuration, as `xdphash rss show --json`
// writes it and `run --nic FILE` reads it.
type NIC struct {
	// Name is the device's name, for reports; may be empty.
	Name string `json:"name,omitempty"`
	// HashFunction is "toeplitz", the only one modelled (ethtool's hfunc).
	HashFunction string `json:"hash_function"`
	// InputTransform is "none" or "symmetric-xor" (ethtool's RXH_XFRM_SYM_XOR).
	InputTransform string `json:"input_transform"`
	// Key is the hash key in hex, bytes optionally separated by colons as
	// `ethtool -x` prints it: 40 or 52 bytes.
	Key string `json:"key"`
	// Indirection is the indirection table: a frame with hash h goes to
	// queue Indirection[h % len]; a power of two entries.
	Indirection []uint32 `json:"indirection"`
	// Queues is the number of receive queues; 0 means one more than the
	// largest entry of Indirection.
	Queues int `json:"queues,omitempty"`
	// Fields are the header fields hashed per flow type, in ethtool's
	// rx-flow-hash letters: "sdfn" (addresses and ports), "sd" (addresses)
	// or "" (not hashed), for the flow types tcp4, udp4, tcp6, udp6, ip4 and
	// ip6. A flow type left out takes its default: sdfn for TCP and UDP, sd
	// for ip4 and ip6.
	Fields map[string]string `json:"fields,omitempty"`
	// IPv6Ex selects the _EX hash types for IPv6 (the home address of a
	// destination options header and the address of a type 2 routing header
	// replace the source and destination).
	IPv6Ex bool `json:"ipv6_ex,omitempty"`
	// Level is "outer" (the default) or "inner" (DPDK's RSS level 2: the IP
	// header inside IPIP and GRE).
	Level string `json:"level,omitempty"`
	// Quirks lists device behaviours to model: "qemu-7.2".
	Quirks []string `json:"quirks,omitempty"`
}

// flowTypes are the flow types of NIC.Fields, with the hash type that
// "sdfn" (TCP, UDP) or "sd" (ip4, ip6) enables.
var flowTypes = []struct {
	name  string
	ports bool
	typ   Types
}{
	{"tcp4", true, TypeTCPv4}, {"udp4", true, TypeUDPv4}, {"tcp6", true, TypeTCPv6}, {"udp6", true, TypeUDPv6},
	{"ip4", false, TypeIPv4}, {"ip6", false, TypeIPv6},
}

// FlowTypeNames lists the flow types of NIC.Fields.
func FlowTypeNames() []string {
	names := make([]string, len(flowTypes))
	for i, f := range flowTypes {
		names[i] = f.name
	}
	return names
}

// The RXH_* bits of include/uapi/linux/ethtool.h and their rx-flow-hash
// letters.
var rxhLetters = []struct {
	bit    uint64
	letter byte
}{{1 << 1, 'm'}, {1 << 2, 'v'}, {1 << 3, 't'}, {1 << 4, 's'}, {1 << 5, 'd'}, {1 << 6, 'f'}, {1 << 7, 'n'}}

// FieldLetters spells a set of RXH_* bits (what ETHTOOL_GRXFH returns) in
// ethtool's rx-flow-hash letters: "sdfn" for addresses and ports. Bits
// without a letter are left out; RXH_DISCARD is "discard".
func FieldLetters(rxh uint64) string {
	if rxh&(1<<31) != 0 {
		return "discard"
	}
	var b []byte
	for _, l := range rxhLetters {
		if rxh&l.bit != 0 {
			b = append(b, l.letter)
		}
	}
	return string(b)
}

// Load reads a NIC configuration from r: one JSON object of at most
// MaxFileSize bytes, with no unknown fields, checked by [NIC.Check].
func Load(r io.Reader) (*NIC, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read NIC configuration: %w", err)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("read NIC configuration: %w: longer than %d bytes", ErrConfig, MaxFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var n NIC
	if err := dec.Decode(&n); err != nil {
		return nil, fmt.Errorf("read NIC configuration: %w: %w", ErrConfig, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("read NIC configuration: %w: data after the JSON object", ErrConfig)
	}
	if err := n.Check(); err != nil {
		return nil, err
	}
	return &n, nil
}

// Check validates the configuration.
func (n *NIC) Check() error {
	_, err := n.Hasher()
	return err
}

// bad is a Check error.
func bad(format string, args ...any) error {
	return fmt.Errorf("check NIC configuration: %w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// KeyBytes is the hash key.
func (n *NIC) KeyBytes() ([]byte, error) {
	key, err := hex.DecodeString(strings.ReplaceAll(n.Key, ":", ""))
	if err != nil {
		return nil, bad("key %q: want hex bytes such as 6d:5a:56:da", n.Key)
	}
	if len(key) != 40 && len(key) != 52 {
		return nil, bad("a %d-byte key, want 40 or 52 bytes", len(key))
	}
	return key, nil
}

// QueueCount is Queues, or one more than the largest table entry.
func (n *NIC) QueueCount() int {
	if n.Queues > 0 {
		return n.Queues
	}
	q := 0
	for _, e := range n.Indirection {
		q = max(q, int(e)+1)
	}
	return q
}

// Symmetry is the input transform as package hash names it.
func (n *NIC) Symmetry() (hash.Symmetry, error) {
	switch n.InputTransform {
	case "", "none":
		return hash.SymmetricNone, nil
	case "symmetric-xor", "sym-xor":
		return hash.SymmetricXOR, nil
	}
	return 0, bad("input transform %q: want none or symmetric-xor (symmetric-or-xor is not modelled)", n.InputTransform)
}

// ParseConfig is the parse the configuration describes.
func (n *NIC) ParseConfig() (ParseConfig, error) {
	var c ParseConfig
	switch n.Level {
	case "", "outer":
	case "inner":
		c.Level = LevelInner
	default:
		return c, bad("level %q: want outer or inner", n.Level)
	}
	for _, q := range n.Quirks {
		if q != "qemu-7.2" {
			return c, bad("quirk %q: want qemu-7.2", q)
		}
		c.Quirks |= QuirkQEMU72
	}
	for name := range n.Fields {
		if !strings.Contains(" "+strings.Join(FlowTypeNames(), " ")+" ", " "+name+" ") {
			return c, bad("fields of flow type %q: want %s", name, strings.Join(FlowTypeNames(), ", "))
		}
	}
	for _, f := range flowTypes {
		v, ok := n.Fields[f.name]
		if !ok {
			c.Types |= f.typ
			continue
		}
		switch {
		case v == "":
		case f.ports && v == "sdfn":
			c.Types |= f.typ
		case f.ports && v == "sd":
			// Addresses only: the flow falls back to the ip4/ip6 type.
		case !f.ports && v == "sd":
			c.Types |= f.typ
		default:
			return c, bad("fields %q of %s: want %s, or \"\" (other sets are not modelled)", v, f.name, map[bool]string{true: "sdfn or sd", false: "sd"}[f.ports])
		}
	}
	if n.IPv6Ex {
		for _, p := range [...][2]Types{{TypeIPv6, TypeIPv6Ex}, {TypeTCPv6, TypeTCPv6Ex}, {TypeUDPv6, TypeUDPv6Ex}} {
			if c.Types&p[0] != 0 {
				c.Types = c.Types&^p[0] | p[1]
			}
		}
	}
	return c, nil
}

// Hasher checks the configuration and returns the hasher it describes.
func (n *NIC) Hasher() (*Hasher, error) {
	if n.HashFunction != "toeplitz" {
		return nil, bad("hash function %q: want toeplitz (xor and crc32 are not modelled)", n.HashFunction)
	}
	key, err := n.KeyBytes()
	if err != nil {
		return nil, err
	}
	sym, err := n.Symmetry()
	if err != nil {
		return nil, err
	}
	pc, err := n.ParseConfig()
	if err != nil {
		return nil, err
	}
	size := len(n.Indirection)
	if size == 0 || size > MaxTable || size&(size-1) != 0 {
		return nil, bad("an indirection table of %d entries, want a power of two up to %d", size, MaxTable)
	}
	q := n.QueueCount()
	if n.Queues < 0 || q > MaxQueues {
		return nil, bad("%d queues, want 1 to %d", n.Queues, MaxQueues)
	}
	reta, err := hash.NewRETAFromTable(n.Indirection, q)
	if err != nil {
		return nil, bad("%v", err)
	}
	t, err := hash.NewToeplitz(key)
	if err != nil {
		return nil, bad("%v", err)
	}
	return &Hasher{Parse: pc, toeplitz: t, sym: sym, reta: reta, queues: q}, nil
}

// Hasher hashes frames as one NIC does. It holds no mutable state: receive
// loops may share it.
type Hasher struct {
	Parse    ParseConfig
	toeplitz *hash.Toeplitz
	sym      hash.Symmetry
	reta     *hash.RETA
	queues   int
}

// NewHasher is the hasher of a Toeplitz key (nil: hash.DefaultRSSKey), an
// input transform and a parse, without a table (Queue then returns 0).
func NewHasher(key []byte, sym hash.Symmetry, pc ParseConfig) (*Hasher, error) {
	if key == nil {
		key = hash.DefaultRSSKey[:]
	}
	t, err := hash.NewToeplitz(key)
	if err != nil {
		return nil, fmt.Errorf("create NIC hasher: %w", err)
	}
	return &Hasher{Parse: pc, toeplitz: t, sym: sym, queues: 1}, nil
}

// Hash parses frame into t and returns the device's hash of it; ok is false
// when the device gives none (h is then 0). A Stale tuple is hashed with
// its zero fields. It allocates nothing.
func (h *Hasher) Hash(t *Tuple, frame []byte) (hv uint32, ok bool) {
	if !h.Parse.Parse(t, frame) {
		return 0, false
	}
	return h.HashTuple(t), true
}

// HashTuple is the hash of a tuple the parse filled.
func (h *Hasher) HashTuple(t *Tuple) uint32 {
	if h.sym == hash.SymmetricNone {
		// The fixed tuples, without a copy: what most NICs hash.
		if t.Report.IsIPv6() {
			return h.toeplitz.HashIPv6(&t.Src, &t.Dst, t.Sport, t.Dport, t.Report.HasPorts())
		}
		return h.toeplitz.HashIPv4((*[4]byte)(t.Src[:4]), (*[4]byte)(t.Dst[:4]), t.Sport, t.Dport, t.Report.HasPorts())
	}
	n := t.AddrLen()
	return h.toeplitz.HashTuple(t.Src[:n], t.Dst[:n], t.Sport, t.Dport, t.Report.HasPorts(), h.sym)
}

// Queue is the receive queue of a frame with hash hv, ok as Hash returned
// it: the table's entry hv % size, and queue 0 for a frame without a hash
// (where virtio-net and most NICs put it).
func (h *Hasher) Queue(hv uint32, ok bool) int {
	if !ok || h.reta == nil {
		return 0
	}
	return h.reta.Queue(hv)
}

// Queues is the number of receive queues.
func (h *Hasher) Queues() int { return h.queues }

// TableSize is the number of indirection table entries, 0 without a table.
func (h *Hasher) TableSize() int {
	if h.reta == nil {
		return 0
	}
	return h.reta.Len()
}

// Spread returns the function that puts a frame on its receive queue, for
// the pipeline's RSS stage. It is not safe for concurrent use.
func (h *Hasher) Spread() func(frame []byte) int {
	var t Tuple
	return func(frame []byte) int {
		hv, ok := h.Hash(&t, frame)
		return h.Queue(hv, ok)
	}
}
