package capture

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Reader reads the records of a pcap or pcapng file.
type Reader interface {
	// ZeroCopyReadPacketData returns the next record; its data is valid until
	// the next call. A clean end of the file is io.EOF.
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
	// Buffered is the number of bytes of the input the reader holds; at 0
	// the next read asks the input, which may block (a pipe, a FIFO).
	Buffered() int
}

// File magics: the first four bytes as a big-endian number.
const (
	magicPcapng       = 0x0a0d0d0a // section header block type, the same in both byte orders
	magicPcapMicros   = 0xa1b2c3d4
	magicPcapMicrosLE = 0xd4c3b2a1
	magicPcapNanos    = 0xa1b23c4d
	magicPcapNanosLE  = 0x4d3cb2a1
	magicGzip         = 0x1f8b0000 // two bytes; magicGzipMask selects them
	magicGzipMask     = 0xffff0000
)

// Open tells pcap from pcapng by the file's magic, looking through
// gzip compression, and returns a reader positioned at the first record.
func Open(r io.Reader) (Reader, error) {
	br := bufio.NewReader(r)
	magic, err := peekMagic(br)
	if err != nil {
		return nil, err
	}
	if magic&magicGzipMask == magicGzip {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read gzip header: %w", err)
		}
		br = bufio.NewReader(zr)
		if magic, err = peekMagic(br); err != nil {
			return nil, err
		}
	}

	switch magic {
	case magicPcapng:
		ng, err := newNgReader(br)
		if err != nil {
			return nil, fmt.Errorf("read pcapng header: %w", err)
		}
		return ng, nil
	case magicPcapMicros, magicPcapMicrosLE, magicPcapNanos, magicPcapNanosLE:
		p, err := newPcapReader(br)
		if err != nil {
			return nil, fmt.Errorf("read pcap header: %w", err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("unknown file format (magic %08x): want pcap or pcapng", magic)
}

// Bounds and constants of the capture formats.
const (
	// maxSnapLen bounds a record's captured length: libpcap's
	// MAXIMUM_SNAPLEN, the longest any capture tool writes.
	maxSnapLen = 262144
	// maxNgBlock bounds a pcapng block that the reader parses (section and
	// interface headers, packets): a packet of maxSnapLen with room for
	// options. Blocks it skips are not held in memory and have no bound.
	maxNgBlock = maxSnapLen + 1<<16
	// maxNgInterfaces bounds the interface descriptions of one section,
	// which the reader holds: far more than any capture tool writes, and a
	// few MB of memory at most however small a compressed file makes them.
	maxNgInterfaces = 1 << 16

	ngSectionHeader    = 0x0a0d0d0a
	ngInterface        = 1
	ngObsoletePacket   = 2 // "Packet Block", superseded by the enhanced one
	ngSimplePacket     = 3
	ngEnhancedPacket   = 6
	ngByteOrderMagic   = 0x1a2b3c4d
	ngOptionEnd        = 0
	ngOptionComment    = 1  // opt_comment, in any block
	ngOptionTsResol    = 9  // if_tsresol: the unit of the interface's timestamps
	ngOptionTsOffset   = 14 // if_tsoffset: seconds added to its timestamps
	pcapVersionMajor   = 2
	pcapVersionMinor   = 4
	pcapRecordHeader   = 16
	pcapFileHeader     = 24
	ngBlockHeader      = 8 // type and total length; the total length ends it again
	ngEnhancedFixedLen = 20
)

// recordReader is what the pcap and pcapng readers share: the input, the
// offset reached (for messages), and the buffer the last record was read
// into (valid until the next read).
type recordReader struct {
	r   *bufio.Reader
	off int64
	buf []byte
}

// fill reads len(p) bytes. An end of file before the first byte is io.EOF
// when atStart (a clean end between records), and io.ErrUnexpectedEOF with
// the offset otherwise.
func (rr *recordReader) fill(p []byte, atStart bool) error {
	n, err := io.ReadFull(rr.r, p)
	rr.off += int64(n)
	switch {
	case err == nil:
		return nil
	case n == 0 && atStart && errors.Is(err, io.EOF):
		return io.EOF
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w at offset %d", io.ErrUnexpectedEOF, rr.off)
	}
	return fmt.Errorf("read at offset %d: %w", rr.off, err)
}

// Buffered is the number of bytes the reader holds: while it is 0, the next
// read asks the input, which may block (a pipe, a FIFO).
func (rr *recordReader) Buffered() int { return rr.r.Buffered() }

// next reads n bytes into the record buffer.
func (rr *recordReader) next(n int) ([]byte, error) {
	if cap(rr.buf) < n {
		rr.buf = make([]byte, n)
	}
	b := rr.buf[:n]
	return b, rr.fill(b, false)
}

// skip discards n bytes without holding them.
func (rr *recordReader) skip(n int64) error {
	k, err := io.CopyN(io.Discard, rr.r, n)
	rr.off += k
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%w at offset %d", io.ErrUnexpectedEOF, rr.off)
		}
		return fmt.Errorf("read at offset %d: %w", rr.off, err)
	}
	return nil
}

