package queues

import (
	"net/netip"

	"github.com/xdphash/xdphash/dissect"
)

// Record is what the receive loop hands a worker for each packet: everything a
// consumer or a report needs, found by the one parse on the receive side.
// Nothing downstream parses the frame again (the lesson of the kernel's GRO).
// It is a value type of 64 bytes, copied through the rings.
type Record struct {
	Hash    uint32 // the flow hash (kernel SipHash or Toeplitz, as configured)
	Len     uint32 // frame length on the wire, bytes
	Arrival int64  // nanoseconds on the run's clock (wall clock live, virtual offline)

	Src, Dst     [16]byte // addresses as stored in the keys: IPv4 in the first 4 bytes
	SPort, DPort uint16   // transport ports (or SPI halves), host order; 0 when not read

	THoff    uint16       // transport offset from the frame start
	NProto   uint16       // final ethertype (n_proto)
	Queue    uint16       // receive queue
	IPProto  uint8        // final IP protocol
	AddrType uint8        // dissect.AddrType
	Path     dissect.Path // which dissector produced the keys
	L4       bool         // skb->l4_hash
}

// FromKeys fills the flow fields of r from dissected keys.
func (r *Record) FromKeys(k *dissect.FlowKeys) {
	r.AddrType = uint8(k.AddrType())
	switch k.AddrType() {
	case dissect.AddrIPv4:
		r.Src, r.Dst = [16]byte{}, [16]byte{}
		copy(r.Src[:4], k[dissect.OffIPv4Src:dissect.OffIPv4Src+4])
		copy(r.Dst[:4], k[dissect.OffIPv4Dst:dissect.OffIPv4Dst+4])
	case dissect.AddrIPv6:
		copy(r.Src[:], k[dissect.OffIPv6Src:dissect.OffIPv6Src+16])
		copy(r.Dst[:], k[dissect.OffIPv6Dst:dissect.OffIPv6Dst+16])
	default:
		r.Src, r.Dst = [16]byte{}, [16]byte{}
	}
	r.SPort, r.DPort = k.SrcPort(), k.DstPort()
	r.THoff, r.NProto, r.IPProto = k.THoff(), k.NProto(), k.IPProto()
}

// SrcAddr is the source address, the zero Addr for non-IP records.
func (r *Record) SrcAddr() netip.Addr { return r.addr(&r.Src) }

// DstAddr is the destination address, the zero Addr for non-IP records.
func (r *Record) DstAddr() netip.Addr { return r.addr(&r.Dst) }

func (r *Record) addr(a *[16]byte) netip.Addr {
	switch dissect.AddrType(r.AddrType) {
	case dissect.AddrIPv4:
		return netip.AddrFrom4([4]byte(a[:4]))
	case dissect.AddrIPv6:
		return netip.AddrFrom16(*a)
	}
	return netip.Addr{}
}
