package pipeline

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
)

// stallReader hands out a capture, then closes drained and makes the next
// read wait for release: a pipe whose writer sent everything and keeps its
// end open.
type stallReader struct {
	data     []byte
	drained  chan struct{}
	release  chan struct{}
	drainOne sync.Once
}

func newStallReader(data []byte) *stallReader {
	return &stallReader{data: data, drained: make(chan struct{}), release: make(chan struct{})}
}

func (r *stallReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	r.drainOne.Do(func() { close(r.drained) })
	<-r.release
	return 0, io.EOF
}

// stopCapture is a capture of n corpus frames and its length.
func stopCapture(t *testing.T, n int) []byte {
	var frames [][]byte
	for len(frames) < n {
		frames = append(frames, spreadFrames()...)
	}
	return xdptest.WriteCapture(t, xdptest.CapturePcap, layers.LinkTypeEthernet, xdptest.CaptureRecords(frames[:n], time.Microsecond)...)
}

// openStalledPcap is a live pcap source over queues queues, in batches of
// 8, that drops on a full queue (DropBehind: it reads the whole stream
// however little is received), reading n corpus frames from a stream that
// then waits; the stream is let go and the source closed when the test
// ends.
func openStalledPcap(t *testing.T, n, queues int) (*stallReader, source.Source) {
	t.Helper()
	r := newStallReader(stopCapture(t, n))
	t.Cleanup(func() { close(r.release) })
	src, err := NewPcap(r, "stream", source.PcapConfig{Batch: 8, Clock: source.WallClock(), DropBehind: true}, RSSConfig{Queues: queues})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return r, src
}

// TestPcapStopAccountsEveryFrame reads a capture from a stream that then
// waits, into queues whose receive loop takes one batch: when the source is
// closed, every frame read is handed out, dropped on a full queue, or
// counted as unreceived (the ready batches no loop took).
func TestPcapStopAccountsEveryFrame(t *testing.T) {
	const n = 300
	for _, queues := range []int{1, 2} {
		t.Run(fmt.Sprintf("queues=%d", queues), func(t *testing.T) {
			r, src := openStalledPcap(t, n, queues)
			<-r.drained // every frame was read, and the partly filled batches handed out
			if err := src.Queues()[0].Receive(source.NewBatch(8)); err != nil {
				t.Fatal(err)
			}
			if err := src.Close(); err != nil {
				t.Fatal(err)
			}
			var sum, received, unreceived uint64
			for _, q := range src.Queues() {
				st := q.Stats()
				sum += st.Frames + st.LostBeforeLoop()
				received, unreceived = received+st.Frames, unreceived+st.Unreceived
			}
			if received == 0 || unreceived == 0 || sum != n {
				t.Errorf("received %d, unreceived %d, all counted %d; want some of each, adding up to the %d frames read", received, unreceived, sum, n)
			}
		})
	}
}

// TestRunPcapStopAccounting stops a live run mid-stream (the capture's
// writer has sent every frame and waits): the run's accounting counts every
// frame read, as received or as a drop before the receive loop.
func TestRunPcapStopAccounting(t *testing.T) {
	const n = 300
	for _, queues := range []int{1, 2} {
		t.Run(fmt.Sprintf("queues=%d", queues), func(t *testing.T) {
			r, src := openStalledPcap(t, n, queues)
			e, err := NewEngine(EngineConfig{
				Source:   src,
				Steering: hash.SteerConfig{Workers: 2, Key: testKey},
				Flags:    dissect.DefaultFlags,
				Gates:    dissect.AllGates,
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-r.drained
				cancel()
			}()
			st, err := e.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a := st.Accounting
			var before uint64
			for _, d := range a.ReplayDrops {
				before += d
			}
			for _, d := range a.KernelDrops {
				if d != 0 {
					t.Errorf("a replay's drops counted as the kernel's: %v", a.KernelDrops)
				}
			}
			if a.Received+before != n || !a.Balanced {
				t.Errorf("received %d + drops before the receive loops %v = %d; want the %d frames read, balanced", a.Received, a.ReplayDrops, a.Received+before, n)
			}
		})
	}
}
