package soak

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/pktgen"
)

// maxCaptureFrames bounds what a soak reads of Config.Pcap.
const maxCaptureFrames = 1 << 20

// newSchedule is what the soak's generator sends: the frames of
// Config.Pcap, in order and cycling, or else the profile's cycle.
func newSchedule(cfg Config, prof pktgen.Profile, macs pktgen.MACs) (*pktgen.Schedule, error) {
	if cfg.Pcap == "" {
		return pktgen.NewSchedule(prof, macs)
	}
	frames, err := readCapture(cfg.Pcap)
	if err != nil {
		return nil, err
	}
	return pktgen.NewCaptureSchedule("pcap:"+cfg.Pcap, frames, macs)
}

// readCapture reads every frame of a pcap or pcapng file of Ethernet frames.
func readCapture(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("soak --pcap: %w", err)
	}
	defer f.Close()
	c, err := source.OpenEthernetCapture(f, path)
	if err != nil {
		return nil, fmt.Errorf("soak --pcap: %w", err)
	}
	var frames [][]byte
	for i := 0; ; i++ {
		frame, info, err := c.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) && info.CaptureLength == 0 {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("soak --pcap: read frame %d of %s: %w", i, path, err)
		}
		if len(frames) == maxCaptureFrames {
			return nil, fmt.Errorf("soak --pcap: %s has more than %d frames", path, maxCaptureFrames)
		}
		frames = append(frames, append([]byte(nil), frame...))
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("soak --pcap: %s holds no frame", path)
	}
	return frames, nil
}
