package main

import (
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline"
)

// TestCaptureComment: the metadata VLAN tag written into a frame's comment
// reads back; other comments are not xdphash's, and a broken tag is an error.
func TestCaptureComment(t *testing.T) {
	for _, tag := range []dissect.VLANTag{{}, {TPID: 0x8100, TCI: 100}, {TPID: 0x88a8, TCI: 0xe123}} {
		f := &pipeline.CapturedFrame{Hash: 0x1a2b3c4d, Source: hash.SourceDevice, L4: true, Worker: 1, Tag: tag,
			Meta: kernel.XDPMetadata{Valid: true, Hash: 0x1a2b3c4d, HashType: kernel.RSSL4}}
		c := string(appendCaptureComment(nil, f))
		got, ok, err := captureCommentTag(c)
		if err != nil || !ok || got != tag {
			t.Errorf("comment %q reads back tag %v, %v, %v; want %v", c, got, ok, err, tag)
		}
	}
	if _, ok, err := captureCommentTag("a comment of someone else's, vlan_tag=0x8100:1"); ok || err != nil {
		t.Errorf("another tool's comment: ok %v, err %v; want not ours", ok, err)
	}
	if _, _, err := captureCommentTag("xdphash hash=00000000 vlan_tag=0x9999:1"); err == nil {
		t.Error("a broken tag in xdphash's comment: no error")
	}
}
