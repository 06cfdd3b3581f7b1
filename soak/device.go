package soak

import (
	"fmt"

	"github.com/xdphash/xdphash/pktgen"

	"github.com/xdphash/xdphash/runstats"
)

// checkDeviceHash is the device check's verdict: every frame the engine
// received had a device hash and agreed with the engine's own. seen and
// pushed are the VLAN push program's counts: the frames it saw leave the
// sending end, and those it gave a hardware tag.
func checkDeviceHash(st *runstats.RunStats, seen, pushed uint64) Check {
	c := Check{Name: "device hash: every received frame agrees with the kernel's own hash"}
	if st == nil || st.DeviceHash == nil {
		c.Detail = "no device-hash check in the run statistics"
		return c
	}
	d := st.DeviceHash
	c.Pass = d.Conflicts == 0 && d.Checked == st.Accounting.Received && d.WithHash == d.Frames
	c.Detail = fmt.Sprintf("%d frames received, %d seen by the check, %d with a device hash, %d checked (%s), %d conflicts, %d frames of chance hash collisions; %d of %d frames sent with a hardware VLAN tag",
		st.Accounting.Received, d.Frames, d.WithHash, d.Checked, d.Method, d.Conflicts, d.Collisions, pushed, seen)
	if len(d.Samples) > 0 {
		s := d.Samples[0]
		c.Detail += fmt.Sprintf("; first: device hash %08x, ours %08x, metadata tag %q, frame %s", s.DeviceHash, s.Hash, s.VLANTag, s.Frame)
	}
	return c
}

// checkDeviceProfile refuses, for the device check, a profile with frames
// tagged in their bytes: AF_PACKET moves the network header past such a tag
// when it sends, veth keeps that offset, and the kernel's own hash of those
// frames is then taken from the wrong place (docs/afxdp.md, traps), a
// conflict the check would rightly report on every such frame.
func checkDeviceProfile(cfg Config, prof pktgen.Profile) error {
	if !cfg.CheckDevice {
		return nil
	}
	for _, sw := range prof.Mix {
		if sw.Weight > 0 && sw.Shape.TaggedInBand() {
			return fmt.Errorf("configure soak: %w: the device check needs a profile without in-band VLAN tags, and %s has %s frames (AF_PACKET sends them with a network header offset the kernel then hashes from: see docs/afxdp.md): use --profile simple or tunnels", ErrConfig, prof.Name, sw.Shape)
		}
	}
	return nil
}
