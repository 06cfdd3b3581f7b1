package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
)

// runCapture runs the engine over n synthetic frames with capture c, whose
// frames writer takes; it returns the frames the run received.
func runCapture(t *testing.T, n uint64, c *Capture, writer func()) uint64 {
	t.Helper()
	e, err := NewEngine(EngineConfig{
		Source:   syntheticSource(t, "default", source.SyntheticConfig{Count: n, Batch: 64}),
		Steering: hash.SteerConfig{Workers: 2, Key: testKey}, Virtual: true,
		Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour, Capture: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		writer()
	}()
	st, err := e.Run(context.Background())
	c.Close()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return st.Accounting.Received
}

// TestCaptureWait: with SetWait, a capture through one slot gets every one
// of its first frames however far its writer is behind; without, the
// frames that find the slot taken are missed.
func TestCaptureWait(t *testing.T) {
	const n, limit = 5000, 3000
	for _, wait := range []bool{true, false} {
		c := NewCapture(limit, 1, 2048)
		if wait {
			c.SetWait()
		}
		var written int
		received := runCapture(t, n, c, func() {
			for f := range c.Frames() {
				written++
				c.Release(f)
			}
		})
		switch {
		case received != n:
			t.Errorf("wait %v: received %d of %d frames", wait, received, n)
		case wait && (written != limit || c.Missed() != 0):
			t.Errorf("waiting: wrote %d, missed %d; want all %d, none missed", written, c.Missed(), limit)
		case !wait && uint64(written)+c.Missed() != limit:
			t.Errorf("not waiting: wrote %d + missed %d, want the %d first frames", written, c.Missed(), limit)
		}
	}
}

// TestCaptureStop: Stop ends a receive loop's wait for a slot, the frame
// counted as missed, and the run ends with every frame received.
func TestCaptureStop(t *testing.T) {
	const n = 500
	c := NewCapture(n, 1, 2048)
	c.SetWait()
	c.Stop() // the run has stopped: the writer, which holds the slot, is never waited for
	held := make(chan *CapturedFrame, 1)
	received := runCapture(t, n, c, func() {
		for f := range c.Frames() {
			held <- f // the one slot, never released
		}
	})
	if received != n || c.Missed() != n-1 || c.Waited() != n-1 {
		t.Errorf("received %d, missed %d, waited %d; want %d, %d, %d", received, c.Missed(), c.Waited(), n, n-1, n-1)
	}
}
