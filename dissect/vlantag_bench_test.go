package dissect

import "testing"

// BenchmarkTagged measures frames received with a metadata VLAN tag: each
// shape's sample frame through the slow path (DissectFrameTagged) and
// through a Dissector with every gate open, and, to price the entry, the
// untagged frame through Dissector.DissectFrameTagged with the zero tag.
func BenchmarkTagged(b *testing.B) {
	tag := VLANTag{TPID: EtherTypeVLAN, TCI: 3<<13 | 100}
	for s := range NumShapes {
		f := SampleFrame(s)
		b.Run("slow/"+s.String(), func(b *testing.B) {
			var k FlowKeys
			b.ReportAllocs()
			for b.Loop() {
				DissectFrameTagged(&k, f, tag, DefaultFlags)
			}
		})
		b.Run("dissector/"+s.String(), func(b *testing.B) {
			d := NewDissector(DefaultFlags, AllGates)
			var k FlowKeys
			b.ReportAllocs()
			for b.Loop() {
				d.DissectFrameTagged(&k, f, tag)
			}
		})
		b.Run("untagged/"+s.String(), func(b *testing.B) {
			d := NewDissector(DefaultFlags, AllGates)
			var k FlowKeys
			b.ReportAllocs()
			for b.Loop() {
				d.DissectFrameTagged(&k, f, VLANTag{})
			}
		})
	}
}
