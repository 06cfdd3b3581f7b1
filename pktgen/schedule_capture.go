package pktgen

import (
	"fmt"

	"github.com/xdphash/xdphash/internal/kernel"
)

// captureShape is the one shape of a capture's schedule: its frames are
// whatever the capture holds.
var captureShape = Shape{name: "capture"}

// NewCaptureSchedule builds a cycle of frames, in their order, each once: a
// capture to replay (xdphash soak --pcap). Each frame's destination MAC
// becomes macs.Dst, since the receiver takes only frames for it, and its
// source macs.Src when that is set; the rest is sent as captured. A frame
// shorter than MinFrameLen is padded with zeros, as Ethernet pads it. The
// generators keep kernel.HeadLen bytes of each frame and send zeros after
// them: the headers, which is what a receiver dissects and hashes, go as
// captured, a longer payload does not. A frame shorter than an Ethernet
// header or longer than kernel.MaxFrameLen is an error that names it.
// name is the schedule's profile name in reports ("pcap:FILE").
func NewCaptureSchedule(name string, frames [][]byte, macs MACs) (*Schedule, error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("build schedule of %s: no frames", name)
	}
	if len(macs.Dst) != 6 || macs.Src != nil && len(macs.Src) != 6 {
		return nil, fmt.Errorf("build schedule of %s: MAC addresses %q, %q: want 6 bytes each (the source may be nil)", name, macs.Dst, macs.Src)
	}
	if len(frames) > maxCaptureFrames {
		return nil, fmt.Errorf("build schedule of %s: %d frames, at most %d", name, len(frames), maxCaptureFrames)
	}
	sc := &Schedule{
		profile: Profile{Name: name, Mix: []ShapeWeight{{Shape: captureShape, Weight: 1}}},
		prefix:  make([]uint64, len(frames)+1),
		flows:   len(frames),
	}
	sc.table.Heads = make([]byte, 0, len(frames)*kernel.HeadLen)
	for i, f := range frames {
		if len(f) < 14 || len(f) > kernel.MaxFrameLen {
			return nil, fmt.Errorf("build schedule of %s: frame %d is %d bytes, want 14 to %d", name, i, len(f), kernel.MaxFrameLen)
		}
		var head [kernel.HeadLen]byte
		copy(head[:], f)
		copy(head[0:6], macs.Dst)
		if macs.Src != nil {
			copy(head[6:12], macs.Src)
		}
		n := max(len(f), MinFrameLen)
		if n < kernel.HeadLen {
			clear(head[n:])
		}
		sc.table.Heads = append(sc.table.Heads, head[:]...)
		sc.table.Lens = append(sc.table.Lens, uint16(n))
		sc.table.Order = append(sc.table.Order, uint32(i))
		sc.frameShape = append(sc.frameShape, 0)
		sc.frameFlow = append(sc.frameFlow, uint32(i))
		sc.frameReply = append(sc.frameReply, false)
		sc.prefix[i+1] = sc.prefix[i] + uint64(n)
	}
	if err := sc.table.Validate(); err != nil {
		return nil, fmt.Errorf("build schedule of %s: %w", name, err)
	}
	return sc, nil
}

// maxCaptureFrames bounds a capture's schedule: 128 bytes of head per frame.
const maxCaptureFrames = 1 << 22
