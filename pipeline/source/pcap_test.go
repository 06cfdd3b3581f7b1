package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// testFrame is frame i of a test capture: 60 bytes whose last byte is i.
func testFrame(i int) []byte {
	f := make([]byte, 60)
	f[12], f[13] = 0x08, 0x00
	f[59] = byte(i)
	return f
}

// testCapture is a pcap of n test frames 1 ms apart, each captured to snap
// bytes of its 60 (snap 0: whole).
func testCapture(tb testing.TB, n, snap int, lt layers.LinkType) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriterNanos(&buf)
	if err := w.WriteFileHeader(65536, lt); err != nil {
		tb.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	for i := range n {
		f := testFrame(i)
		if snap > 0 {
			f = f[:snap]
		}
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f), Length: 60}
		if err := w.WritePacket(ci, f); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// handedOut is one frame as a queue handed it out.
type handedOut struct {
	queue   int
	frame   []byte
	wireLen int
	arrival int64
}

// receiveAll drains every queue of src, each on a goroutine of its own as
// the engine does (a file's one reader waits for the slowest queue), until
// each ends, and checks that each ends with end. It returns the frames queue
// after queue.
func receiveAll(tb testing.TB, src Source, end error) []handedOut {
	tb.Helper()
	qs := src.Queues()
	got := make([][]handedOut, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Go(func() {
			b := NewBatch(64)
			for {
				err := q.Receive(b)
				for j, f := range b.Frames {
					got[i] = append(got[i], handedOut{q.Queue(), bytes.Clone(f), b.WireLen[j], b.Arrival[j]})
				}
				if err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, end) {
			tb.Errorf("queue %d ended with %v, want %v", i, err, end)
		}
	}
	return slices.Concat(got...)
}

func TestPcapVirtual(t *testing.T) {
	tests := []struct {
		name   string
		cfg    PcapConfig
		snap   int
		arrive func(i int) int64
	}{
		{name: "recorded stamps", cfg: PcapConfig{Batch: 7}, arrive: func(i int) int64 { return int64(i) * 1e6 }},
		{name: "max keeps the stamps", cfg: PcapConfig{Replay: Replay{Mode: ReplayMax}}, arrive: func(i int) int64 { return int64(i) * 1e6 }},
		{name: "rate", cfg: PcapConfig{Replay: Replay{Mode: ReplayRate, PPS: 2000}}, arrive: func(i int) int64 { return int64(i) * 5e5 }},
		{name: "snapped", cfg: PcapConfig{}, snap: 40, arrive: func(i int) int64 { return int64(i) * 1e6 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 100
			src, err := NewPcap(bytes.NewReader(testCapture(t, n, tt.snap, layers.LinkTypeEthernet)), "test.pcap", tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got := receiveAll(t, src, io.EOF)
			if len(got) != n {
				t.Fatalf("%d frames, want %d", len(got), n)
			}
			for i, r := range got {
				want := testFrame(i)
				if tt.snap > 0 {
					want = want[:tt.snap]
				}
				if !bytes.Equal(r.frame, want) || r.wireLen != 60 || r.arrival != tt.arrive(i) {
					t.Fatalf("frame %d: % x, wire %d, arrival %d; want % x, 60, %d", i, r.frame, r.wireLen, r.arrival, want, tt.arrive(i))
				}
			}
			if st := src.Queues()[0].Stats(); st.Frames != n || st.Bytes != 60*n {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestPcapSpread spreads the frames over 3 queues by their last byte.
func TestPcapSpread(t *testing.T) {
	const n = 255 // the last byte numbers them
	src, err := NewPcap(bytes.NewReader(testCapture(t, n, 0, layers.LinkTypeEthernet)), "test.pcap", PcapConfig{
		Queues: 3, Batch: 5, Spread: func(f []byte) int { return int(f[59]) % 3 },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := receiveAll(t, src, io.EOF)
	next := [3]int{0, 1, 2}
	for _, r := range got {
		i := next[r.queue]
		if r.frame[59] != byte(i) {
			t.Fatalf("queue %d got frame %d, want %d", r.queue, r.frame[59], i)
		}
		next[r.queue] += 3
	}
	if len(got) != n {
		t.Errorf("%d frames, want %d", len(got), n)
	}
}

// TestPcapRecordedPace replays 30 frames 1 ms apart on the wall clock.
func TestPcapRecordedPace(t *testing.T) {
	src, err := NewPcap(bytes.NewReader(testCapture(t, 30, 0, layers.LinkTypeEthernet)), "test.pcap", PcapConfig{
		Replay: Replay{Mode: ReplayRecorded}, Clock: WallClock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := time.Now()
	got := receiveAll(t, src, io.EOF)
	if d := time.Since(start); d < 29*time.Millisecond {
		t.Errorf("30 frames 1 ms apart took %s", d)
	}
	if len(got) != 30 {
		t.Fatalf("%d frames", len(got))
	}
	// A late wake-up delays a frame, never the ones after it.
	for i := 1; i < len(got); i++ {
		if got[i].arrival < got[i-1].arrival {
			t.Errorf("frame %d stamped before the one before", i)
		}
	}
	if span := got[29].arrival - got[0].arrival; span < int64(29*time.Millisecond) {
		t.Errorf("stamps span %d ns, want at least 29 ms", span)
	}
}

// TestPcapLiveDrops replays at 10 Mpps to a queue that takes nothing for a
// while: the frames without a free batch are dropped and counted, as a NIC
// drops on a full RX ring.
func TestPcapLiveDrops(t *testing.T) {
	const n = 2000
	src, err := NewPcap(bytes.NewReader(testCapture(t, n, 0, layers.LinkTypeEthernet)), "test.pcap", PcapConfig{
		Batch: 8, Replay: Replay{Mode: ReplayRate, PPS: 1e7}, Clock: WallClock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	<-src.(*pcapSource).readerDone // the replay is over
	got := receiveAll(t, src, io.EOF)
	st := src.Queues()[0].Stats()
	if st.RxRingFull == 0 || uint64(len(got)) != st.Frames || st.Frames+st.RxRingFull != n || st.KernelDrops() != st.RxRingFull {
		t.Errorf("handedOut %d, stats %+v: want drops, adding up to %d", len(got), st, n)
	}
}

func TestPcapClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.pcap")
	if err := os.WriteFile(path, testCapture(t, 1000, 0, layers.LinkTypeEthernet), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := OpenPcap(path, PcapConfig{Queues: 2, Spread: func(f []byte) int { return int(f[59]) }})
	if err != nil {
		t.Fatal(err)
	}
	q := src.Queues()[0]
	b := NewBatch(64)
	if err := q.Receive(b); err != nil || b.Len() == 0 {
		t.Fatalf("first receive: %d frames, %v", b.Len(), err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Receive(b); !errors.Is(err, ErrClosed) {
		t.Errorf("receive after close: %v, want ErrClosed", err)
	}
	if err := src.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestPcapErrors(t *testing.T) {
	whole := testCapture(t, 10, 0, layers.LinkTypeEthernet)
	tests := []struct {
		name string
		data []byte
		cfg  PcapConfig
		want string
	}{
		{"empty", nil, PcapConfig{}, "empty file"},
		{"not a capture", []byte("hello, world"), PcapConfig{}, "unknown file format"},
		{"link type", testCapture(t, 1, 0, layers.LinkTypeRaw), PcapConfig{}, "link type"},
		{"queues without spread", whole, PcapConfig{Queues: 2}, "no Spread"},
		{"rate without rate", whole, PcapConfig{Replay: Replay{Mode: ReplayRate}}, "replay rate"},
	}
	for _, tt := range tests {
		if _, err := NewPcap(bytes.NewReader(tt.data), "x.pcap", tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := OpenPcap("/nonexistent.pcap", PcapConfig{}); err == nil {
		t.Error("no error opening a missing file")
	}

	// A file cut inside its last record ends with an error, after the
	// frames before it.
	src, err := NewPcap(bytes.NewReader(whole[:len(whole)-10]), "cut.pcap", PcapConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got := receiveAll(t, src, io.ErrUnexpectedEOF); len(got) != 9 {
		t.Errorf("%d frames before the cut, want 9", len(got))
	}
}

// testNgCapture is a little-endian pcapng of n test frames, as pcapgo
// writes it, and the offset of each frame's enhanced packet block.
func testNgCapture(tb testing.TB, n int) ([]byte, []int) {
	tb.Helper()
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	for i := range n {
		f := testFrame(i)
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	b := buf.Bytes()
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
			r, err := OpenCapture(bytes.NewReader(tt.file))
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
		r, err := OpenCapture(bytes.NewReader(file))
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
