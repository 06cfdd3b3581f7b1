package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/xdphash/xdphash/runstats"
)

var (
	hashSource  = prometheus.NewDesc("xdphash_hash_source_frames_total", "Frames by where their flow hash came from: computed here (kernel, toeplitz), the device's (device), or none.", []string{"source"}, nil)
	deviceCheck = prometheus.NewDesc("xdphash_device_hash_check_frames_total", "The device-hash check (--check-device-hash): frames seen, with a device hash, checked, in conflict with xdphash's hash, and of flows sharing a hash with another by chance (collisions).", []string{"count"}, nil)
)

// collectDevice sends the frames per hash source and, when the run checks
// them, the device-hash check's counts.
func collectDevice(st *runstats.RunStats, counter func(*prometheus.Desc, uint64, ...string)) {
	s := st.HashSources
	counter(hashSource, s.None, "none")
	counter(hashSource, s.Kernel, "kernel")
	counter(hashSource, s.Toeplitz, "toeplitz")
	counter(hashSource, s.Device, "device")
	if c := st.DeviceHash; c != nil {
		counter(deviceCheck, c.Frames, "frames")
		counter(deviceCheck, c.WithHash, "with_hash")
		counter(deviceCheck, c.Checked, "checked")
		counter(deviceCheck, c.Conflicts, "conflicts")
		counter(deviceCheck, c.Collisions, "collisions")
	}
}
