package runstats

// HashSources counts the frames of a run by where their flow hash came from
// (hash.Source): computed here (kernel SipHash or Toeplitz), the device's,
// or none (--hash device, and the device gave none).
type HashSources struct {
	None     uint64 `json:"none"`
	Kernel   uint64 `json:"kernel"`
	Toeplitz uint64 `json:"toeplitz"`
	Device   uint64 `json:"device"`
}

// Add adds o's counts to s.
func (s *HashSources) Add(o HashSources) {
	s.None += o.None
	s.Kernel += o.Kernel
	s.Toeplitz += o.Toeplitz
	s.Device += o.Device
}

// MaxDeviceHashSamples bounds DeviceHashCheck.Samples.
const MaxDeviceHashSamples = 8

// DeviceHashCheck is what --check-device-hash found: each frame with a device
// hash compared with xdphash's own hash of it, by exact equality for Toeplitz
// and by partition for the kernel's SipHash (whose key the kernel keeps
// secret: two frames must share a device hash exactly when they share ours).
type DeviceHashCheck struct {
	// Method is "equality" (Toeplitz) or "partition" (kernel SipHash).
	Method    string `json:"method"`
	Frames    uint64 `json:"frames"`    // frames the check saw
	WithHash  uint64 `json:"with_hash"` // of them, frames with a device hash
	Checked   uint64 `json:"checked"`   // of them, frames compared
	Conflicts uint64 `json:"conflicts"` // frames whose hashes disagree
	// Collisions (partition) counts the frames whose hash, the device's or
	// ours, another flow has too by chance: not conflicts. Among F flows
	// chance makes about F²/2³³ such pairs in each hash.
	Collisions uint64 `json:"collisions,omitempty"`
	// FieldsDiffer (equality) counts the checked frames whose device hash
	// type declares other fields (family, ports or not) than the NIC model
	// (package nicrss, with the device's rx-flow-hash fields) hashes for
	// the frame: where the device's parser and the model part.
	FieldsDiffer uint64 `json:"fields_differ,omitempty"`
	// NotHashedByDevice (equality) counts the frames the device gave no
	// hash that the NIC model hashes.
	NotHashedByDevice uint64 `json:"not_hashed_by_device,omitempty"`
	// Samples are the first conflicting frames (at most
	// MaxDeviceHashSamples per receive queue).
	Samples []DeviceHashConflict `json:"samples"`
	// Classes explains the conflicts: how many fall in each class, with
	// what the class means; only the classes that occurred.
	Classes []DeviceHashClass `json:"classes,omitempty"`
}

// DeviceHashClass is one kind of device-hash conflict.
type DeviceHashClass struct {
	Class   string `json:"class"`
	Frames  uint64 `json:"frames"`
	Explain string `json:"explain"`
}

// Add adds o's counts and samples to c, up to MaxDeviceHashSamples samples.
func (c *DeviceHashCheck) Add(o *DeviceHashCheck) {
	if c.Method == "" {
		c.Method = o.Method
	}
	c.Frames += o.Frames
	c.WithHash += o.WithHash
	c.Checked += o.Checked
	c.Conflicts += o.Conflicts
	c.Collisions += o.Collisions
	c.FieldsDiffer += o.FieldsDiffer
	c.NotHashedByDevice += o.NotHashedByDevice
	for _, s := range o.Samples {
		if len(c.Samples) < MaxDeviceHashSamples {
			c.Samples = append(c.Samples, s)
		}
	}
next:
	for _, oc := range o.Classes {
		for i := range c.Classes {
			if c.Classes[i].Class == oc.Class {
				c.Classes[i].Frames += oc.Frames
				continue next
			}
		}
		c.Classes = append(c.Classes, oc)
	}
}

// DeviceHashConflict is one frame whose device hash disagrees with ours.
type DeviceHashConflict struct {
	Queue int `json:"queue"`
	// Frame is the frame as received, in hex.
	Frame string `json:"frame"`
	DeviceHashFrame
	// Other is, for the partition check, the earlier frame the conflict is
	// with: the same device hash and not the same hash of ours, or the
	// reverse.
	Other *DeviceHashFrame `json:"other,omitempty"`
}

// DeviceHashFrame is what the check knew of a frame.
type DeviceHashFrame struct {
	DeviceHash uint32 `json:"device_hash"`
	DeviceType string `json:"device_hash_type"` // what the device hashed (kernel.RSSHashType)
	Hash       uint32 `json:"hash"`             // xdphash's own hash
	// Keys is the 80-byte struct flow_keys xdphash dissected, in hex, as
	// `xdphash dissect --format jsonl` prints it.
	Keys string `json:"keys"`
	// VLANTag is the metadata VLAN tag the frame was dissected with,
	// "0x8100:0x0064", "" for none.
	VLANTag string `json:"vlan_tag,omitempty"`
}
