package main

import (
	"testing"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline"
)

// TestFrameComment: the comment --write gives a captured frame reads back
// with what the receive loop found and the device's metadata, the
// metadata VLAN tag among them.
func TestFrameComment(t *testing.T) {
	for _, tag := range []dissect.VLANTag{{}, {TPID: 0x8100, TCI: 100}, {TPID: 0x88a8, TCI: 0xe123}} {
		f := &pipeline.CapturedFrame{Hash: 0x1a2b3c4d, Source: hash.SourceDevice, L4: true, Worker: 1, Tag: tag,
			Meta: kernel.XDPMetadata{Valid: true, Hash: 0x5ea39405, HashType: kernel.RSSL4}}
		fc := frameComment(f)
		text := fc.String()
		got, ok, err := capture.ParseComment(text)
		if err != nil || !ok {
			t.Fatalf("comment %q: %v, %v", text, ok, err)
		}
		want := capture.Comment{Hash: 0x1a2b3c4d, Source: hash.SourceDevice.String(), L4: true, Worker: 1, Path: f.Path.String(), Tag: tag,
			HasDeviceHash: true, DeviceHash: 0x5ea39405, DeviceHashType: kernel.RSSL4.String()}
		if got != want {
			t.Errorf("comment %q reads back %+v, want %+v", text, got, want)
		}
	}
}
