package corpus

// MetadataTag is a VLAN tag a frame is received with out of band, in the
// skb's metadata (skb->vlan_proto and skb->vlan_tci) rather than in its bytes,
// as a device with rx-vlan-offload delivers it. TPID and TCI are host-order
// numbers; the zero value is no tag.
type MetadataTag struct {
	Name string // "" for no tag, else "hwtag=TPID:TCI" in hex, for frame names
	TPID uint16
	TCI  uint16
}

// MetadataTags are the tags every corpus frame is checked with: none, an
// 802.1Q tag (priority 3, VLAN 100: the in-line tag of the vlan/ipv4/tcp
// family) and an 802.1AD tag (priority 2, DEI set, VLAN 5: the tag of the
// vlan-ad/ipv4/udp family, but for the DEI bit, which no flow key holds).
// With the in-line families they test that a tag counts the same in the
// metadata as in the frame.
func MetadataTags() []MetadataTag {
	return []MetadataTag{
		{},
		{Name: "hwtag=8100:6064", TPID: etherType8021Q, TCI: 3<<13 | 100},
		{Name: "hwtag=88a8:5005", TPID: etherType8021AD, TCI: 2<<13 | 1<<12 | 5},
	}
}

// InsertTag returns a copy of frame with a VLAN tag (tpid, tci) put in line
// after the MAC addresses: the frame as it was on the wire before a device
// stripped the tag into the metadata. A frame shorter than the two MAC
// addresses is returned as a plain copy.
func InsertTag(frame []byte, tpid, tci uint16) []byte {
	if len(frame) < 12 {
		return append([]byte(nil), frame...)
	}
	out := make([]byte, 0, len(frame)+4)
	out = append(out, frame[:12]...)
	out = append(out, byte(tpid>>8), byte(tpid), byte(tci>>8), byte(tci))
	return append(out, frame[12:]...)
}
