package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// testFrame is frame i of a test capture (xdptest.NumberedFrame).
func testFrame(i int) []byte { return xdptest.NumberedFrame(i) }

// testRecords are n test frames 1 ms apart, each captured to snap bytes of
// its 60 (snap 0: whole).
func testRecords(n, snap int) []xdptest.CaptureRecord { return xdptest.NumberedRecords(n, snap) }

// testCapture is a nanosecond pcap of n test frames (testRecords).
func testCapture(tb testing.TB, n, snap int, lt layers.LinkType) []byte {
	tb.Helper()
	return xdptest.WriteCapture(tb, xdptest.CapturePcapNanos, lt, testRecords(n, snap)...)
}

// testNgCapture is a little-endian pcapng of n test frames, as pcapgo
// writes it, and the offset of each frame's enhanced packet block.
func testNgCapture(tb testing.TB, n int) ([]byte, []int) {
	tb.Helper()
	b := xdptest.WriteCapture(tb, xdptest.CapturePcapng, layers.LinkTypeEthernet, testRecords(n, 0)...)
	var epbs []int
	for off := 0; off < len(b); off += int(binary.LittleEndian.Uint32(b[off+4:])) {
		if binary.LittleEndian.Uint32(b[off:]) == ngEnhancedPacket {
			epbs = append(epbs, off)
		}
	}
	if len(epbs) != n {
		tb.Fatalf("pcapgo wrote %d packet blocks, want %d", len(epbs), n)
	}
	return b, epbs
}

