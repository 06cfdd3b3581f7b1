package nicrss

// Types is a set of RSS hash types, the VIRTIO_NET_RSS_HASH_TYPE_* bits of
// the virtio specification (5.1.6.4.3.1), which name the same choices every
// RSS NIC offers: which flows hash their ports, and whether IPv6 hashes take
// the addresses of the Mobile IPv6 extension headers (the Microsoft "_EX"
// types).
type Types uint16

// The hash types.
const (
	TypeIPv4 Types = 1 << iota
	TypeTCPv4
	TypeUDPv4
	TypeIPv6
	TypeTCPv6
	TypeUDPv6
	TypeIPv6Ex
	TypeTCPv6Ex
	TypeUDPv6Ex

	// TypesDefault is what Linux's virtio_net asks a device for and most
	// NICs hash by default: ports for TCP and UDP, addresses otherwise,
	// no _EX types.
	TypesDefault = TypeIPv4 | TypeTCPv4 | TypeUDPv4 | TypeIPv6 | TypeTCPv6 | TypeUDPv6
	typesAll     = TypesDefault | TypeIPv6Ex | TypeTCPv6Ex | TypeUDPv6Ex
)

// Report is the hash type a device reports with a frame's hash, numbered as
// VIRTIO_NET_HASH_REPORT_* (virtio 5.1.6.4.3.2); ReportNone: no hash.
type Report uint8

// The reports.
const (
	ReportNone Report = iota
	ReportIPv4
	ReportTCPv4
	ReportIPv6
	ReportTCPv6
	ReportIPv6Ex
	ReportTCPv6Ex
	ReportUDPv4
	ReportUDPv6
	ReportUDPv6Ex
	numReports
)

var reportNames = [numReports]string{"none", "ipv4", "tcp4", "ipv6", "tcp6", "ipv6-ex", "tcp6-ex", "udp4", "udp6", "udp6-ex"}

// String is "none", "ipv4", "tcp4", ... "udp6-ex".
func (r Report) String() string {
	if r < numReports {
		return reportNames[r]
	}
	return "unknown"
}

// HasPorts reports whether the hash of this type covers the ports.
func (r Report) HasPorts() bool {
	switch r {
	case ReportTCPv4, ReportTCPv6, ReportTCPv6Ex, ReportUDPv4, ReportUDPv6, ReportUDPv6Ex:
		return true
	}
	return false
}

// IsIPv6 reports whether the hash of this type is over IPv6 addresses.
func (r Report) IsIPv6() bool {
	switch r {
	case ReportIPv6, ReportTCPv6, ReportIPv6Ex, ReportTCPv6Ex, ReportUDPv6, ReportUDPv6Ex:
		return true
	}
	return false
}

// Level is which IP header the device hashes.
type Level uint8

const (
	// LevelOuter hashes the outermost IP header, as most NICs do.
	LevelOuter Level = iota
	// LevelInner hashes the IP header inside an IPIP, IPv6-in-IP or GRE
	// (version 0, IPv4 or IPv6 payload) tunnel when there is one, the outer
	// one otherwise: DPDK's RSS level 2.
	LevelInner
)

func (l Level) String() string {
	if l == LevelInner {
		return "inner"
	}
	return "outer"
}

// Quirks are behaviours of particular devices that a faithful model has to
// copy.
type Quirks uint8

const (
	// QuirkQEMU72 is QEMU 7.2's net/eth.c (eth_get_protocols), fixed in
	// QEMU 8.0, as the virtio lab's device showed it frame by frame: an
	// IPv4 header of another version, and an IPv6 header whose extension
	// headers run past the frame, still hash as their address-only type; an
	// IPv4 header length below 20 bytes still has its ports read where it
	// points. (An IPv4 header cut short hashes as IPv4 with the addresses of
	// an earlier frame, [Tuple.Stale], from the sources: an Ethernet frame
	// of 60 bytes or more always holds the header, so the lab cannot show
	// it.) A fragment is hashed over its addresses, as without the quirk:
	// virtio_net_process_rss drops its TCP and UDP.
	QuirkQEMU72 Quirks = 1 << iota
)

