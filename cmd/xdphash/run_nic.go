package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/nicrss"
)

// nicOptions are run's flags about the NIC whose RSS is modelled (issue 23).
type nicOptions struct {
	file   string   // --nic FILE
	level  string   // --rss-level outer|inner
	quirks []string // --rss-quirks

	nic    *nicrss.NIC // read from file by check
	hasher *nicrss.Hasher
}

func (n *nicOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&n.file, "nic", "", "pcap, synthetic: a NIC's whole RSS configuration as JSON (xdphash rss show --iface IF --json writes it): predict how it spreads the frames, and spread them over its queues")
	f.StringVar(&n.level, "rss-level", "", "the IP header a NIC hashes: outer (most NICs) or inner (IPIP/GRE inner, DPDK RSS level 2); default: the --nic file's, else outer")
	f.StringSliceVar(&n.quirks, "rss-quirks", nil, "device behaviours the NIC model copies: qemu-7.2 (QEMU 7.2's virtio-net, docs/nic-rss.md); default: the --nic file's, else none")
}

// check reads and validates --nic and --rss-level, and sets the queues of a
// --nic run to the NIC's.
func (n *nicOptions) check(o *runOptions, changed func(string) bool) error {
	switch {
	case n.level != "" && n.level != "outer" && n.level != "inner":
		return fmt.Errorf("--rss-level %q: want outer or inner", n.level)
	case n.file == "":
		if _, err := (&nicrss.NIC{Quirks: n.quirks}).ParseConfig(); err != nil {
			return fmt.Errorf("--rss-quirks: %w", err)
		}
		model := n.level != "" || len(n.quirks) > 0
		if model && o.iface != "" && (o.hash != hash.KindToeplitz || !o.device.checkHash) {
			return errors.New("--rss-level and --rss-quirks on --iface are for --check-device-hash with --hash toeplitz (the NIC model the device's hash is compared with)")
		}
		if model && o.iface == "" && o.virtualQueues < 2 {
			return errors.New("--rss-level and --rss-quirks without --nic are the NIC parse of the spread over --virtual-queues: give --virtual-queues 2 or more")
		}
		return nil
	case o.iface != "":
		return errors.New("--nic models a NIC that is not there: it is for --pcap and --synthetic (on --iface, rss show --json reads the device's and --check-device-hash compares)")
	case o.pcap == "-":
		return errors.New("--nic reads the capture twice (the prediction, then the run): give a file, not stdin")
	case changed("rss-key") || changed("symmetric"):
		return errors.New("--nic gives the key and the input transform: leave out --rss-key and --symmetric")
	}
	f, err := os.Open(n.file)
	if err != nil {
		return fmt.Errorf("--nic: %w", err)
	}
	defer f.Close()
	if n.nic, err = nicrss.Load(f); err != nil {
		return fmt.Errorf("--nic %s: %w", n.file, err)
	}
	if n.level != "" {
		n.nic.Level = n.level
	}
	if n.quirks != nil {
		n.nic.Quirks = n.quirks
	}
	if n.hasher, err = n.nic.Hasher(); err != nil {
		return fmt.Errorf("--nic %s: %w", n.file, err)
	}
	q := n.hasher.Queues()
	if changed("virtual-queues") && o.virtualQueues != q {
		return fmt.Errorf("--virtual-queues %d: the NIC of %s has %d queues (leave the flag out)", o.virtualQueues, n.file, q)
	}
	o.virtualQueues = q
	return nil
}

// checkNIC is the NIC model --check-device-hash compares a Toeplitz device
// hash with, frame by frame: the run's key and input transform, the hash
// fields the device reports, --rss-level and --rss-quirks; nil (no check by
// equality) unless the run hashes with Toeplitz on --iface.
func (o *runOptions) checkNIC(s *runSetup, log *slog.Logger) *nicrss.Hasher {
	if o.iface == "" || !o.device.checkHash || s.steer.Hash != hash.KindToeplitz {
		return nil
	}
	n := &nicrss.NIC{Level: o.nic.level, Quirks: o.nic.quirks, Fields: readDeviceFields(log, o.iface)}
	pc, err := n.ParseConfig()
	if err != nil {
		log.Warn("the device hashes fields the NIC model does not take: the device-hash check assumes addresses and ports for TCP and UDP", "err", err)
		n.Fields = nil
		pc, _ = n.ParseConfig() // the level and quirks were checked with the flags
	}
	// The key was checked with the flags; the engine's default model then.
	h, err := nicrss.NewHasher(s.steer.RSSKey, s.steer.Symmetry, pc)
	if err != nil {
		return nil
	}
	return h
}

// nicModel is the NIC the RSS stage models: --nic's, or with --rss-level a
// NIC with the run's key and a default table; nil for neither, where the
// stage hashes the kernel dissector's keys.
func (o *runOptions) nicModel(s *runSetup) (*nicrss.Hasher, error) {
	if o.nic.hasher != nil {
		return o.nic.hasher, nil
	}
	if o.nic.level == "" && len(o.nic.quirks) == 0 {
		return nil, nil
	}
	table := make([]uint32, hash.DefaultRETASize)
	for i := range table {
		table[i] = uint32(i % o.virtualQueues)
	}
	key := s.steer.RSSKey
	if key == nil {
		key = hash.DefaultRSSKey[:]
	}
	n := &nicrss.NIC{HashFunction: "toeplitz", Key: fmt.Sprintf("%x", key), Indirection: table, Queues: o.virtualQueues, Level: o.nic.level, Quirks: o.nic.quirks,
		InputTransform: map[hash.Symmetry]string{hash.SymmetricNone: "none", hash.SymmetricXOR: "symmetric-xor"}[s.steer.Symmetry]}
	h, err := n.Hasher()
	if err != nil {
		return nil, fmt.Errorf("--rss-level: %w (hint: --symmetric sort is not a NIC's transform)", err)
	}
	return h, nil
}

// predictNIC is the --nic prediction: how the NIC spreads every frame of the
// capture (or one cycle of the synthetic profile), written to w before the
// run.
func (o *runOptions) predictNIC(w io.Writer) error {
	if o.nic.hasher == nil {
		return nil
	}
	p, err := nicrss.NewPredictor(o.nic.hasher)
	if err != nil {
		return err
	}
	if o.synthetic != "" {
		frames, _, err := o.syntheticFrames()
		if err != nil {
			return err
		}
		for _, f := range frames {
			p.Add(f, len(f))
		}
	} else if err := predictCapture(p, o.pcap); err != nil {
		return err
	}
	r := p.Result()
	name := o.nic.nic.Name
	if err := r.WriteText(w, name); err != nil {
		return fmt.Errorf("write the NIC prediction: %w", err)
	}
	return nil
}

// predictCapture adds every frame of the capture file path to p.
func predictCapture(p *nicrss.Predictor, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--nic: open capture: %w", err)
	}
	defer f.Close()
	r, err := capture.OpenEthernet(f, path)
	if err != nil {
		return fmt.Errorf("--nic: %w", err)
	}
	for {
		data, ci, err := r.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("--nic: read %s: %w", path, err)
		}
		p.Add(data, max(ci.Length, len(data)))
	}
}
