package dissect

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// VLANTag is a VLAN tag a frame was received with out of band: stripped by
// the device (rx-vlan-offload) into the skb's metadata, skb->vlan_proto and
// skb->vlan_tci, which XDP reads with bpf_xdp_metadata_rx_vlan_tag. The frame
// itself no longer holds it.
//
// The zero value is "no tag", as in the kernel: skb_vlan_tag_present tests
// vlan_all, the word both fields share, so a tag with TPID 0x8100 and TCI 0
// (a priority tag of VLAN 0) is present.
type VLANTag struct {
	TPID uint16 // vlan_proto: 0x8100 (802.1Q) or 0x88a8 (802.1AD), host order
	TCI  uint16 // priority (3 bits), DEI (1 bit) and VLAN id (12 bits), host order
}

// IsZero reports whether t is the zero value, no tag.
func (t VLANTag) IsZero() bool { return t == VLANTag{} }

// ID is the 12-bit VLAN id.
func (t VLANTag) ID() uint16 { return t.TCI & 0x0fff }

// Priority is the 3-bit PCP.
func (t VLANTag) Priority() uint8 { return uint8(t.TCI >> 13) }

// String is "TPID:TCI" in hex, "0x8100:0x6064", as ParseVLANTag reads it; ""
// for the zero value.
func (t VLANTag) String() string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprintf("0x%04x:0x%04x", t.TPID, t.TCI)
}

// vlanTPIDNames are the names ParseVLANTag takes for the two TPIDs.
var vlanTPIDNames = map[string]uint16{
	"802.1q": EtherTypeVLAN, "8021q": EtherTypeVLAN, "dot1q": EtherTypeVLAN,
	"802.1ad": EtherTypeQinQ, "8021ad": EtherTypeQinQ, "dot1ad": EtherTypeQinQ,
}

// ParseVLANTag reads "TPID:TCI": the TPID as 0x8100 or 0x88a8 (hex, the
// leading 0x optional) or a name (802.1q, 8021q, dot1q, 802.1ad, 8021ad,
// dot1ad), the TCI as a decimal or 0x-prefixed hex number up to 0xffff
// (priority << 13 | DEI << 12 | VLAN id). Other TPIDs are refused: devices
// report only these two, and bpf_skb_vlan_push turns any other into 0x8100.
func ParseVLANTag(s string) (VLANTag, error) {
	const maxLen = len("802.1ad:0x") + 16 // room for a name and any zero padding a user may write
	if len(s) > maxLen {
		return VLANTag{}, fmt.Errorf("parse VLAN tag: %d characters, want TPID:TCI in at most %d", len(s), maxLen)
	}
	tpidStr, tciStr, ok := strings.Cut(s, ":")
	if !ok {
		return VLANTag{}, fmt.Errorf("parse VLAN tag %q: want TPID:TCI, e.g. 0x8100:100", s)
	}
	tpid, known := vlanTPIDNames[strings.ToLower(tpidStr)]
	if !known {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(tpidStr), "0x"), 16, 16)
		if err != nil || !isVLANType(uint16(v)) {
			return VLANTag{}, fmt.Errorf("parse VLAN tag %q: TPID %q is not 0x8100 (802.1q) or 0x88a8 (802.1ad)", s, tpidStr)
		}
		tpid = uint16(v)
	}
	digits, base := tciStr, 10
	if h, isHex := strings.CutPrefix(strings.ToLower(tciStr), "0x"); isHex {
		digits, base = h, 16
	}
	tci, err := strconv.ParseUint(digits, base, 16)
	if err != nil {
		return VLANTag{}, fmt.Errorf("parse VLAN tag %q: TCI %q is not a number from 0 to 65535 (decimal, or hex with 0x)", s, tciStr)
	}
	return VLANTag{TPID: tpid, TCI: uint16(tci)}, nil
}

// DissectTagged is Dissect for an skb that carries tag in its metadata, with
// proto its skb->protocol (the ethertype after the stripped tag, as
// eth_type_trans read it from the frame). It follows the kernel's hw-tag
// branch: the dissection starts on the tag's TPID, and the first VLAN step
// takes the tag from the metadata without reading or consuming a byte (proto
// becomes skb->protocol, nhoff stays); a tag still in the frame is the
// second one (the CVLAN key, which flow_keys_dissector does not use). thoff
// is relative to buf as received. The zero tag is Dissect.
//
// A tag whose TPID is neither 0x8100 nor 0x88a8 is in no skb (drivers and
// bpf_skb_vlan_push set only these two): the dissection starts on the TPID,
// as the kernel's would, but any VLAN header it meets later is read from the
// frame.
func DissectTagged(keys *FlowKeys, buf []byte, proto uint16, nhoff int, tag VLANTag, flags Flags) bool {
	return dissectTaggedWith(keys, buf, proto, nhoff, tag, flags, nil)
}