// Tuple is what a device hashes for one frame.
type Tuple struct {
	// Report is the hash type; ReportNone when the device gives no hash
	// (not IP, or a type the configuration does not enable).
	Report Report
	// Src and Dst are the addresses, network order; IPv4 addresses fill
	// the first 4 bytes. Valid unless Report is ReportNone (and Stale is
	// unset).
	Src, Dst [16]byte
	// Sport and Dport are the ports; valid when Report.HasPorts().
	Sport, Dport uint16
	// Stale reports that the device hashes fields it did not read from
	// this frame (QuirkQEMU72, an IPv4 header cut short): the addresses
	// are those of an earlier frame, and the fields here are zero.
	Stale bool
}

// AddrLen is the length of the tuple's addresses: 4, 16, or 0 without a hash.
func (t *Tuple) AddrLen() int {
	switch {
	case t.Report == ReportNone:
		return 0
	case t.Report.IsIPv6():
		return 16
	}
	return 4
}

// ParseConfig is what a device's parse depends on.
type ParseConfig struct {
	Types  Types
	Level  Level
	Quirks Quirks
}

// l3 is what the parse found in one IP header.
type l3 struct {
	v6           bool
	src, dst     [16]byte
	exSrc, exDst [16]byte
	hasExSrc     bool
	hasExDst     bool
	proto        uint8
	fragment     bool
	l4           int  // offset of the header after the IP headers
	broken       bool // QuirkQEMU72: parsed, but the device's own read failed part way
	stale        bool // QuirkQEMU72: the addresses are not this frame's
}

// Parse fills t with what the device hashes for frame, which starts at the
// Ethernet destination address, and reports whether the device hashes it.
// It allocates nothing.
func (c *ParseConfig) Parse(t *Tuple, frame []byte) bool {
	*t = Tuple{}
	off, proto, ok := c.link(frame)
	if !ok {
		return false
	}
	var ip l3
	if !c.parseIP(&ip, frame, off, proto) {
		return false
	}
	if c.Level == LevelInner && !ip.fragment && !ip.broken {
		var in l3
		if next, ok := tunnelPayload(frame, &ip); ok && c.parseIP(&in, frame, ip.l4, next) {
			ip = in
		}
	}
	return c.choose(t, frame, &ip)
}

// link reads the Ethernet header and its tags: the offset of the header
// after them and its EtherType. QEMU's eth_get_l2_hdr_length skips one tag
// after 802.1Q; after 802.1ad, two when the inner one is 802.1Q, else one.
func (c *ParseConfig) link(frame []byte) (off int, proto uint16, ok bool) {
	eth, ok := hdr(frame, 0, ethHdrLen)
	if !ok {
		return 0, 0, false
	}
	off, proto = ethHdrLen, (*ethHeader)(eth).EtherType()
	if proto != etherTypeVLAN && proto != etherTypeQinQ {
		return off, proto, true
	}
	tag, ok := hdr(frame, off, vlanHdrLen)
	if !ok {
		return 0, 0, false
	}
	off += vlanHdrLen
	inner := (*vlanTag)(tag).EncapsulatedProto()
	if proto == etherTypeQinQ && inner == etherTypeVLAN {
		if tag, ok = hdr(frame, off, vlanHdrLen); !ok {
			return 0, 0, false
		}
		off += vlanHdrLen
		inner = (*vlanTag)(tag).EncapsulatedProto()
	}
	return off, inner, true
}

