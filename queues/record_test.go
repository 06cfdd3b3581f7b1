package queues

import (
	"testing"
	"unsafe"

	"github.com/xdphash/xdphash/dissect"
)

func TestRecordSize(t *testing.T) {
	// Records are copied through the rings: keep them to one cache line.
	if n := unsafe.Sizeof(Record{}); n > 64 {
		t.Errorf("Record is %d bytes, want at most 64", n)
	}
}

func TestRecordFromKeys(t *testing.T) {
	var k dissect.FlowKeys
	dissect.DissectFrame(&k, dissect.SampleFrame(dissect.ShapeVLAN), dissect.DefaultFlags)
	var r Record
	r.FromKeys(&k)
	if r.SrcAddr().String() != "198.18.0.1" || r.DstAddr().String() != "198.18.0.2" || r.SPort != 1025 || r.DPort != 80 ||
		r.IPProto != 6 || r.NProto != 0x0800 || r.THoff != 38 {
		t.Errorf("record %+v", r)
	}
}