// pcapReader reads a classic pcap file. Unlike gopacket's pcapgo reader it
// refuses records longer than the file's snap length and fractions of a
// second that are not below one second, and names the offset of what it
// refuses.
type pcapReader struct {
	recordReader
	order    binary.ByteOrder
	nanos    bool
	snapLen  uint32
	linkType layers.LinkType
	hdr      [pcapRecordHeader]byte
}

func newPcapReader(br *bufio.Reader) (*pcapReader, error) {
	r := &pcapReader{recordReader: recordReader{r: br}}
	var h [pcapFileHeader]byte
	if err := r.fill(h[:], false); err != nil {
		return nil, err
	}
	switch binary.BigEndian.Uint32(h[:4]) {
	case magicPcapMicros:
		r.order = binary.BigEndian
	case magicPcapMicrosLE:
		r.order = binary.LittleEndian
	case magicPcapNanos:
		r.order, r.nanos = binary.BigEndian, true
	case magicPcapNanosLE:
		r.order, r.nanos = binary.LittleEndian, true
	}
	if major, minor := r.order.Uint16(h[4:]), r.order.Uint16(h[6:]); major != pcapVersionMajor || minor != pcapVersionMinor {
		return nil, fmt.Errorf("version %d.%d, want %d.%d", major, minor, pcapVersionMajor, pcapVersionMinor)
	}
	r.snapLen = r.order.Uint32(h[16:])
	r.linkType = layers.LinkType(r.order.Uint32(h[20:]))
	return r, nil
}

func (r *pcapReader) LinkType() layers.LinkType { return r.linkType }

func (r *pcapReader) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	start := r.off
	if err := r.fill(r.hdr[:], true); err != nil {
		return nil, gopacket.CaptureInfo{}, err
	}
	sec, frac := r.order.Uint32(r.hdr[0:]), r.order.Uint32(r.hdr[4:])
	capLen, wireLen := r.order.Uint32(r.hdr[8:]), r.order.Uint32(r.hdr[12:])
	unit, perSecond := uint32(1000), uint32(1e6)
	if r.nanos {
		unit, perSecond = 1, 1e9
	}
	limit := r.snapLen
	if limit == 0 || limit > maxSnapLen {
		limit = maxSnapLen
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("record at offset %d: %s", start, fmt.Sprintf(format, args...))
	}
	switch {
	case frac >= perSecond:
		return nil, gopacket.CaptureInfo{}, bad("fraction of a second %d, want below %d", frac, perSecond)
	case capLen > limit:
		return nil, gopacket.CaptureInfo{}, bad("captured length %d exceeds the snap length %d", capLen, limit)
	case capLen > wireLen:
		return nil, gopacket.CaptureInfo{}, bad("captured length %d exceeds the original length %d", capLen, wireLen)
	}
	data, err := r.next(int(capLen))
	if err != nil {
		return nil, gopacket.CaptureInfo{}, err
	}
	ci := gopacket.CaptureInfo{
		Timestamp:     time.Unix(int64(sec), int64(frac*unit)).UTC(),
		CaptureLength: int(capLen), Length: int(wireLen),
	}
	return data, ci, nil
}

// ngReader reads a pcapng file: its section headers, interface descriptions
// and packet blocks (enhanced, simple and the obsolete packet block); it
// skips the other blocks. It refuses a block whose length is not a multiple
// of 4 of at least 12 bytes, is too short for its type, or differs from the
// length that ends it; a packet longer than its block; an interface that was
// not described; and an interface whose link type differs from the first
// one's. Every refusal names the block's offset.
type ngReader struct {
	recordReader
	order    binary.ByteOrder
	ifaces   []ngIface
	linkType layers.LinkType // the first interface's
	haveLink bool            // whether an interface was described yet
	hdr      [ngBlockHeader]byte
	word     [4]byte  // a byte-order magic or a block's closing length: a field, so reading it allocates nothing
	comments [][]byte // the last packet's opt_comment options, views into its block
	// section is the opt_comment options of the section header of the
	// section being read.
	section []string
}

