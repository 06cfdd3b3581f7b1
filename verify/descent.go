package verify

import (
	"encoding/binary"

	"github.com/xdphash/xdphash/dissect"
)

// Descended is a frame the opt-in descent policy entered a UDP tunnel of,
// with what the running kernel, which has no descent, can be asked instead:
// the decapsulated inner frame.
type Descended struct {
	Entry dissect.Entry
	// Inner is the inner Ethernet frame (VXLAN, Geneve), or an Ethernet
	// header and the inner IP packet (GTP-U, GUE, FOU), of the last tunnel
	// entered.
	Inner []byte
	// Tag is the outer frame's first VLAN tag, as the metadata tag Inner
	// is received with (zero: none).
	Tag dissect.VLANTag
	// Keys are the descended keys with the series' quirks undone
	// (UndoQuirks): in the hashed region, what the kernel's dissection of
	// Inner with Tag gives.
	Keys dissect.FlowKeys
	OK   bool
}

// Descend dissects frame under the policy p and, when it entered a tunnel,
// returns the frame's Descended.
func Descend(frame []byte, p dissect.Descent) (Descended, bool) {
	var k dissect.FlowKeys
	ok, e := dissect.DissectFrameEntry(&k, frame, dissect.DefaultFlags, p)
	if e.Count == 0 {
		return Descended{}, false
	}
	d := Descended{Entry: e, Keys: k, OK: ok}
	if tpid := k.VLANTPID(); tpid != 0 {
		d.Tag = dissect.VLANTag{TPID: tpid, TCI: binary.LittleEndian.Uint16(k[dissect.OffVLANTCI:])}
	}
	switch e.Tunnel {
	case dissect.TunnelVXLAN, dissect.TunnelGeneve:
		d.Inner = append([]byte(nil), frame[e.Off-dissect.EthernetHdrLen:]...)
	default:
		d.Inner = make([]byte, dissect.EthernetHdrLen, dissect.EthernetHdrLen+len(frame)-e.Off)
		copy(d.Inner, frame[:12]) // the outer MACs stand in
		binary.BigEndian.PutUint16(d.Inner[12:], e.Proto)
		d.Inner = append(d.Inner, frame[e.Off:]...)
	}
	UndoQuirks(&d.Keys, frame, e)
	return d, true
}

// UndoQuirks turns the keys of a frame the descent entered at e into those
// the kernel's dissection of the inner packet alone gives in the hashed
// region, by the series' quirks (docs/kernel-fidelity.md), derived by hand
// from its patches: what the outer headers leave in the keys that the inner
// packet alone would not have.
//   - The VLAN key keeps the ethertype after the outer tag; with the tag in
//     the inner packet's metadata it is the inner ethertype.
//   - An outer GRE key stays.
//   - The ports word keeps the outer UDP ports when no L4 pass follows the
//     descent: the inner packet is a fragment, an inner IPv6 flow label
//     stops the dissection, or the inner network header cannot be read.
//     The inner packet alone has zero ports then, and with an unreadable
//     header no address either.
//   - An inner IPv4 header writes 8 bytes of the address union; the rest
//     keeps an outer IPv6 header's bytes, of which the IPv4 hashed region
//     covers 4.
func UndoQuirks(k *dissect.FlowKeys, frame []byte, e dissect.Entry) {
	if k.VLANTPID() != 0 {
		binary.BigEndian.PutUint16(k[dissect.OffVLANEthType:], e.Proto)
	}
	clear(k[dissect.OffKeyID : dissect.OffKeyID+4])
	if k.AddrType() == dissect.AddrIPv4 {
		clear(k[dissect.OffIPv4Dst+4:])
	}
	labelStop := k.AddrType() == dissect.AddrIPv6 && k.FlowLabel() != 0
	if k.Flags()&dissect.FlagIsFragment != 0 || labelStop {
		clear(k[dissect.OffPorts : dissect.OffPorts+4])
	}
	if !innerReadable(frame, e) {
		clear(k[dissect.OffPorts : dissect.OffPorts+4])
		clear(k[dissect.OffAddrs:])
		binary.LittleEndian.PutUint16(k[dissect.OffAddrType:], 0)
		k[dissect.OffIPProto] = 0
	}
}

// innerReadable reports whether the inner network header at e passes the
// slow path's IPv4 or IPv6 step (its length; IHL at least 5).
func innerReadable(frame []byte, e dissect.Entry) bool {
	switch e.Proto {
	case dissect.EtherTypeIPv4:
		return len(frame)-e.Off >= 20 && frame[e.Off]&0x0f >= 5
	case dissect.EtherTypeIPv6:
		return len(frame)-e.Off >= 40
	}
	return false
}
