package capture

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// captured is one record as a reader returned it.
type captured struct {
	data []byte
	ci   gopacket.CaptureInfo
}

// readCapture reads every record of r until an error (io.EOF at a clean
// end).
func readCapture(r interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}) ([]captured, error) {
	var out []captured
	for {
		data, ci, err := r.ZeroCopyReadPacketData()
		if err != nil {
			return out, err
		}
		out = append(out, captured{bytes.Clone(data), ci})
	}
}

// FuzzCaptureReader reads a file with this package's reader and with
// gopacket's pcapgo. The reader must end with io.EOF or an error that names
// an offset, return records that fit the file (captured bytes no more than
// the input, each within its original length and maxSnapLen), and agree with
// pcapgo on every record both return before either ends (pcapgo accepts
// things this reader refuses, never the other way round).
func FuzzCaptureReader(f *testing.F) {
	ng, _ := testNgCapture(f, 3)
	f.Add(ng)
	f.Add(testCapture(f, 3, 0, layers.LinkTypeEthernet))
	f.Add(testCapture(f, 2, 40, layers.LinkTypeEthernet))
	f.Fuzz(func(t *testing.T, file []byte) {
		r, err := Open(bytes.NewReader(file))
		if err != nil {
			return
		}
		mine, err := readCapture(r)
		if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "offset") {
			t.Errorf("error %q names no offset", err)
		}
		var total int
		for i, c := range mine {
			total += len(c.data)
			if len(c.data) != c.ci.CaptureLength || c.ci.CaptureLength > c.ci.Length || c.ci.CaptureLength > maxSnapLen {
				t.Fatalf("record %d: %d bytes, %+v", i, len(c.data), c.ci)
			}
		}
		if total > len(file) {
			t.Fatalf("%d bytes of records from a file of %d", total, len(file))
		}

		var theirs []captured
		exactTimes := true // pcapgo's times are exact at a resolution of 1 ns or coarser
		switch binaryMagic(file) {
		case magicPcapng:
			ngr, err := pcapgo.NewNgReader(bytes.NewReader(file), pcapgo.NgReaderOptions{ErrorOnMismatchingLinkType: true})
			if err != nil {
				return
			}
			theirs, _ = readCapture(ngr)
			for i := range ngr.NInterfaces() {
				// pcapgo scales a finer resolution by an integer ratio, truncated
				// (2^-38 s by 274 where 2^38/10^9 is 274.9): its times are then off.
				if f, err := ngr.Interface(i); err == nil {
					r := f.TimestampResolution
					exactTimes = exactTimes && (r.Binary() && r.Exponent() <= 29 || !r.Binary() && r.Exponent() <= 9)
				}
			}
		case magicPcapMicros, magicPcapMicrosLE, magicPcapNanos, magicPcapNanosLE:
			pr, err := pcapgo.NewReader(bytes.NewReader(file))
			if err != nil {
				return
			}
			theirs, _ = readCapture(pr)
		default:
			return // gzip: pcapgo's pcapng reader does not look inside
		}
		for i := range min(len(mine), len(theirs)) {
			m, p := mine[i], theirs[i]
			if !bytes.Equal(m.data, p.data) || m.ci.CaptureLength != p.ci.CaptureLength || m.ci.Length != p.ci.Length ||
				m.ci.InterfaceIndex != p.ci.InterfaceIndex || exactTimes && plausible(m.ci.Timestamp) && !m.ci.Timestamp.Equal(p.ci.Timestamp) {
				t.Fatalf("record %d: this reader % x %+v, pcapgo % x %+v", i, m.data, m.ci, p.data, p.ci)
			}
		}
	})
}

// binaryMagic is the first four bytes of file, big-endian (0 if shorter).
func binaryMagic(file []byte) uint32 {
	if len(file) < 4 {
		return 0
	}
	return uint32(file[0])<<24 | uint32(file[1])<<16 | uint32(file[2])<<8 | uint32(file[3])
}

// plausible reports whether t lies where pcapgo's times are exact: years 1970
// to 9999. Past them its seconds overflow time.Unix's range; this reader's
// do not.
func plausible(t time.Time) bool { return t.Year() >= 1970 && t.Year() <= 9999 }
