package soak

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/pktgen"
)

// maxCaptureFrames and maxCaptureBytes bound what a soak reads of
// Config.Pcap: its frames are held in memory for the generator to cycle.
const (
	maxCaptureFrames = 1 << 20
	maxCaptureBytes  = 256 << 20
)

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
	c, err := capture.OpenEthernet(f, path)
	if err != nil {
		return nil, fmt.Errorf("soak --pcap: %w", err)
	}
	var frames [][]byte
	held := 0
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
		if held += len(frame); held > maxCaptureBytes {
			return nil, fmt.Errorf("soak --pcap: %s holds more than %d MiB of frames", path, maxCaptureBytes>>20)
		}
		frames = append(frames, append([]byte(nil), frame...))
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("soak --pcap: %s holds no frame", path)
	}
	return frames, nil
}
