package nicrss

// QEMU72Ports models the one piece of state behind QuirkQEMU72's stale
// fields that a test can follow: the ports QEMU 7.2's virtio-net keeps in its
// packet buffer (struct NetRxPkt, one per device, never cleared) from the
// last frame whose TCP or UDP header it copied, and hashes a later TCP or
// UDP fragment with. Observe every frame the device receives, in the order
// it receives them; Fill gives a Stale tuple those ports. A short IPv4
// header's stale addresses are not modelled. The zero value has seen no
// frame.
type QEMU72Ports struct {
	sport, dport uint16
	seen         bool
}

// Observe updates the kept ports with frame's, when the device copies its
// transport header: an unfragmented IPv4 (version 4) or IPv6 TCP or UDP
// frame with at least the ports present (QEMU copies what there is of the
// header), whatever the hash types. It parses the outer headers, as QEMU
// does.
func (q *QEMU72Ports) Observe(frame []byte) {
	c := ParseConfig{Quirks: QuirkQEMU72}
	off, proto, ok := c.link(frame)
	if !ok {
		return
	}
	var ip l3
	if !c.parseIP(&ip, frame, off, proto) || ip.broken || ip.fragment || (ip.proto != protoTCP && ip.proto != protoUDP) {
		return
	}
	if b, ok := hdr(frame, ip.l4, 4); ok {
		q.sport = uint16(b[0])<<8 | uint16(b[1])
		q.dport = uint16(b[2])<<8 | uint16(b[3])
		q.seen = true
	}
}

// Fill gives t, a Stale tuple with ports, the kept ports, and reports
// whether it did (false for other tuples, or before any frame was kept).
func (q *QEMU72Ports) Fill(t *Tuple) bool {
	if !t.Stale || !t.Report.HasPorts() || !q.seen {
		return false
	}
	t.Sport, t.Dport = q.sport, q.dport
	return true
}