// SectionComments returns the comments (opt_comment) of the section header
// of the section being read: where xdphash run --write records its Settings.
func (r *ngReader) SectionComments() []string { return r.section }

// PacketComments returns the comments (opt_comment) of the packet the last
// read returned, valid until the next read: how xdphash run --write records
// each frame's metadata VLAN tag.
func (r *ngReader) PacketComments() [][]byte { return r.comments }

// ngIface is what an interface description block says.
type ngIface struct {
	linkType layers.LinkType
	snapLen  uint32
	tsBinary bool  // its timestamps count units of 2^-tsExp s, else 10^-tsExp s
	tsExp    uint8 // if_tsresol's exponent (default 6: microseconds)
	tsOffset int64 // seconds, if_tsoffset
}

// newNgReader reads the section header and the blocks up to the first
// interface description, whose link type is the capture's.
func newNgReader(br *bufio.Reader) (*ngReader, error) {
	r := &ngReader{recordReader: recordReader{r: br}}
	for len(r.ifaces) == 0 {
		start := r.off
		typ, body, err := r.block()
		switch {
		case errors.Is(err, io.EOF):
			return nil, errors.New("no interface description block")
		case err != nil:
			return nil, err
		case typ == ngEnhancedPacket || typ == ngSimplePacket || typ == ngObsoletePacket:
			return nil, fmt.Errorf("packet block at offset %d before any interface description block", start)
		}
		if err := r.parse(typ, body, start); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *ngReader) LinkType() layers.LinkType { return r.linkType }

func (r *ngReader) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	for {
		start := r.off
		typ, body, err := r.block()
		if err != nil {
			return nil, gopacket.CaptureInfo{}, err
		}
		switch typ {
		case ngEnhancedPacket, ngObsoletePacket, ngSimplePacket:
			return r.packet(typ, body, start)
		}
		if err := r.parse(typ, body, start); err != nil {
			return nil, gopacket.CaptureInfo{}, err
		}
	}
}

// block reads the next block: its type and, for a type the reader parses,
// its body (without the lengths around it); other blocks are skipped. A
// clean end of file before a block is io.EOF.
func (r *ngReader) block() (typ uint32, body []byte, err error) {
	start := r.off
	if err := r.fill(r.hdr[:], true); err != nil {
		return 0, nil, err
	}
	typ = binary.BigEndian.Uint32(r.hdr[:4]) // a section header's type reads the same both ways
	if typ == ngSectionHeader {
		// The byte-order magic after the length says how to read it.
		bom := r.word[:]
		if err := r.fill(bom, false); err != nil {
			return 0, nil, err
		}
		switch {
		case binary.BigEndian.Uint32(bom) == ngByteOrderMagic:
			r.order = binary.BigEndian
		case binary.LittleEndian.Uint32(bom) == ngByteOrderMagic:
			r.order = binary.LittleEndian
		default:
			return 0, nil, fmt.Errorf("section header at offset %d: byte-order magic % x, want 1a2b3c4d in either order", start, bom)
		}
	} else if r.order == nil {
		return 0, nil, fmt.Errorf("block at offset %d: type %#x, want a section header first", start, typ)
	} else {
		typ = r.order.Uint32(r.hdr[:4])
	}
	length := r.order.Uint32(r.hdr[4:])
	minLen := uint32(3 * 4)
	switch typ {
	case ngSectionHeader:
		minLen = 28 // byte-order magic, version, section length
	case ngInterface:
		minLen = 20 // link type, reserved, snap length
	case ngSimplePacket:
		minLen = 16 // original length
	case ngEnhancedPacket, ngObsoletePacket:
		minLen = 12 + ngEnhancedFixedLen
	}
	if length%4 != 0 || length < minLen {
		return 0, nil, fmt.Errorf("%s at offset %d: length %d, want a multiple of 4 of at least %d", ngBlockName(typ), start, length, minLen)
	}
	bodyLen := int64(length) - 12
	if typ == ngSectionHeader {
		bodyLen -= 4 // the byte-order magic, read
	}
	switch typ {
	case ngSectionHeader, ngInterface, ngSimplePacket, ngEnhancedPacket, ngObsoletePacket:
		if length > maxNgBlock {
			return 0, nil, fmt.Errorf("%s at offset %d: length %d, more than the %d bytes of the longest packet with options", ngBlockName(typ), start, length, maxNgBlock)
		}
		if body, err = r.next(int(bodyLen)); err != nil {
			return 0, nil, err
		}
	default:
		if err := r.skip(bodyLen); err != nil {
			return 0, nil, err
		}
	}
	if err := r.fill(r.word[:], false); err != nil {
		return 0, nil, err
	}
	if trailer := r.order.Uint32(r.word[:]); trailer != length {
		return 0, nil, fmt.Errorf("%s at offset %d: length %d at its start, %d at its end", ngBlockName(typ), start, length, trailer)
	}
	return typ, body, nil
}

