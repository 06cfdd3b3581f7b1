package pktgen

import (
	"bytes"
	"net"
	"testing"

	"github.com/xdphash/xdphash/internal/kernel"
)

func TestCaptureSchedule(t *testing.T) {
	dst := net.HardwareAddr{2, 0, 0, 0, 0, 9}
	frame := func(n int, fill byte) []byte {
		b := bytes.Repeat([]byte{fill}, n)
		b[12], b[13] = 0x08, 0x00
		return b
	}
	in := [][]byte{frame(20, 1), frame(100, 2), frame(300, 3)}
	s, err := NewCaptureSchedule("pcap:test", in, MACs{Dst: dst})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 || s.Profile().Name != "pcap:test" {
		t.Fatalf("%d frames, profile %q", s.Len(), s.Profile().Name)
	}
	out := s.Frames()
	for i, f := range out {
		want := append([]byte(nil), in[i]...)
		copy(want, dst)
		if len(want) < MinFrameLen {
			want = append(want, make([]byte, MinFrameLen-len(want))...)
		}
		clear(want[min(len(want), kernel.HeadLen):]) // only the head is sent as captured
		if !bytes.Equal(f, want) {
			t.Errorf("frame %d: %d bytes %x, want %d bytes %x", i, len(f), f, len(want), want)
		}
	}
	if got, want := s.Bytes(0, 4), uint64(60+100+300+60); got != want {
		t.Errorf("Bytes(0, 4) = %d, want %d", got, want)
	}
	for _, bad := range [][][]byte{nil, {make([]byte, 10)}, {make([]byte, kernel.MaxFrameLen+1)}} {
		if _, err := NewCaptureSchedule("pcap:bad", bad, MACs{Dst: dst}); err == nil {
			t.Errorf("frames of %d: no error", len(bad))
		}
	}
	if _, err := NewCaptureSchedule("pcap:bad", in, MACs{}); err == nil {
		t.Error("no destination MAC: no error")
	}
}
