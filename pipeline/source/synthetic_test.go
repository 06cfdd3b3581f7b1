package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// portAt34 is the flow field of an untagged IPv4 frame without options: its
// transport source port.
func portAt34([]byte) int { return 34 }

// TestSyntheticFrames checks the templates' order, the flows written into
// them, the split of Count over the queues and the virtual stamps.
func TestSyntheticFrames(t *testing.T) {
	a := dissect.SampleFrame(dissect.ShapeEthIP) // TCP 1025 -> 80
	b := append(dissect.SampleFrame(dissect.ShapeEthIP), 0xee)
	src, err := NewSynthetic([][]byte{a, b}, SyntheticConfig{
		Queues: 2, Batch: 4, Flows: 10, FlowOffset: portAt34, Count: 101,
		Replay: Replay{Mode: ReplayRate, PPS: 2000}, // 1000 per queue: 1 ms apart
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := receiveAll(t, src, io.EOF)
	perQueue := [2]int{}
	for _, r := range got {
		k := perQueue[r.queue]
		perQueue[r.queue]++
		tpl := [][]byte{a, b}[k%2]
		if len(r.frame) != len(tpl) || !bytes.Equal(r.frame[:34], tpl[:34]) || !bytes.Equal(r.frame[36:], tpl[36:]) {
			t.Fatalf("queue %d frame %d is not template %d with a flow:\n% x", r.queue, k, k%2, r.frame)
		}
		// Queue q's flows are q, q+2, ..., below 10.
		flow := int(binary.BigEndian.Uint16(r.frame[34:])) - 1025
		if flow < 0 || flow >= 10 || flow%2 != r.queue {
			t.Errorf("queue %d frame %d: flow %d", r.queue, k, flow)
		}
		if r.arrival != int64(k)*int64(time.Millisecond) || r.wireLen != len(tpl) {
			t.Errorf("queue %d frame %d: arrival %d, wire %d", r.queue, k, r.arrival, r.wireLen)
		}
	}
	if perQueue != [2]int{51, 50} {
		t.Errorf("frames per queue %v, want [51 50]", perQueue)
	}
	if st := src.Queues()[0].Stats(); st.Frames != 51 || st.Bytes != 26*uint64(len(a))+25*uint64(len(b)) {
		t.Errorf("stats %+v", st)
	}
}

// TestSyntheticBuffers checks that the frames of one batch are distinct
// buffers: a receive loop may hold all of them until its next Receive.
func TestSyntheticBuffers(t *testing.T) {
	src, err := NewSynthetic([][]byte{dissect.SampleFrame(dissect.ShapeEthIP)}, SyntheticConfig{Batch: 8, Flows: 1000, FlowOffset: portAt34})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b := NewBatch(8)
	if err := src.Queues()[0].Receive(b); err != nil {
		t.Fatal(err)
	}
	ports := map[uint16]bool{}
	for _, f := range b.Frames {
		ports[binary.BigEndian.Uint16(f[34:])] = true
	}
	if len(ports) < 6 { // 8 draws from 1000 flows
		t.Errorf("8 frames of a batch carry %d flows: buffers shared?", len(ports))
	}
}

func TestSyntheticLivePace(t *testing.T) {
	src, err := NewSynthetic([][]byte{dissect.SampleFrame(dissect.ShapeEthIP)}, SyntheticConfig{
		Count: 2000, Replay: Replay{Mode: ReplayRate, PPS: 1e5}, Clock: WallClock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	start := time.Now()
	got := receiveAll(t, src, io.EOF)
	// The last batch starts at frame 1984: 19.84 ms.
	if d := time.Since(start); d < 19*time.Millisecond || len(got) != 2000 {
		t.Errorf("%d frames at 100 kpps took %s", len(got), d)
	}
}

// TestSyntheticPacedFrameByFrame: a live paced source hands out the frames
// due by the clock's time, not a whole batch at the first frame's time:
// at 1 pps, one frame at 0 s, two more by 2.5 s.
func TestSyntheticPacedFrameByFrame(t *testing.T) {
	var now atomic.Int64
	src, err := NewSynthetic([][]byte{dissect.SampleFrame(dissect.ShapeEthIP)}, SyntheticConfig{
		Replay: Replay{Mode: ReplayRate, PPS: 1}, Clock: now.Load,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	q := src.Queues()[0]
	b := NewBatch(64)
	for _, step := range []struct {
		at   int64
		want int
	}{{0, 1}, {2.5e9, 2}, {3e9, 1}} {
		now.Store(step.at)
		if err := q.Receive(b); err != nil {
			t.Fatal(err)
		}
		if b.Len() != step.want {
			t.Errorf("at %d ns: %d frames, want %d", step.at, b.Len(), step.want)
		}
	}
}

func TestSyntheticClose(t *testing.T) {
	// The clock tells when a Receive reads it: past its check for a closed
	// source, about to wait for the next batch.
	wall, read := WallClock(), make(chan struct{}, 1)
	clock := func() int64 {
		select {
		case read <- struct{}{}:
		default:
		}
		return wall()
	}
	src, err := NewSynthetic([][]byte{dissect.SampleFrame(dissect.ShapeVLAN)}, SyntheticConfig{Replay: Replay{Mode: ReplayRate, PPS: 1}, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	q := src.Queues()[0]
	b := NewBatch(64)
	if err := q.Receive(b); err != nil { // the first batch is due at once
		t.Fatal(err)
	}
	<-read
	done := make(chan error)
	go func() { done <- q.Receive(b) }() // waits 64 s for the next
	<-read
	src.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("receive ended with %v, want ErrClosed", err)
	}
}

func TestSyntheticZeroAllocs(t *testing.T) {
	frames, err := xdptest.Templates("default")
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSynthetic(frames, SyntheticConfig{FlowOffset: portAt34})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	q, b := src.Queues()[0], NewBatch(64)
	if n := testing.AllocsPerRun(100, func() { q.Receive(b) }); n != 0 {
		t.Errorf("%.1f allocations per Receive, want 0", n)
	}
}

// TestSyntheticSpread checks that TemplateQueues gives each template to one
// queue, and that a queue left without any is an error.
func TestSyntheticSpread(t *testing.T) {
	frames := make([][]byte, 6)
	for i := range frames {
		frames[i] = slices.Clone(dissect.SampleFrame(dissect.ShapeEthIP))
		frames[i][34] = byte(i) // the source port's high byte: which frame it is
	}
	byPort := make([]int, len(frames))
	for i, f := range frames {
		byPort[i] = int(f[34]) % 2
	}
	src, err := NewSynthetic(frames, SyntheticConfig{Queues: 2, Batch: 8, Count: 16, TemplateQueues: byPort, Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got := src.Info().Name; got != "synthetic:test" {
		t.Errorf("name %q", got)
	}
	for q, qs := range src.Queues() {
		b := NewBatch(8)
		if err := qs.Receive(b); err != nil {
			t.Fatal(err)
		}
		for _, f := range b.Frames {
			if int(f[34])%2 != q {
				t.Errorf("queue %d got frame %d", q, f[34])
			}
		}
	}
	if _, err := NewSynthetic(frames, SyntheticConfig{Queues: 3, TemplateQueues: byPort}); err == nil {
		t.Error("a queue without frames: no error")
	}
	if _, err := NewSynthetic(frames, SyntheticConfig{Queues: 2, TemplateQueues: []int{0, 1, 0, 1, 0, 5}}); err == nil {
		t.Error("a template past the queues: no error")
	}
	if _, err := NewSynthetic(frames, SyntheticConfig{Queues: 2, TemplateQueues: []int{0, 1}}); err == nil {
		t.Error("fewer template queues than templates: no error")
	}
}

func TestSyntheticErrors(t *testing.T) {
	f := dissect.SampleFrame(dissect.ShapeEthIP)
	for _, tt := range []struct {
		name   string
		frames [][]byte
		cfg    SyntheticConfig
	}{
		{"no frames", nil, SyntheticConfig{}},
		{"too many flows", [][]byte{f}, SyntheticConfig{Flows: 1 << 17}},
		{"recorded", [][]byte{f}, SyntheticConfig{Replay: Replay{Mode: ReplayRecorded}}},
		{"rate 0", [][]byte{f}, SyntheticConfig{Replay: Replay{Mode: ReplayRate}}},
		{"flow field past the end", [][]byte{f[:35]}, SyntheticConfig{FlowOffset: portAt34}},
	} {
		if _, err := NewSynthetic(tt.frames, tt.cfg); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}