// parse takes in a block other than a packet: a section header starts a new
// list of interfaces; an interface description adds one.
func (r *ngReader) parse(typ uint32, body []byte, start int64) error {
	switch typ {
	case ngSectionHeader:
		if major := r.order.Uint16(body); major != 1 {
			return fmt.Errorf("section header at offset %d: version %d.%d, want 1.x", start, major, r.order.Uint16(body[2:]))
		}
		r.ifaces = r.ifaces[:0]
		r.section = r.section[:0]
		// Options follow the version and the 64-bit section length. One
		// that runs past the block ends them: a section header's options
		// are informational, and the packets still read.
		opts := body[min(len(body), 12):]
		for len(opts) >= 4 {
			code, n := r.order.Uint16(opts), int(r.order.Uint16(opts[2:]))
			if code == ngOptionEnd || n > len(opts)-4 {
				break
			}
			if code == ngOptionComment {
				r.section = append(r.section, string(opts[4:4+n]))
			}
			opts = opts[min(len(opts), 4+(n+3)&^3):]
		}
	case ngInterface:
		iface := ngIface{linkType: layers.LinkType(r.order.Uint16(body)), snapLen: r.order.Uint32(body[4:]), tsExp: 6}
		opts := body[8:]
		resol := byte(6)
		for len(opts) >= 4 {
			code, n := r.order.Uint16(opts), int(r.order.Uint16(opts[2:]))
			if code == ngOptionEnd {
				break
			}
			if n > len(opts)-4 {
				return fmt.Errorf("interface description at offset %d: option %d of %d bytes runs past the block", start, code, n)
			}
			v := opts[4 : 4+n]
			switch {
			case code == ngOptionTsResol && n >= 1:
				resol = v[0]
				iface.tsBinary, iface.tsExp = resol&0x80 != 0, resol&0x7f
			case code == ngOptionTsOffset && n >= 8:
				iface.tsOffset = int64(r.order.Uint64(v))
			}
			opts = opts[min(len(opts), 4+(n+3)&^3):]
		}
		if (iface.tsBinary && iface.tsExp > 63) || (!iface.tsBinary && iface.tsExp > 19) {
			return fmt.Errorf("interface description at offset %d: timestamp unit too small to count in 64 bits (if_tsresol %#x)", start, resol)
		}
		if r.haveLink && iface.linkType != r.linkType {
			return fmt.Errorf("interface description at offset %d: link type %s (%d), but the capture's first interface is %s (%d): xdphash reads one link type per file",
				start, iface.linkType, uint16(iface.linkType), r.linkType, uint16(r.linkType))
		}
		if len(r.ifaces) >= maxNgInterfaces {
			return fmt.Errorf("interface description at offset %d: more than %d interfaces in one section", start, maxNgInterfaces)
		}
		r.linkType, r.haveLink = iface.linkType, true
		r.ifaces = append(r.ifaces, iface)
	}
	return nil
}

