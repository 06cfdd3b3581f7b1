package soak

import (
	"fmt"

	"github.com/xdphash/xdphash/runstats"
)

// Labs a soak runs in (Config.Lab).
const (
	LabVeth   = "veth"   // a veth pair on this machine (the default)
	LabVirtio = "virtio" // a QEMU guest's virtio-net device (internal/virtiolab)
)

// DefaultVirtioRate is the virtio soak's generator rate unless Config.Rate
// says otherwise: what the guest (TCG, 2 vCPUs) takes without loss here
// (docs/virtio-lab.md).
const DefaultVirtioRate = 10000

// checkVirtioAccounting is the virtio soak's accounting check: every frame
// the generator sent is received by the pipeline in the guest or counted as
// dropped at exactly one stage:
//
//  1. generator -> tap: sent = tap tx_packets, read once QEMU is gone (the
//     tap counts a frame out when QEMU reads it). The generator sends past
//     the qdisc: a frame the tap refuses (its queue to QEMU is full) comes
//     back as ENOBUFS and is sent again, and the tap counts each refusal in
//     tx_dropped; the generator counts a frame once the tap took it.
//  2. tap -> guest: tap tx_packets = the guest's eth0 rx_packets (QEMU
//     drops nothing it counts; a frame it drops is missing here).
//  3. guest: eth0 rx_packets = received + frames left on the AF_XDP rings
//     at the stop (rx_left_on_ring) + eth0 rx_dropped, where rx_dropped holds the
//     frames XDP could not hand to AF_XDP (XDP_STATISTICS rx_dropped,
//     rx_ring_full, rx_invalid_descs: virtio-net counts a failed redirect as
//     its own drop) and the driver's other drops; so rx_dropped is at least
//     the AF_XDP drops.
//  4. engine: received = processed + its drops (runstats.Accounting).
func checkVirtioAccounting(sent uint64, l LinkDeltas, st *runstats.RunStats) Check {
	c := Check{Name: "accounting: sent = received + every counted drop (tap, guest, AF_XDP, engine)"}
	if st == nil {
		c.Detail = "no run statistics from the guest"
		return c
	}
	a := st.Accounting
	var xsk, leftOnRing uint64
	for _, q := range st.Queues {
		xsk += q.Stats.RxDropped + q.Stats.RxInvalidDescs + q.Stats.RxRingFull
		leftOnRing += q.Stats.RxLeftOnRing
	}
	c.Pass = sent == l.PeerTxPackets &&
		l.PeerTxPackets == l.HostRxPackets &&
		l.HostRxPackets == a.Received+leftOnRing+l.HostRxDropped &&
		xsk <= l.HostRxDropped &&
		a.Balanced
	c.Detail = fmt.Sprintf("sent %d = tap out %d (the tap refused %d sends, each sent again); guest eth0 received %d = xdphash received %d + left on the AF_XDP rings %d + eth0 dropped %d (of which AF_XDP drops %d, the driver's own %d); engine: %d processed, %d dropped, balanced %v",
		sent, l.PeerTxPackets, l.PeerTxDropped, l.HostRxPackets, a.Received, leftOnRing, l.HostRxDropped, xsk, l.HostRxDropped-min(xsk, l.HostRxDropped), a.Processed, a.Total(), a.Balanced)
	return c
}

// checkDeviceEquality is the virtio soak's device-hash check: every frame
// the pipeline received had a device hash (unless not everyFrame: then at
// least one did), equal to xdphash's Toeplitz of the frame with the
// device's key and fields.
func checkDeviceEquality(st *runstats.RunStats, everyFrame bool) Check {
	c := Check{Name: "device hash: every received frame's hash equals xdphash's Toeplitz with the device's key"}
	if st == nil || st.DeviceHash == nil {
		c.Detail = "no device-hash check in the guest's run statistics"
		return c
	}
	d := st.DeviceHash
	c.Pass = d.Method == "equality" && d.Conflicts == 0 && d.Frames == st.Accounting.Received && d.Checked == d.WithHash && d.WithHash > 0 &&
		(d.WithHash == d.Frames || !everyFrame)
	c.Detail = fmt.Sprintf("%d frames received, %d seen by the check, %d with a device hash, %d checked (%s), %d conflicts",
		st.Accounting.Received, d.Frames, d.WithHash, d.Checked, d.Method, d.Conflicts)
	if len(d.Samples) > 0 {
		s := d.Samples[0]
		c.Detail += fmt.Sprintf("; first: device hash %08x (%s), ours %08x, frame %s", s.DeviceHash, s.DeviceType, s.Hash, s.Frame)
	}
	return c
}

// checkDeviceQueue is the virtio soak's queue check: every frame (with a
// device hash, when not everyFrame) came in on the queue the device's
// indirection table gives for its hash.
func checkDeviceQueue(st *runstats.RunStats, everyFrame bool) Check {
	c := Check{Name: "device queue: every frame came in on table[device hash % len]"}
	if st == nil || st.DeviceQueue == nil {
		c.Detail = "no device-queue check in the guest's run statistics"
		return c
	}
	q := st.DeviceQueue
	c.Pass = q.Mismatches == 0 && q.Frames == st.Accounting.Received && q.Checked > 0 && (q.Checked == q.Frames || !everyFrame)
	c.Detail = fmt.Sprintf("%d frames, %d with a device hash, %d on another queue than the %d-entry table gives", q.Frames, q.Checked, q.Mismatches, q.TableLen)
	if len(q.Samples) > 0 {
		s := q.Samples[0]
		c.Detail += fmt.Sprintf("; first: device hash %08x on queue %d, table gives %d", s.DeviceHash, s.Queue, s.Want)
	}
	return c
}
