package source

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// testFrame is frame i of a test capture (xdptest.NumberedFrame).
func testFrame(i int) []byte { return xdptest.NumberedFrame(i) }

// testCapture is a pcap of n test frames 1 ms apart, each captured to snap
// bytes of its 60 (snap 0: whole).
func testCapture(tb testing.TB, n, snap int, lt layers.LinkType) []byte {
	tb.Helper()
	rs := xdptest.NumberedRecords(n, snap)
	return xdptest.WriteCapture(tb, xdptest.CapturePcapNanos, lt, rs...)
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

// TestPcapLiveDrops replays at 10 Mpps, asked to drop (DropBehind), to a
// queue that takes nothing for a while: the frames without a free batch are
// dropped and counted as the replay's, not the kernel's, as a NIC drops on
// a full RX ring.
func TestPcapLiveDrops(t *testing.T) {
	const n = 2000
	src, err := NewPcap(bytes.NewReader(testCapture(t, n, 0, layers.LinkTypeEthernet)), "test.pcap", PcapConfig{
		Batch: 8, Replay: Replay{Mode: ReplayRate, PPS: 1e7}, Clock: WallClock(), DropBehind: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	<-src.(*pcapSource).readerDone // the replay is over
	got := receiveAll(t, src, io.EOF)
	st := src.Queues()[0].Stats()
	if st.ReplayRingFull == 0 || uint64(len(got)) != st.Frames || st.Frames+st.ReplayRingFull != n || st.KernelDrops() != 0 || st.ReplayDrops() != st.ReplayRingFull {
		t.Errorf("handedOut %d, stats %+v: want the replay's drops, none of the kernel's, adding up to %d", len(got), st, n)
	}
}

// behindClock is a clock that runs a second ahead at each reading: every
// frame of a paced replay is overdue, as for a receive loop always behind.
func behindClock() Clock {
	var now atomic.Int64
	return func() int64 { return now.Add(int64(time.Second)) }
}

// TestPcapLiveWaits: a live replay at the recorded pace that its receive
// loop is always behind waits for the loop by default, and every frame of
// the file is received, in order: none dropped.
func TestPcapLiveWaits(t *testing.T) {
	const n = 2000
	src, err := NewPcap(bytes.NewReader(testCapture(t, n, 0, layers.LinkTypeEthernet)), "test.pcap", PcapConfig{
		Batch: 8, Replay: Replay{Mode: ReplayRecorded}, Clock: behindClock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := receiveAll(t, src, io.EOF)
	st := src.Queues()[0].Stats()
	if len(got) != n || st.Frames != n || st.LostBeforeLoop() != 0 {
		t.Fatalf("handed out %d of %d frames, stats %+v: want all, none dropped", len(got), n, st)
	}
	for i, h := range got {
		if !bytes.Equal(h.frame, testFrame(i)) {
			t.Fatalf("frame %d handed out is not the file's frame %d", i, i)
		}
	}
}

func TestPcapClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.pcap")
	if err := os.WriteFile(path, testCapture(t, 1000, 0, layers.LinkTypeEthernet), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := OpenPcap(path, PcapConfig{Batch: 16})
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

// TestPcapPipePartialBatch: from a pipe whose writer has sent 10 frames and
// waits, the receive loop gets all 10 without waiting for a full batch of
// 64, so none is held when the run stops.
func TestPcapPipePartialBatch(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	go func() {
		// The pipe's buffer holds the 10 frames: the write returns.
		if _, err := pw.Write(testCapture(t, 10, 0, layers.LinkTypeEthernet)); err != nil {
			t.Error(err)
		}
	}()
	src, err := OpenPcap("/dev/fd/"+strconv.Itoa(int(pr.Fd())), PcapConfig{Batch: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	q := src.Queues()[0]
	b := NewBatch(64)
	var got int
	for got < 10 {
		if err := q.Receive(b); err != nil {
			t.Fatalf("after %d frames: %v", got, err)
		}
		for _, f := range b.Frames {
			if !bytes.Equal(f, testFrame(got)) {
				t.Fatalf("frame %d: % x", got, f)
			}
			got++
		}
	}
	if st := q.Stats(); st.Frames != 10 {
		t.Errorf("stats %+v, want 10 frames", st)
	}
}
