package source

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// CaptureReader reads the records of a pcap or pcapng file.
type CaptureReader interface {
	// ZeroCopyReadPacketData returns the next record; its data is valid until
	// the next call.
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
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

// OpenCapture tells pcap from pcapng by the file's magic, looking through
// gzip compression, and returns a reader positioned at the first record.
func OpenCapture(r io.Reader) (CaptureReader, error) {
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

	ngSectionHeader    = 0x0a0d0d0a
	ngInterface        = 1
	ngObsoletePacket   = 2 // "Packet Block", superseded by the enhanced one
	ngSimplePacket     = 3
	ngEnhancedPacket   = 6
	ngByteOrderMagic   = 0x1a2b3c4d
	ngOptionEnd        = 0
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
	comments [][]byte // the last packet's opt_comment options, views into its block
}

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
		var bom [4]byte
		if err := r.fill(bom[:], false); err != nil {
			return 0, nil, err
		}
		switch {
		case binary.BigEndian.Uint32(bom[:]) == ngByteOrderMagic:
			r.order = binary.BigEndian
		case binary.LittleEndian.Uint32(bom[:]) == ngByteOrderMagic:
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
	var end [4]byte
	if err := r.fill(end[:], false); err != nil {
		return 0, nil, err
	}
	if trailer := r.order.Uint32(end[:]); trailer != length {
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
	r.comments = r.comments[:0]
	opts := body[min(len(body), ngEnhancedFixedLen+int(capLen+3)&^3):]
	for len(opts) >= 4 {
		code, n := r.order.Uint16(opts), int(r.order.Uint16(opts[2:]))
		if code == 0 || n > len(opts)-4 {
			break // opt_endofopt, or an option the block cannot hold: no more comments
		}
		if code == 1 {
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

// OpenEthernetCapture is OpenCapture for a capture of Ethernet frames, the
// only link type xdphash reads; name is for messages.
func OpenEthernetCapture(r io.Reader, name string) (CaptureReader, error) {
	capture, err := OpenCapture(r)
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

// ReplayMode is how fast a file (or synthetic traffic) is handed out.
type ReplayMode uint8

const (
	// ReplayMax hands frames out as fast as they are taken.
	ReplayMax ReplayMode = iota
	// ReplayRecorded keeps the capture's gaps between frames.
	ReplayRecorded
	// ReplayRate hands frames out at Replay.PPS frames a second.
	ReplayRate
)

// Replay is the pace of a file or synthetic source.
type Replay struct {
	Mode ReplayMode
	PPS  float64 // frames per second, for ReplayRate
}

func (r Replay) String() string {
	switch r.Mode {
	case ReplayRecorded:
		return "recorded"
	case ReplayRate:
		return strconv.FormatFloat(r.PPS, 'g', -1, 64) + "pps"
	}
	return "max"
}

// interval is the gap between frames at rate pps, in nanoseconds.
func interval(pps float64) float64 { return 1e9 / pps }

// pacer sleeps a paced source's goroutine until a frame is due, or until the
// source closes (done). It reuses one timer: a frame costs no allocation.
type pacer struct {
	clock Clock
	done  <-chan struct{}
	timer *time.Timer
}

// sleep waits d nanoseconds; false when the source was closed first.
func (p *pacer) sleep(d int64) bool {
	if p.timer == nil {
		p.timer = time.NewTimer(time.Duration(d))
	} else {
		p.timer.Reset(time.Duration(d))
	}
	select {
	case <-p.timer.C:
		return true
	case <-p.done:
		p.timer.Stop()
		return false
	}
}

// isClosed reports whether done, a source's Close signal, is closed.
func isClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// queueSources returns qs as the QueueSource interface values Queues returns.
func queueSources[Q QueueSource](qs []Q) []QueueSource {
	out := make([]QueueSource, len(qs))
	for i, q := range qs {
		out[i] = q
	}
	return out
}

// PcapConfig describes a pcap or pcapng file source.
type PcapConfig struct {
	// Queues is the number of virtual receive queues (default 1). With more
	// than one, Spread picks each frame's queue, as a NIC's RSS would
	// (queues.NewRSSSpread builds one); it is called from one goroutine.
	Queues int
	Spread func(frame []byte) int
	// Batch is the most frames one Receive hands out (default 64).
	Batch  int
	Replay Replay
	// Clock, when set, makes the replay live: frames are handed out at the
	// Replay pace on this clock and stamped with it, and a queue whose
	// receive loop falls behind drops frames (counted as RxRingFull) as a
	// NIC's full RX ring would. Nil makes it virtual: nothing waits, no
	// frame is dropped, and the arrival stamps are the capture's times from
	// its first frame (ReplayMax, ReplayRecorded) or the k-th frame's
	// k/PPS (ReplayRate).
	Clock Clock
}

// pcapBatches is the number of batches each queue circulates between the
// file reader and its receive loop: one held by the loop, the others filling
// or ready.
const pcapBatches = 4

// pcapSource hands out a capture's frames over one or more virtual queues.
// One goroutine reads the file, spreads the frames, and copies them into
// per-queue batches; each queue's Receive takes the next ready batch.
type pcapSource struct {
	name   string
	file   io.Closer // nil when the reader is not the source's to close
	reader CaptureReader
	cfg    PcapConfig
	queues []*pcapQueue

	done       chan struct{} // closed by Close
	closeOnce  sync.Once
	readerDone chan struct{}
	pacer      pacer // the reader's, for paced replays
	err        error // the reader's end: nil at the end of the file; set before the queues' full channels close
}

type pcapQueue struct {
	src     *pcapSource
	index   int
	full    chan *pcapBatch // ready batches; closed after the last
	free    chan *pcapBatch
	cur     *pcapBatch // the batch the receive loop holds
	pending *pcapBatch // the batch the reader fills

	frames, bytes, dropped atomic.Uint64
}

// pcapBatch owns the bytes of its frames: the reader's buffer is valid for
// one record only.
type pcapBatch struct {
	arena   []byte
	frames  [][]byte
	wireLen []int
	arrival []int64
}

// OpenPcap opens the capture file path ("-" for stdin) and starts reading it.
func OpenPcap(path string, cfg PcapConfig) (Source, error) {
	if path == "-" {
		return NewPcap(os.Stdin, "stdin", cfg)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open capture: %w", err)
	}
	src, err := newPcap(f, path, f, cfg)
	if err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// NewPcap reads a capture from r, which it does not close; name is for
// messages. Close does not wait for a read from r to return.
func NewPcap(r io.Reader, name string, cfg PcapConfig) (Source, error) {
	return newPcap(r, name, nil, cfg)
}

func newPcap(r io.Reader, name string, file io.Closer, cfg PcapConfig) (*pcapSource, error) {
	cfg.Queues = max(cfg.Queues, 1)
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.Queues > 1 && cfg.Spread == nil {
		return nil, fmt.Errorf("open capture %s: %d queues and no Spread function", name, cfg.Queues)
	}
	if cfg.Replay.Mode == ReplayRate && cfg.Replay.PPS <= 0 {
		return nil, fmt.Errorf("open capture %s: replay rate %g pps, want > 0", name, cfg.Replay.PPS)
	}
	reader, err := OpenEthernetCapture(r, name)
	if err != nil {
		return nil, err
	}
	s := &pcapSource{name: name, file: file, reader: reader, cfg: cfg, done: make(chan struct{}), readerDone: make(chan struct{})}
	s.pacer = pacer{clock: cfg.Clock, done: s.done}
	for i := range cfg.Queues {
		q := &pcapQueue{src: s, index: i, full: make(chan *pcapBatch, pcapBatches), free: make(chan *pcapBatch, pcapBatches)}
		for range pcapBatches {
			q.free <- &pcapBatch{
				frames:  make([][]byte, 0, cfg.Batch),
				wireLen: make([]int, 0, cfg.Batch),
				arrival: make([]int64, 0, cfg.Batch),
			}
		}
		s.queues = append(s.queues, q)
	}
	go s.read()
	return s, nil
}

func (s *pcapSource) Queues() []QueueSource { return queueSources(s.queues) }

// Close stops the reader and every queue's Receive and closes the file.
func (s *pcapSource) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		if s.file != nil {
			// Closing the file ends a read in progress; then the reader
			// goroutine is sure to end.
			err = s.file.Close()
			<-s.readerDone
		}
	})
	return err
}

// read is the reader goroutine: the file's one reader, the NIC that spreads
// its frames over the queues.
func (s *pcapSource) read() {
	defer close(s.readerDone)
	defer func() {
		for _, q := range s.queues {
			q.flush()
			close(q.full)
		}
	}()
	live := s.cfg.Clock != nil
	var (
		start  int64 // the clock when the first frame was read
		first  time.Time
		frames int
	)
	for ; ; frames++ {
		data, ci, err := s.reader.ZeroCopyReadPacketData()
		if err != nil {
			// The pcap reader returns a bare io.EOF also when a record's
			// header was read but none of its data.
			if errors.Is(err, io.EOF) && ci.CaptureLength == 0 {
				return
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			if !s.closed() {
				s.err = fmt.Errorf("read frame %d of %s: %w", frames, s.name, err)
			}
			return
		}
		if frames == 0 {
			first = ci.Timestamp
			if live {
				start = s.cfg.Clock()
			}
		}
		// at is when the frame is due, from the first frame.
		var at int64
		switch s.cfg.Replay.Mode {
		case ReplayRate:
			at = int64(float64(frames) * interval(s.cfg.Replay.PPS))
		default:
			at = max(ci.Timestamp.Sub(first).Nanoseconds(), 0)
		}
		if live {
			if s.cfg.Replay.Mode != ReplayMax && !s.waitUntil(start+at) {
				return
			}
			at = s.cfg.Clock()
		}
		q := s.queues[0]
		if len(s.queues) > 1 {
			q = s.queues[s.cfg.Spread(data)%len(s.queues)]
		}
		if !q.add(data, ci.Length, at, live) {
			return
		}
	}
}

// waitUntil sleeps until the clock reads t, after handing out every partly
// filled batch (a paced frame must not wait for a batch to fill); false when
// the source was closed.
func (s *pcapSource) waitUntil(t int64) bool {
	d := t - s.cfg.Clock()
	if d <= 0 {
		return true
	}
	for _, q := range s.queues {
		q.flush()
	}
	return s.pacer.sleep(d)
}

func (s *pcapSource) closed() bool { return isClosed(s.done) }

// add copies a frame into the queue's pending batch and hands the batch out
// when it is full. Without a free batch, a live replay drops the frame; a
// virtual one waits. False when the source was closed.
func (q *pcapQueue) add(data []byte, wireLen int, at int64, live bool) bool {
	if q.pending == nil {
		if live {
			select {
			case q.pending = <-q.free:
			default:
				q.dropped.Add(1)
				return true
			}
		} else {
			select {
			case q.pending = <-q.free:
			case <-q.src.done:
				return false
			}
		}
	}
	b := q.pending
	off := len(b.arena)
	b.arena = append(b.arena, data...)
	b.frames = append(b.frames, b.arena[off:len(b.arena):len(b.arena)])
	b.wireLen = append(b.wireLen, wireLen)
	b.arrival = append(b.arrival, at)
	if len(b.frames) == cap(b.frames) {
		q.flush()
	}
	return true
}

// flush hands out the pending batch, if it holds a frame. The full channel
// has room for every batch, so this never blocks.
func (q *pcapQueue) flush() {
	if q.pending != nil && len(q.pending.frames) > 0 {
		q.full <- q.pending
		q.pending = nil
	}
}

func (q *pcapQueue) Queue() int { return q.index }

// Receive hands out the next ready batch, and gives the previous one back to
// the reader.
func (q *pcapQueue) Receive(b *Batch) error {
	b.Reset()
	if q.src.closed() {
		return ErrClosed
	}
	if q.cur != nil {
		c := q.cur
		// Frames slice the arena; when the arena grew, earlier frames keep
		// the old array alive until the batch is reused, and no longer.
		c.arena, c.frames, c.wireLen, c.arrival = c.arena[:0], c.frames[:0], c.wireLen[:0], c.arrival[:0]
		q.free <- c
		q.cur = nil
	}
	select {
	case pb, ok := <-q.full:
		if !ok {
			if q.src.closed() {
				return ErrClosed
			}
			if q.src.err != nil {
				return q.src.err
			}
			return io.EOF
		}
		q.cur = pb
		var bytes uint64
		for i, f := range pb.frames {
			b.Append(f, pb.wireLen[i], pb.arrival[i])
			bytes += uint64(pb.wireLen[i])
		}
		q.frames.Add(uint64(len(pb.frames)))
		q.bytes.Add(bytes)
		return nil
	case <-q.src.done:
		return ErrClosed
	}
}

func (q *pcapQueue) Stats() QueueStats {
	return QueueStats{Frames: q.frames.Load(), Bytes: q.bytes.Load(), RxRingFull: q.dropped.Load()}
}