// TestCaptureMalformed reads captures with one bad record, the second: the
// reader hands out the first frame, then refuses the second with an error
// that names what is wrong and the offset of the block or record.
func TestCaptureMalformed(t *testing.T) {
	ng, epb := testNgCapture(t, 3)
	le := binary.LittleEndian
	// ngBlock returns ng with the second packet block changed by edit.
	ngBlock := func(edit func(b []byte)) []byte {
		b := bytes.Clone(ng)
		edit(b[epb[1]:])
		return b
	}
	ngLen := func(n uint32) []byte { return ngBlock(func(b []byte) { le.PutUint32(b[4:], n) }) }
	pc := testCapture(t, 3, 0, layers.LinkTypeEthernet)
	rec := func(i int) int { return pcapFileHeader + i*(pcapRecordHeader+60) }
	pcapEdit := func(edit func(b []byte)) []byte {
		b := bytes.Clone(pc)
		edit(b)
		return b
	}
	// The second EPB's offset, as errors print it.
	at := "at offset " + strconv.Itoa(epb[1])
	tests := []struct {
		name string
		file []byte
		want []string
	}{
		{"pcapng block length 0", ngLen(0), []string{at, "length 0, want a multiple of 4 of at least 32"}},
		{"pcapng block length 4", ngLen(4), []string{at, "length 4,"}},
		{"pcapng block length 8", ngLen(8), []string{at, "length 8,"}},
		{"pcapng block length 12", ngLen(12), []string{at, "length 12,"}},
		{"pcapng block length 13", ngLen(13), []string{at, "length 13,"}},
		{"pcapng block length 16", ngLen(16), []string{at, "length 16,"}},
		{"pcapng block length 47", ngLen(47), []string{at, "length 47,"}},
		{"pcapng captured length past the block", ngBlock(func(b []byte) { le.PutUint32(b[20:], 1000) }),
			[]string{"enhanced packet block " + at, "captured length 1000, but the block holds 60 bytes"}},
		{"pcapng trailing length differs", ngBlock(func(b []byte) { n := le.Uint32(b[4:]); le.PutUint32(b[n-4:], n+4) }),
			[]string{at, "at its end"}},
		{"pcapng undescribed interface", ngBlock(func(b []byte) { le.PutUint32(b[8:], 6) }),
			[]string{at, "interface 6, but the section describes 1"}},
		{"pcap captured length past the snap length", pcapEdit(func(b []byte) { le.PutUint32(b[16:], 40) }),
			[]string{"record at offset " + strconv.Itoa(rec(0)), "captured length 60 exceeds the snap length 40"}},
		{"pcap nanoseconds not below a second", pcapEdit(func(b []byte) { le.PutUint32(b[rec(1)+4:], 1e9) }),
			[]string{"record at offset " + strconv.Itoa(rec(1)), "fraction of a second 1000000000, want below 1000000000"}},
		{"pcap captured length past the original", pcapEdit(func(b []byte) { le.PutUint32(b[rec(1)+12:], 59) }),
			[]string{"record at offset " + strconv.Itoa(rec(1)), "captured length 60 exceeds the original length 59"}},
		{"pcapng cut inside a block", ng[:epb[1]+30], []string{"unexpected EOF at offset " + strconv.Itoa(epb[1]+30)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(bytes.NewReader(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var frames int
			for {
				_, _, err = r.ZeroCopyReadPacketData()
				if err != nil {
					break
				}
				frames++
			}
			if errors.Is(err, io.EOF) {
				t.Fatalf("%d frames, then a clean end; want an error", frames)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// The snap length is the file's: no frame is good.
			if want := 1; frames != want && !strings.Contains(tt.name, "snap length") {
				t.Errorf("%d frames before the error, want %d", frames, want)
			}
		})
	}
}

// TestCaptureReaders reads the same frames from pcap and pcapng files, in
// both resolutions and byte orders pcapgo writes.
func TestCaptureReaders(t *testing.T) {
	ng, _ := testNgCapture(t, 5)
	for name, file := range map[string][]byte{"pcapng": ng, "pcap": testCapture(t, 5, 0, layers.LinkTypeEthernet)} {
		r, err := Open(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Unix(1700000000, 0).UTC()
		for i := range 5 {
			data, ci, err := r.ZeroCopyReadPacketData()
			if err != nil {
				t.Fatalf("%s frame %d: %v", name, i, err)
			}
			if !bytes.Equal(data, testFrame(i)) || ci.Length != 60 || ci.CaptureLength != 60 || !ci.Timestamp.Equal(t0.Add(time.Duration(i)*time.Millisecond)) {
				t.Errorf("%s frame %d: % x %+v", name, i, data, ci)
			}
		}
		if _, _, err := r.ZeroCopyReadPacketData(); err != io.EOF {
			t.Errorf("%s: after the last frame: %v, want io.EOF", name, err)
		}
	}
}

// TestSimplePacketNoComments: a simple packet block after an enhanced one
// with comments has none of its own, so it is not dissected with the
// earlier frame's metadata VLAN tag.
func TestSimplePacketNoComments(t *testing.T) {
	var f ngFile
	f.section().iface(0).epb(0, 1, testFrame(0), "xdphash hash=00000001 vlan_tag=0x8100:0x0064").spb(testFrame(1))
	r, err := Open(bytes.NewReader(f.b))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []dissect.VLANTag{{TPID: 0x8100, TCI: 0x64}, {}} {
		_, _, tag, err := ReadTagged(r, dissect.VLANTag{})
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if tag != want {
			t.Errorf("frame %d: tag %v, want %v", i, tag, want)
		}
	}
}

// TestManyInterfaces: a small gzip of a million interface descriptions, the
// shape that once took a GB, is refused at the cap on interfaces per
// section, with a bound on what reading it allocates; a new section starts
// the count again.
func TestManyInterfaces(t *testing.T) {
	const n = 1 << 20
	var f ngFile
	f.section()
	for range n {
		f.iface(0)
	}
	f.epb(0, 1, testFrame(0))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(f.b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := Open(bytes.NewReader(gz.Bytes()))
	if err == nil {
		_, err = readCapture(r)
	}
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 65536 interfaces in one section") {
		t.Errorf("%d interfaces: %v, want the cap's error", n, err)
	}
	// The gzip window, the buffers and the growing list of 65536 interfaces.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("reading %d bytes of gzip allocated %d bytes, want at most 16 MB", gz.Len(), alloc)
	}

	// maxNgInterfaces in each of two sections is a good file.
	f = ngFile{}
	for s := range 2 {
		f.section()
		for range maxNgInterfaces {
			f.iface(0)
		}
		f.epb(maxNgInterfaces-1, uint64(s), testFrame(s))
	}
	r, err = Open(bytes.NewReader(f.b))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readCapture(r); len(got) != 2 || !errors.Is(err, io.EOF) {
		t.Errorf("two full sections: %d frames, %v; want 2, io.EOF", len(got), err)
	}
}