// tunnelPayload is the EtherType of the IP header inside the tunnel whose
// outer header is ip, and moves ip.l4 to it: IPIP, IPv6 in IP, and GRE
// version 0 without routing carrying IPv4 or IPv6.
func tunnelPayload(frame []byte, ip *l3) (uint16, bool) {
	switch ip.proto {
	case protoIPIP:
		return etherTypeIPv4, true
	case protoIPv6:
		return etherTypeIPv6, true
	case protoGRE:
		b, ok := hdr(frame, ip.l4, greHdrLen)
		if !ok {
			return 0, false
		}
		g := (*greHeader)(b)
		fv := g.FlagsVersion()
		if fv&(greVersion|greRouting) != 0 {
			return 0, false
		}
		n := greHdrLen
		for _, f := range [...]uint16{greChecksum, greKey, greSeq} {
			if fv&f != 0 {
				n += 4
			}
		}
		p := g.Protocol()
		if p != etherTypeIPv4 && p != etherTypeIPv6 {
			return 0, false
		}
		ip.l4 += n
		return p, true
	}
	return 0, false
}

// parseIP reads the IP header at off of EtherType proto into ip, as
// eth_get_protocols does, and reports whether the device takes the frame
// for IP.
func (c *ParseConfig) parseIP(ip *l3, frame []byte, off int, proto uint16) bool {
	q72 := c.Quirks&QuirkQEMU72 != 0
	switch proto {
	case etherTypeIPv4:
		b, ok := hdr(frame, off, ipv4HdrLen)
		if !ok {
			// QEMU 7.2 set isip4 before its read, and hashes what its
			// buffer held.
			if q72 && off <= len(frame) {
				ip.stale, ip.broken = true, true
				return true
			}
			return false
		}
		h := (*ipv4Header)(b)
		if h.Version() != 4 {
			if !q72 {
				return false
			}
			ip.broken = true // an address-only hash
		}
		copy(ip.src[:4], h.Src())
		copy(ip.dst[:4], h.Dst())
		ip.proto, ip.fragment = h.Protocol(), h.IsFragment()
		ip.l4 = off + h.IHL()
		if h.IHL() < ipv4HdrLen && !q72 {
			ip.broken = true // no transport header where IHL points
		}
		return true
	case etherTypeIPv6:
		b, ok := hdr(frame, off, ipv6HdrLen)
		if !ok {
			return false
		}
		h := (*ipv6Header)(b)
		ip.v6 = true
		copy(ip.src[:], h.Src())
		copy(ip.dst[:], h.Dst())
		if !c.parseIPv6Ext(ip, frame, off, h.NextHeader()) {
			if !q72 {
				return false
			}
			ip.broken = true // QEMU 7.2 set isip6 before eth_parse_ipv6_hdr
		}
		return true
	}
	return false
}

// isExtHeader is eth_is_ip6_extension_header_type: the next-header values
// the device walks over (QEMU 6.0 and later; ESP is not one).
func isExtHeader(p uint8) bool {
	switch p {
	case protoHopOpts, protoRouting, protoFragment, protoAH, protoDstOpts, protoMobility:
		return true
	}
	return false
}

// parseIPv6Ext walks the extension headers after the IPv6 header at off as
// eth_parse_ipv6_hdr does: every one's length as (len+1)*8 (AH's too), a
// fragment header anywhere marks a fragment, a type 2 routing header of one
// address and a destination options header with a home address option give
// the _EX addresses. It fails when a header's first two bytes lie past the
// frame. Each step moves at least 8 bytes, so the walk ends within the frame.
func (c *ParseConfig) parseIPv6Ext(ip *l3, frame []byte, off int, next uint8) bool {
	ip.l4 = off + ipv6HdrLen
	for isExtHeader(next) {
		b, ok := hdr(frame, ip.l4, extHdrLen)
		if !ok {
			return false
		}
		e := (*extHeader)(b)
		switch next {
		case protoRouting:
			if b, ok := hdr(frame, ip.l4, routingHdrLen); ok {
				r := (*routingHeader)(b)
				if r.LenField() == 2 {
					ip.hasExDst = false
					if r.RoutingType() == 2 && r.SegmentsLeft() == 1 {
						if a, ok := hdr(frame, ip.l4+routingHdrLen, 16); ok {
							copy(ip.exDst[:], a)
							ip.hasExDst = true
						}
					}
				}
			}
		case protoDstOpts:
			ip.hasExSrc = homeAddress(&ip.exSrc, frame, ip.l4, e.Len())
		case protoFragment:
			ip.fragment = true
		}
		ip.l4 += e.Len()
		next = e.NextHeader()
	}
	ip.proto = next
	return true
}

