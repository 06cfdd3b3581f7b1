package pipeline

import (
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/nicrss"
	"github.com/xdphash/xdphash/runstats"
)

// checkNIC is the device-hash check's model of a Toeplitz NIC: its own parse
// of the frame (package nicrss), whose hash the device's must equal, and, to
// explain a conflict, the Toeplitz hash of the kernel dissector's keys.
type checkNIC struct {
	h        *nicrss.Hasher
	toeplitz *hash.Toeplitz
	sym      hash.Symmetry
	t        nicrss.Tuple // the last frame's tuple
}

// newCheckNIC is the NIC model of cfg's check, nil for the partition check.
func newCheckNIC(cfg *EngineConfig, equality bool) *checkNIC {
	if !equality {
		return nil
	}
	key := cfg.Steering.RSSKey
	if key == nil {
		key = hash.DefaultRSSKey[:]
	}
	// The steering built a Toeplitz hash from the same key, so neither can
	// fail here.
	t, _ := hash.NewToeplitz(key)
	h := cfg.CheckNIC
	if h == nil {
		h, _ = nicrss.NewHasher(key, cfg.Steering.Symmetry, nicrss.ParseConfig{Types: nicrss.TypesDefault})
	}
	return &checkNIC{h: h, toeplitz: t, sym: cfg.Steering.Symmetry}
}

// hash is the NIC's hash of frame, 0 when it gives none; it keeps the
// frame's tuple for hashed, declares and the conflict's class.
func (n *checkNIC) hash(frame []byte) uint32 {
	h, _ := n.h.Hash(&n.t, frame)
	return h
}

// hashed tells whether the NIC hashes the last frame.
func (n *checkNIC) hashed() bool { return n.t.Report != nicrss.ReportNone }

// declares tells whether a device's hash type t says it hashed what the NIC
// hashes for the last frame: the same family, ports or not. (A hash type
// that names neither family, as veth's, declares nothing to compare.)
func (n *checkNIC) declares(t kernel.RSSHashType) bool {
	if t&(kernel.RSSL3IPv4|kernel.RSSL3IPv6) == 0 {
		return true
	}
	r := n.t.Report
	return r != nicrss.ReportNone && r.IsIPv6() == (t&kernel.RSSL3IPv6 != 0) && r.HasPorts() == t.IsL4()
}

// conflictClass is what a conflict's frame tells of its cause.
type conflictClass uint8

const (
	classOther conflictClass = iota
	classNotHashed
	classAddressesOnly
	classWithPorts
	classKernelView
	classStale
	classMerged
	classSplit
	numConflictClasses
)

var conflictClasses = [numConflictClasses]runstats.DeviceHashClass{
	classOther:         {Class: "other", Explain: "the hash matches none of the explanations below: a different key, table, input transform, or a parse the model does not know"},
	classNotHashed:     {Class: "not-hashed-by-model", Explain: "the device hashed a frame the NIC model gives no hash (a header the device parses and the model does not, or a hash type the model leaves off)"},
	classAddressesOnly: {Class: "addresses-only", Explain: "the device hashed the addresses without the ports: its fields for this flow type exclude the ports (ethtool -n DEV rx-flow-hash tcp4|udp4|tcp6|udp6), or it read no ports here"},
	classWithPorts:     {Class: "with-ports", Explain: "the device hashed ports where the model hashes addresses only (a fragment or an IPv6 extension header the device reads differently)"},
	classKernelView:    {Class: "kernel-view", Explain: "the device hashed the headers the kernel's dissector keys, the inner headers of a tunnel: try --rss-level inner"},
	classStale:         {Class: "stale-fields", Explain: "QEMU 7.2 hashed this IPv4 header cut short with addresses kept from an earlier frame; its hash is not predictable from the frame"},
	classMerged:        {Class: "device-merges", Explain: "frames with one device hash have different kernel hashes, more often than chance makes two flows share a 32-bit hash: the device hashes fewer fields than the kernel (addresses only, or a tunnel's outer headers)"},
	classSplit:         {Class: "device-splits", Explain: "frames with the same keys have different device hashes: the device hashes fields the kernel leaves out (ports past an IPv6 flow label, a tunnel's outer headers)"},
}

// classify says which class a conflict of frame with metadata m falls in
// (keys the kernel's keys, own our hash, other the partition check's earlier
// frame). Called on conflicts only.
func (c *deviceCheck) classify(frame []byte, m *kernel.XDPMetadata, keys *dissect.FlowKeys, own uint32, other *checkEntry) conflictClass {
	if !c.equality {
		if other != nil && other.dev == m.Hash {
			return classMerged
		}
		return classSplit
	}
	n := c.nic
	t := &n.t
	switch {
	case t.Report == nicrss.ReportNone:
		return classNotHashed
	case t.Stale:
		return classStale
	}
	a := t.AddrLen()
	if t.Report.HasPorts() && n.toeplitz.HashTuple(t.Src[:a], t.Dst[:a], 0, 0, false, n.sym) == m.Hash {
		return classAddressesOnly
	}
	if n.toeplitz.FromKeys(keys, true, n.sym) == m.Hash && !t.Report.HasPorts() {
		return classWithPorts
	}
	if n.toeplitz.FromKeys(keys, true, n.sym) == m.Hash || n.toeplitz.FromKeys(keys, false, n.sym) == m.Hash {
		return classKernelView
	}
	return classOther
}

// publishClasses stores the class counters for Engine.Stats.
func (c *deviceCheck) publishClasses(p *devicePub) {
	for i, n := range c.classes {
		p.classes[i].Store(n)
	}
}

// pubClasses is the classes p published, those that occurred.
func pubClasses(p *devicePub) []runstats.DeviceHashClass {
	var out []runstats.DeviceHashClass
	for i := range p.classes {
		if n := p.classes[i].Load(); n > 0 {
			k := conflictClasses[i]
			k.Frames = n
			out = append(out, k)
		}
	}
	return out
}
