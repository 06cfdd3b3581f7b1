package runstats

// MaxDeviceQueueSamples bounds DeviceQueueCheck.Samples.
const MaxDeviceQueueSamples = 8

// DeviceQueueCheck is what --check-device-queue found: each frame with a
// device hash h should have arrived on the receive queue the device's RSS
// indirection table gives for it, table[h % len(table)].
type DeviceQueueCheck struct {
	TableLen   int    `json:"table_len"`  // entries of the device's table
	Frames     uint64 `json:"frames"`     // frames the check saw
	Checked    uint64 `json:"checked"`    // of them, frames with a device hash
	Mismatches uint64 `json:"mismatches"` // of them, frames on another queue
	// Samples are the first mismatches.
	Samples []DeviceQueueMismatch `json:"samples"`
}

// DeviceQueueMismatch is a frame that arrived on another queue than its
// device hash's table entry.
type DeviceQueueMismatch struct {
	Queue      int    `json:"queue"`       // the queue it arrived on
	Want       int    `json:"want"`        // the table's queue for its hash
	DeviceHash uint32 `json:"device_hash"` // its device hash
	DeviceType string `json:"device_type"`
}

// Add adds o's counts and samples to c.
func (c *DeviceQueueCheck) Add(o *DeviceQueueCheck) {
	c.Frames += o.Frames
	c.Checked += o.Checked
	c.Mismatches += o.Mismatches
	for _, s := range o.Samples {
		if len(c.Samples) < MaxDeviceQueueSamples {
			c.Samples = append(c.Samples, s)
		}
	}
}