// packet decodes a packet block's body.
func (r *ngReader) packet(typ uint32, body []byte, start int64) ([]byte, gopacket.CaptureInfo, error) {
	var (
		ci    gopacket.CaptureInfo
		iface int
		data  []byte
	)
	r.comments = r.comments[:0] // a block's comments are its own; a simple packet block has none
	bad := func(format string, args ...any) ([]byte, gopacket.CaptureInfo, error) {
		return nil, gopacket.CaptureInfo{}, fmt.Errorf("%s at offset %d: %s", ngBlockName(typ), start, fmt.Sprintf(format, args...))
	}
	if typ == ngSimplePacket {
		if len(r.ifaces) == 0 {
			return bad("no interface described in this section")
		}
		ci.Length = int(r.order.Uint32(body))
		capLen := ci.Length
		if snap := int(r.ifaces[0].snapLen); snap != 0 && capLen > snap {
			capLen = snap
		}
		if capLen > len(body)-4 {
			return bad("original length %d, but the block holds %d bytes of packet", ci.Length, len(body)-4)
		}
		ci.CaptureLength = capLen
		return body[4 : 4+capLen], ci, nil
	}
	if typ == ngObsoletePacket {
		iface = int(r.order.Uint16(body))
	} else {
		iface = int(r.order.Uint32(body))
	}
	if iface >= len(r.ifaces) {
		return bad("interface %d, but the section describes %d", iface, len(r.ifaces))
	}
	ts := uint64(r.order.Uint32(body[4:]))<<32 | uint64(r.order.Uint32(body[8:]))
	capLen, wireLen := r.order.Uint32(body[12:]), r.order.Uint32(body[16:])
	switch {
	case int64(capLen) > int64(len(body)-ngEnhancedFixedLen):
		return bad("captured length %d, but the block holds %d bytes of packet", capLen, len(body)-ngEnhancedFixedLen)
	case capLen > wireLen:
		return bad("captured length %d exceeds the original length %d", capLen, wireLen)
	case r.ifaces[iface].snapLen != 0 && capLen > r.ifaces[iface].snapLen:
		return bad("captured length %d exceeds interface %d's snap length %d", capLen, iface, r.ifaces[iface].snapLen)
	}
	data = body[ngEnhancedFixedLen : ngEnhancedFixedLen+capLen]
	opts := body[min(len(body), ngEnhancedFixedLen+int(capLen+3)&^3):]
	for len(opts) >= 4 {
		code, n := r.order.Uint16(opts), int(r.order.Uint16(opts[2:]))
		if code == 0 || n > len(opts)-4 {
			break // opt_endofopt, or an option the block cannot hold: no more comments
		}
		if code == ngOptionComment {
			r.comments = append(r.comments, opts[4:4+n])
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	ci.Timestamp = r.ifaces[iface].time(ts)
	ci.CaptureLength, ci.Length, ci.InterfaceIndex = int(capLen), int(wireLen), iface
	return data, ci, nil
}

// time converts a timestamp in the interface's unit.
func (f *ngIface) time(ts uint64) time.Time {
	var sec, nsec uint64
	if f.tsBinary {
		sec = ts >> f.tsExp
		hi, lo := bits.Mul64(ts&(1<<f.tsExp-1), 1e9)
		nsec = lo >> f.tsExp
		if f.tsExp > 0 {
			nsec |= hi << (64 - f.tsExp)
		}
	} else {
		perSecond := uint64(1)
		for range f.tsExp {
			perSecond *= 10
		}
		sec, nsec = ts/perSecond, ts%perSecond
		for e := f.tsExp; e < 9; e++ {
			nsec *= 10
		}
		for e := f.tsExp; e > 9; e-- {
			nsec /= 10
		}
	}
	return time.Unix(int64(sec)+f.tsOffset, int64(nsec)).UTC()
}

// ngBlockName names a block type in messages.
func ngBlockName(typ uint32) string {
	switch typ {
	case ngSectionHeader:
		return "section header"
	case ngInterface:
		return "interface description"
	case ngEnhancedPacket:
		return "enhanced packet block"
	case ngSimplePacket:
		return "simple packet block"
	case ngObsoletePacket:
		return "packet block"
	}
	return fmt.Sprintf("block (type %#x)", typ)
}

// OpenEthernet is Open for a capture of Ethernet frames, the
// only link type xdphash reads; name is for messages.
func OpenEthernet(r io.Reader, name string) (Reader, error) {
	capture, err := Open(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if lt := capture.LinkType(); lt != layers.LinkTypeEthernet {
		return nil, fmt.Errorf("read %s: link type %s (%d) is not supported: xdphash reads Ethernet frames (link type %d) only",
			name, lt, uint32(lt), uint32(layers.LinkTypeEthernet))
	}
	return capture, nil
}

func peekMagic(br *bufio.Reader) (uint32, error) {
	b, err := br.Peek(4)
	switch {
	case err == nil:
		return binary.BigEndian.Uint32(b), nil
	case len(b) == 0 && errors.Is(err, io.EOF):
		return 0, errors.New("empty file: want pcap or pcapng")
	case errors.Is(err, io.EOF):
		return 0, fmt.Errorf("read file header: %w", io.ErrUnexpectedEOF)
	}
	return 0, fmt.Errorf("read file header: %w", err)
}
