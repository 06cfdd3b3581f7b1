package capture

import (
	"bytes"
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// TestCommentRoundTrip: every comment written reads back as it was, with
// and without the device's fields.
func TestCommentRoundTrip(t *testing.T) {
	for _, c := range []Comment{
		{Hash: 0x1a2b3c4d, Source: "device", L4: true, Worker: 1, Path: "fast:eth_ip"},
		{Hash: 0, Source: "kernel", Worker: 0, Path: "slow", Tag: dissect.VLANTag{TPID: 0x8100, TCI: 100}},
		{Hash: 0xffffffff, Source: "toeplitz", L4: true, Worker: 63, Path: "fast:vlan", Tag: dissect.VLANTag{TPID: 0x88a8, TCI: 0xe123},
			HasDeviceHash: true, DeviceHash: 0x0000abcd, DeviceHashType: "l3-ipv4|l4|l4-tcp", HasRxTimestamp: true, RxTimestamp: 1<<64 - 1},
		{Hash: 0x00000001, Source: "kernel", Path: "slow", HasRxTimestamp: true},
	} {
		text := c.String()
		got, ok, err := ParseComment(text)
		if err != nil || !ok || got != c {
			t.Errorf("comment %q reads back %+v, %v, %v; want %+v", text, got, ok, err, c)
		}
	}
}

// TestCommentText pins the text that tshark users and older files see.
func TestCommentText(t *testing.T) {
	c := Comment{Hash: 0x0689c062, Source: "kernel", L4: true, Path: "fast:vlan", Tag: dissect.VLANTag{TPID: 0x8100, TCI: 0x6123},
		HasDeviceHash: true, DeviceHash: 0x5ea39405, DeviceHashType: "l4"}
	const want = "xdphash hash=0689c062 source=kernel l4=true worker=0 path=fast:vlan vlan_tag=0x8100:0x6123 device_hash=5ea39405 device_hash_type=l4"
	if got := c.String(); got != want {
		t.Errorf("comment %q, want %q", got, want)
	}
}

// TestParseComment: other tools' comments are not xdphash's, and a broken
// field of xdphash's is an error.
func TestParseComment(t *testing.T) {
	if _, ok, err := ParseComment("a comment of someone else's, vlan_tag=0x8100:1"); ok || err != nil {
		t.Errorf("another tool's comment: ok %v, err %v; want not ours", ok, err)
	}
	for _, bad := range []string{
		"xdphash hash=00000000 vlan_tag=0x9999:1",
		"xdphash hash=0000 vlan_tag=",
		"xdphash hash=00000000 l4=maybe vlan_tag=",
		"xdphash hash=00000000",
		"xdphash vlan_tag=",
		"xdphash hash=00000000 vlan_tag= rx_timestamp=-1",
	} {
		if _, _, err := ParseComment(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// A field this version does not know is skipped.
	if c, ok, err := ParseComment("xdphash hash=00000002 later=1 vlan_tag="); err != nil || !ok || c.Hash != 2 {
		t.Errorf("a later field: %+v, %v, %v", c, ok, err)
	}
}

// TestUserCommentWithPrefix: a user's comment that starts with "xdphash "
// but is not one of xdphash's is read past, not an error, and a comment of
// xdphash's after it on the same frame still counts.
func TestUserCommentWithPrefix(t *testing.T) {
	tag := dissect.VLANTag{TPID: 0x8100, TCI: 7}
	var f ngFile
	f.section().iface(0).
		epb(0, 1, testFrame(0), "xdphash is what made this file").
		epb(0, 2, testFrame(1), "xdphash hash=nothex vlan_tag=", "xdphash hash=00000001 vlan_tag=0x8100:0x0007")
	r, err := Open(bytes.NewReader(f.b))
	if err != nil {
		t.Fatal(err)
	}
	def := dissect.VLANTag{TPID: 0x88a8, TCI: 1}
	for i, want := range []dissect.VLANTag{def, tag} {
		_, _, got, err := ReadTagged(r, def)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got != want {
			t.Errorf("frame %d: tag %v, want %v", i, got, want)
		}
	}
}

// TestFrameTagAllocs: reading a frame's metadata VLAN tag from its comment
// allocates nothing, so a replay can do it per frame.
func TestFrameTagAllocs(t *testing.T) {
	var f ngFile
	f.section().iface(0)
	c := Comment{Hash: 1, Source: "kernel", Path: "slow", Tag: dissect.VLANTag{TPID: 0x8100, TCI: 5}}
	for i := range 200 {
		f.epb(0, uint64(i), testFrame(i), "a user's note", c.String())
	}
	r, err := Open(bytes.NewReader(f.b))
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			t.Fatal(err)
		}
		if tag, ok := FrameTag(r); !ok || tag != c.Tag {
			t.Fatalf("tag %v, %v", tag, ok)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a frame, want 0", allocs)
	}
}
