package xdptest

import (
	"bytes"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// The formats WriteCapture writes.
const (
	CapturePcap      = "pcap"    // classic pcap, microseconds
	CapturePcapNanos = "pcap-ns" // classic pcap, nanoseconds
	CapturePcapng    = "pcapng"
)

// CaptureRecord is one record of a test capture.
type CaptureRecord struct {
	Data    []byte
	WireLen int // below len(Data): len(Data)
	Time    time.Time
}

// CaptureEpoch is the time of a test capture's first record.
var CaptureEpoch = time.Unix(1700000000, 0).UTC()

// CaptureRecords makes records of frames, whole, gap apart from
// CaptureEpoch.
func CaptureRecords(frames [][]byte, gap time.Duration) []CaptureRecord {
	rs := make([]CaptureRecord, len(frames))
	for i, f := range frames {
		rs[i] = CaptureRecord{Data: f, Time: CaptureEpoch.Add(time.Duration(i) * gap)}
	}
	return rs
}

// NumberedFrame is frame i of the tests' numbered captures: 60 bytes of
// an IPv4 ethertype whose last byte is i.
func NumberedFrame(i int) []byte {
	f := make([]byte, 60)
	f[12], f[13] = 0x08, 0x00
	f[59] = byte(i)
	return f
}

// NumberedRecords are n NumberedFrames 1 ms apart, each captured to snap
// bytes of its 60 (snap 0: whole).
func NumberedRecords(n, snap int) []CaptureRecord {
	rs := make([]CaptureRecord, n)
	for i := range n {
		f := NumberedFrame(i)
		if snap > 0 {
			f = f[:snap]
		}
		rs[i] = CaptureRecord{Data: f, WireLen: 60, Time: CaptureEpoch.Add(time.Duration(i) * time.Millisecond)}
	}
	return rs
}

// WriteCapture returns a capture file of link type lt in format holding
// records (snap length 65536), as gopacket's pcapgo writes it: the tests'
// one writer of captures, in every format the capture package reads.
func WriteCapture(tb testing.TB, format string, lt layers.LinkType, records ...CaptureRecord) []byte {
	tb.Helper()
	var (
		buf   bytes.Buffer
		write func(gopacket.CaptureInfo, []byte) error
		flush = func() error { return nil }
	)
	switch format {
	case CapturePcap, CapturePcapNanos:
		w := pcapgo.NewWriter(&buf)
		if format == CapturePcapNanos {
			w = pcapgo.NewWriterNanos(&buf)
		}
		if err := w.WriteFileHeader(65536, lt); err != nil {
			tb.Fatal(err)
		}
		write = w.WritePacket
	case CapturePcapng:
		w, err := pcapgo.NewNgWriter(&buf, lt)
		if err != nil {
			tb.Fatal(err)
		}
		write, flush = w.WritePacket, w.Flush
	default:
		tb.Fatalf("unknown capture format %q", format)
	}
	for _, r := range records {
		ci := gopacket.CaptureInfo{Timestamp: r.Time, CaptureLength: len(r.Data), Length: max(r.WireLen, len(r.Data))}
		if err := write(ci, r.Data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := flush(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
