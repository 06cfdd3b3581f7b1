package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/runstats"
)

// deviceOptions are xdphash run's flags about the device's metadata.
type deviceOptions struct {
	checkHash   bool   // --check-device-hash
	checkQueue  bool   // --check-device-queue
	withholdTag bool   // --withhold-vlan-tag
	retaTable   string // --reta-table: "" or "device"
}

// deviceRSSKey is the --rss-key value that reads the interface's own key.
const deviceRSSKey = "device"

func (d *deviceOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&d.checkHash, "check-device-hash", false, "AF_XDP: compare the device's hash of every frame that has one with xdphash's own (Toeplitz: equal; kernel: the same partition); exit status 1 on a conflict")
	f.BoolVar(&d.checkQueue, "check-device-queue", false, "AF_XDP: check that every frame with a device hash came in on the queue the device's RSS indirection table gives for it (table[hash % len]); exit status 1 on a mismatch")
	f.StringVar(&d.retaTable, "reta-table", "", "reta steering: \"device\" steers by the interface's own RSS indirection table (ethtool -x), its queues being the workers")
	f.BoolVar(&d.withholdTag, "withhold-vlan-tag", false, "AF_XDP, debugging aid: dissect as if the device had not stripped a VLAN tag into the metadata (what a pipeline blind to it computes)")
}

// check validates the device flags and resolves --hash's default: auto for
// AF_XDP, kernel for files and synthetic traffic, which carry no device
// hash.
func (d *deviceOptions) check(o *runOptions, changed func(string) bool) error {
	if o.iface == "" {
		switch {
		case !changed("hash"):
			o.hash = hash.KindKernel
		case o.hash == hash.KindAuto || o.hash == hash.KindDevice:
			return fmt.Errorf("--hash %s takes the device's hash from AF_XDP's metadata: it is for --iface (hint: --hash kernel)", o.hash)
		}
		if d.checkHash || d.checkQueue || d.withholdTag || o.rssKey == deviceRSSKey {
			return fmt.Errorf("--check-device-hash, --check-device-queue, --withhold-vlan-tag and --rss-key %s are for --iface", deviceRSSKey)
		}
	}
	switch {
	case d.retaTable != "" && d.retaTable != "device":
		return fmt.Errorf("--reta-table %q: want device", d.retaTable)
	case d.retaTable != "" && (o.iface == "" || o.steer != "reta" || o.retaWeights != ""):
		return fmt.Errorf("--reta-table device is for --iface with --steer reta, without --reta-weights")
	}
	if d.checkHash && o.hash == hash.KindDevice {
		return fmt.Errorf("--check-device-hash compares the device's hash with xdphash's own: use it with --hash auto, kernel or toeplitz, not device")
	}
	return nil
}

// readDeviceRSSKey is the RSS key of iface, for --rss-key device.
func readDeviceRSSKey(iface string) ([]byte, error) {
	c, err := kernel.ReadRSS(iface)
	if err != nil {
		return nil, fmt.Errorf("--rss-key device: %w (hint: give the key in hex, as `ethtool -x %s` shows it)", err, iface)
	}
	if _, err := hash.NewToeplitz(c.Key); err != nil {
		return nil, fmt.Errorf("--rss-key device: the key %s reports: %w", iface, err)
	}
	return c.Key, nil
}

// readDeviceRETA is the RSS indirection table of iface, for --reta-table
// device.
func readDeviceRETA(iface string) ([]uint32, error) {
	c, err := kernel.ReadRSS(iface)
	if err != nil {
		return nil, fmt.Errorf("--reta-table device: %w (hint: --reta-weights models a table)", err)
	}
	if len(c.Indirection) == 0 {
		return nil, fmt.Errorf("--reta-table device: %s reports no indirection table", iface)
	}
	return c.Indirection, nil
}

// deviceHashVerdict is the run's exit status when the device-hash check found
// conflicts: exitDivergence.
func deviceHashVerdict(st *runstats.RunStats) error {
	if c := st.DeviceHash; c != nil && c.Conflicts > 0 {
		return &exitError{code: exitDivergence, err: fmt.Errorf("device hash check: %d of %d checked frames conflict with xdphash's hash", c.Conflicts, c.Checked)}
	}
	if c := st.DeviceQueue; c != nil && c.Mismatches > 0 {
		return &exitError{code: exitDivergence, err: fmt.Errorf("device queue check: %d of %d checked frames came in on another queue than the device's table gives", c.Mismatches, c.Checked)}
	}
	return nil
}

// warnNoMetadata says what the device flags do when the source hands no
// device metadata (the plain XDP program): --hash auto computes every hash,
// --hash device has none, and the check has nothing to compare.
func warnNoMetadata(log *slog.Logger, o *runOptions, info source.Info) {
	if o.iface == "" || info.Metadata {
		return
	}
	switch {
	case o.hash == hash.KindDevice:
		log.Warn("no device metadata: every frame hashes to 0 (hash source none)", "xdp_program", info.XDPProgram)
	case o.device.checkHash:
		log.Warn("no device metadata: the device-hash check has no frame to compare", "xdp_program", info.XDPProgram)
	case o.hash == hash.KindAuto:
		log.Info("no device metadata: --hash auto computes the kernel's hash of every frame", "xdp_program", info.XDPProgram)
	}
}