// dissectTaggedWith is DissectTagged under the descent ds (nil: none).
func dissectTaggedWith(keys *FlowKeys, buf []byte, proto uint16, nhoff int, tag VLANTag, flags Flags, ds *descender) bool {
	*keys = FlowKeys{}
	switch {
	case tag.IsZero():
		return walkWith(keys, buf, flags, proto, nhoff, 0, ds)
	case !isVLANType(tag.TPID):
		return walkWith(keys, buf, flags, tag.TPID, nhoff, 0, ds)
	}
	// The first round, on the TPID, is the VLAN step's hw-tag branch: the
	// VLAN key from the metadata, proto = skb->protocol, nhoff unchanged,
	// one re-dispatch; the state machine goes on from there. Done here, it
	// costs the untagged dissections nothing.
	binary.LittleEndian.PutUint16(keys[OffVLANTCI:], tag.TCI&^vlanDEIBit)
	binary.BigEndian.PutUint16(keys[OffVLANTPID:], tag.TPID)
	binary.BigEndian.PutUint16(keys[OffVLANEthType:], proto)
	return walkWith(keys, buf, flags, proto, nhoff, packAt(0, 0, 1, 1, false), ds)
}

// DissectFrameTaggedDescend is DissectFrameTagged under the descent
// policy d.
func DissectFrameTaggedDescend(keys *FlowKeys, frame []byte, tag VLANTag, flags Flags, d Descent) bool {
	if d.IsZero() {
		return DissectFrameTagged(keys, frame, tag, flags)
	}
	ds := descender{Descent: d}
	return dissectTaggedWith(keys, frame, EthProtocol(frame), EthernetHdrLen, tag, flags, &ds)
}

// DissectFrameTagged is DissectFrame for a frame received with tag in its
// metadata: skb->protocol from the frame's own type field (EthProtocol), the
// network header at offset 14 of the frame as received, without the tag.
func DissectFrameTagged(keys *FlowKeys, frame []byte, tag VLANTag, flags Flags) bool {
	return DissectTagged(keys, frame, EthProtocol(frame), EthernetHdrLen, tag, flags)
}

// DissectFrameTagged is the Dissector's DissectFrame for a frame received
// with tag in its metadata; the zero tag is DissectFrame, at the price of one
// call more (a loop that knows its frames are untagged calls DissectFrame).
// A tagged frame is of the vlan class when no tag follows in the frame, and
// of the qinq class otherwise. The vlan fast path covers the metadata tag in
// front of Ethernet, IPv4 or IPv6 and TCP/UDP (an IPv6 flow-label stop too):
// the keys of the same frame with the tag in line. Every other tagged frame
// runs the slow path.
func (d *Dissector) DissectFrameTagged(keys *FlowKeys, frame []byte, tag VLANTag) (bool, Path) {
	if tag.IsZero() {
		return d.DissectFrame(keys, frame)
	}
	return d.dissectTagged(keys, frame, tag)
}

func (d *Dissector) dissectTagged(keys *FlowKeys, frame []byte, tag VLANTag) (bool, Path) {
	if d.auto != nil {
		d.auto.tick(d)
	}
	if d.open&(1<<ShapeVLAN) != 0 && isVLANType(tag.TPID) && len(frame) >= EthernetHdrLen {
		// fastHWTag in line: a tagged frame pays no call to be taken.
		if fastL3(keys, frame, EthernetHdrLen, binary.LittleEndian.Uint16(frame[12:]), hwTagWord(tag, frame)) {
			d.counters.Shape[ShapeVLAN].Fast++
			if d.desc != nil {
				return d.redescend(keys, frame, tag, true, FastPath(ShapeVLAN))
			}
			return true, FastPath(ShapeVLAN)
		}
	}
	proto := EthProtocol(frame)
	switch {
	case isVLANType(proto):
		d.counters.Shape[ShapeQinQ].Slow++
	case !d.open.Has(ShapeVLAN):
		if d.auto != nil && d.auto.probeDue(ShapeVLAN) && fastHWTag(&d.auto.scratch, frame, tag) {
			d.auto.probeAccepted[ShapeVLAN]++
		}
		d.counters.Shape[ShapeVLAN].Slow++
	default:
		d.counters.Shape[ShapeVLAN].Declined++
		d.counters.Shape[ShapeVLAN].Slow++
	}
	return dissectTaggedWith(keys, frame, proto, EthernetHdrLen, tag, d.flags, d.desc), PathSlow
}

// fastHWTag is the vlan shape with the tag in the metadata: an untagged
// eth_ip frame the eth_ip fast path takes, behind an 802.1Q or 802.1AD tag.
// The slow path's hw-tag step writes the VLAN key and goes on at the frame's
// ethertype without moving nhoff, so the keys are the eth_ip keys and the
// VLAN key; the re-dispatch the tag costs does not matter to a shape this
// short.
func fastHWTag(keys *FlowKeys, f []byte, tag VLANTag) bool {
	if !isVLANType(tag.TPID) || len(f) < EthernetHdrLen {
		return false
	}
	return fastL3(keys, f, EthernetHdrLen, binary.LittleEndian.Uint16(f[12:]), hwTagWord(tag, f))
}

// hwTagWord is the VLAN key word (see vlanWord) of the metadata tag in front
// of frame f, an eth_ip frame: the inner type is f's own.
func hwTagWord(tag VLANTag, f []byte) uint64 {
	tci := tag.TCI &^ vlanDEIBit
	return uint64(tci) | uint64(bits.ReverseBytes16(tag.TPID))<<16 | uint64(binary.LittleEndian.Uint16(f[12:]))<<32
}