// homeAddress finds a home address option in the destination options header
// of length n at off, as QEMU's _eth_get_rss_ex_src_addr does: options are
// walked while more than their 2-byte header is left, Pad1 is one byte, and
// the address is the 16 bytes after the option's header.
func homeAddress(dst *[16]byte, frame []byte, off, n int) bool {
	left, opt := n-extHdrLen, off+extHdrLen
	for left > 2 {
		b, ok := hdr(frame, opt, 2)
		if !ok {
			return false
		}
		optLen := int(b[1]) + 2
		if b[0] == optPad1 {
			optLen = 1
		}
		if optLen > left {
			return false
		}
		if b[0] == optHomeAddress {
			a, ok := hdr(frame, opt+2, 16)
			if ok {
				copy(dst[:], a)
			}
			return ok
		}
		opt += optLen
		left -= optLen
	}
	return false
}

// choose picks the hash type of ip under c.Types, as
// virtio_net_get_hash_type does, and fills t.
func (c *ParseConfig) choose(t *Tuple, frame []byte, ip *l3) bool {
	tcp, udp := ip.proto == protoTCP, ip.proto == protoUDP
	if ip.broken || ip.fragment {
		// A fragment has no ports to hash.
		tcp, udp = false, false
	} else if tcp {
		_, tcp = hdr(frame, ip.l4, tcpHdrLen)
	} else if udp {
		_, udp = hdr(frame, ip.l4, udpHdrLen)
	}
	if ip.stale && !ip.v6 {
		// QEMU 7.2: an IPv4 header cut short hashes as IPv4, over
		// addresses of an earlier frame.
		if c.Types&TypeIPv4 == 0 {
			return false
		}
		t.Report, t.Stale = ReportIPv4, true
		return true
	}
	ex := false
	switch {
	case !ip.v6:
		switch {
		case tcp && c.Types&TypeTCPv4 != 0:
			t.Report = ReportTCPv4
		case udp && c.Types&TypeUDPv4 != 0:
			t.Report = ReportUDPv4
		case c.Types&TypeIPv4 != 0:
			t.Report = ReportIPv4
		default:
			return false
		}
	case tcp && c.Types&(TypeTCPv6|TypeTCPv6Ex) != 0:
		t.Report, ex = ReportTCPv6, c.Types&TypeTCPv6Ex != 0
		if ex {
			t.Report = ReportTCPv6Ex
		}
	case udp && c.Types&(TypeUDPv6|TypeUDPv6Ex) != 0:
		t.Report, ex = ReportUDPv6, c.Types&TypeUDPv6Ex != 0
		if ex {
			t.Report = ReportUDPv6Ex
		}
	case c.Types&(TypeIPv6|TypeIPv6Ex) != 0:
		t.Report, ex = ReportIPv6, c.Types&TypeIPv6Ex != 0
		if ex {
			t.Report = ReportIPv6Ex
		}
	default:
		return false
	}
	t.Src, t.Dst = ip.src, ip.dst
	if ex {
		if ip.hasExSrc {
			t.Src = ip.exSrc
		}
		if ip.hasExDst {
			t.Dst = ip.exDst
		}
	}
	if t.Report.HasPorts() {
		if b, ok := hdr(frame, ip.l4, 4); ok {
			t.Sport = uint16(b[0])<<8 | uint16(b[1])
			t.Dport = uint16(b[2])<<8 | uint16(b[3])
		}
	}
	return true
}
