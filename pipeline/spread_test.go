package pipeline

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
)

// spreadFrames are the corpus's frames: every shape, many flows.
func spreadFrames() [][]byte {
	var frames [][]byte
	for _, f := range corpus.Build() {
		frames = append(frames, f.Data)
	}
	return frames
}

// drainQueues receives every queue of src on a goroutine of its own until
// it ends, and returns each queue's frames (copies) and arrival stamps.
func drainQueues(t *testing.T, src source.Source) ([][][]byte, [][]int64) {
	t.Helper()
	qs := src.Queues()
	frames, arrivals := make([][][]byte, len(qs)), make([][]int64, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Go(func() {
			b := source.NewBatch(64)
			for {
				err := q.Receive(b)
				for j, f := range b.Frames {
					frames[i] = append(frames[i], bytes.Clone(f))
					arrivals[i] = append(arrivals[i], b.Arrival[j])
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
		if !errors.Is(err, io.EOF) {
			t.Errorf("queue %d ended with %v, want io.EOF", i, err)
		}
	}
	return frames, arrivals
}

// TestRSSPcap spreads a capture over 3 virtual queues: each frame reaches the
// queue the RSS model picks for it, in the file's order, with the capture's
// time as its arrival, and the queues' counters add up to the file.
func TestRSSPcap(t *testing.T) {
	frames := spreadFrames()
	const gap = 10 * time.Microsecond
	file := xdptest.WriteCapture(t, xdptest.CapturePcapng, layers.LinkTypeEthernet, xdptest.CaptureRecords(frames, gap)...)
	const queues = 3
	src, err := NewPcap(bytes.NewReader(file), "corpus.pcapng", source.PcapConfig{Batch: 5}, RSSConfig{Queues: queues})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got := src.Info().Name; got != "pcap:corpus.pcapng" {
		t.Errorf("name %q", got)
	}
	spread, err := hash.NewRSSSpread(nil, hash.SymmetricNone, queues, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want [queues][]int // frame indexes per queue
	for i, f := range frames {
		q := spread(f)
		want[q] = append(want[q], i)
	}
	got, arrivals := drainQueues(t, src)
	for q := range queues {
		if len(want[q]) == 0 {
			t.Errorf("RSS puts no corpus frame on queue %d", q)
		}
		if len(got[q]) != len(want[q]) {
			t.Errorf("queue %d: %d frames, want %d", q, len(got[q]), len(want[q]))
			continue
		}
		var bytesIn uint64
		for k, i := range want[q] {
			if !bytes.Equal(got[q][k], frames[i]) || arrivals[q][k] != int64(i)*int64(gap) {
				t.Errorf("queue %d, frame %d: frame %d of the file arrived at %d; want it at %d", q, k, i, arrivals[q][k], int64(i)*int64(gap))
			}
			bytesIn += uint64(len(frames[i]))
		}
		if st := src.Queues()[q].Stats(); st.Frames != uint64(len(want[q])) || st.Bytes != bytesIn || st.LostBeforeLoop() != 0 {
			t.Errorf("queue %d: stats %+v, want %d frames, %d bytes", q, st, len(want[q]), bytesIn)
		}
	}
}

// TestRSSPcapLiveDrops replays at 10 Mpps, asked to drop, to queues that
// take nothing until the replay is over: the stage drops what finds no free
// batch (the replay's ring_full), as a NIC
// on a full RX ring, and every frame of the file is either handed out or
// counted as dropped on its queue.
func TestRSSPcapLiveDrops(t *testing.T) {
	var frames [][]byte
	for range 10 {
		frames = append(frames, spreadFrames()...)
	}
	file := xdptest.WriteCapture(t, xdptest.CapturePcap, layers.LinkTypeEthernet, xdptest.CaptureRecords(frames, time.Microsecond)...)
	src, err := NewPcap(bytes.NewReader(file), "corpus.pcap",
		source.PcapConfig{Batch: 8, Replay: source.Replay{Mode: source.ReplayRate, PPS: 1e7}, Clock: source.WallClock(), DropBehind: true}, RSSConfig{Queues: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	<-src.(*rssSource).stopped // the replay is over
	got, _ := drainQueues(t, src)
	var handed, dropped uint64
	for q, qs := range src.Queues() {
		st := qs.Stats()
		if st.Frames != uint64(len(got[q])) {
			t.Errorf("queue %d: %d frames handed out, stats say %d", q, len(got[q]), st.Frames)
		}
		if st.KernelDrops() != 0 {
			t.Errorf("queue %d: kernel drops %+v of a replay", q, st)
		}
		handed, dropped = handed+st.Frames, dropped+st.ReplayRingFull
	}
	if dropped == 0 || handed+dropped != uint64(len(frames)) {
		t.Errorf("%d frames handed out, %d dropped: want drops, adding up to %d", handed, dropped, len(frames))
	}
}

// TestRSSSynthetic gives each template to the queue the RSS model picks.
func TestRSSSynthetic(t *testing.T) {
	frames, err := xdptest.Templates("default")
	if err != nil {
		t.Fatal(err)
	}
	const queues = 2
	spread, err := hash.NewRSSSpread(nil, hash.SymmetricNone, queues, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSynthetic(frames, source.SyntheticConfig{Count: uint64(4 * len(frames))}, RSSConfig{Queues: queues})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, _ := drainQueues(t, src)
	for q := range queues {
		if len(got[q]) == 0 {
			t.Errorf("queue %d got no frame", q)
		}
		for _, f := range got[q] {
			if p := spread(f); p != q {
				t.Fatalf("queue %d got a frame RSS puts on queue %d", q, p)
			}
		}
	}
}

// TestRSSPcapAllocs: the RSS stage allocates nothing per frame: a replay of
// ten times the frames allocates no more than a few times more (the
// batches' arenas, grown once, and the setup are the same).
func TestRSSPcapAllocs(t *testing.T) {
	base := spreadFrames()
	replay := func(copies int) float64 {
		var frames [][]byte
		for range copies {
			frames = append(frames, base...)
		}
		file := xdptest.WriteCapture(t, xdptest.CapturePcap, layers.LinkTypeEthernet, xdptest.CaptureRecords(frames, time.Microsecond)...)
		return testing.AllocsPerRun(3, func() {
			src, err := NewPcap(bytes.NewReader(file), "allocs.pcap", source.PcapConfig{}, RSSConfig{Queues: 2})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, q := range src.Queues() {
				wg.Go(func() {
					b := source.NewBatch(64)
					for q.Receive(b) == nil {
					}
				})
			}
			wg.Wait()
			src.Close()
		})
	}
	short, long := replay(2), replay(20)
	if long > short+64 {
		t.Errorf("a replay of %d frames allocates %.0f times, of %d frames %.0f times: it allocates per frame",
			2*len(base), short, 20*len(base), long)
	}
}
