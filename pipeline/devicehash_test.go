package pipeline

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline/source"
)

// metaSource is a source whose batches carry device metadata, as the AF_XDP
// source's do under the metadata program: a hash of type L4 from devHash,
// and a metadata VLAN tag on every other frame when tagged. With devType
// the hash's type is devType's, as a device declares what its hash took.
type metaSource struct {
	source.Source
	devHash func(frame []byte, tag dissect.VLANTag) uint32
	devType func(frame []byte) kernel.RSSHashType
	tagged  bool
}

type metaQueue struct {
	source.QueueSource
	s *metaSource
}

func (s *metaSource) Queues() []source.QueueSource {
	var qs []source.QueueSource
	for _, q := range s.Source.Queues() {
		qs = append(qs, &metaQueue{q, s})
	}
	return qs
}

func (q *metaQueue) Receive(b *source.Batch) error {
	err := q.QueueSource.Receive(b)
	for i, f := range b.Frames {
		m := kernel.XDPMetadata{Valid: true, HashType: kernel.RSSL4, VLANErr: kernel.KfuncErr(61)} // ENODATA
		var tag dissect.VLANTag
		if q.s.tagged && i%2 == 0 {
			m.VLANErr, m.VLANProto, m.VLANTCI = 0, 0x8100, 100
			tag = dissect.VLANTag{TPID: 0x8100, TCI: 100}
		}
		m.Hash = q.s.devHash(f, tag)
		if q.s.devType != nil {
			m.HashType = q.s.devType(f)
		}
		b.Meta = append(b.Meta, m)
	}
	return err
}

// metaEngine is an engine on an endless synthetic source with metadata, the
// hash of kind and, when check, the device-hash check.
func metaEngine(tb testing.TB, src *metaSource, kind hash.Kind, check bool) *Engine {
	tb.Helper()
	src.Source = syntheticSource(tb, "default", source.SyntheticConfig{})
	e, err := NewEngine(EngineConfig{
		Source: src, Steering: hash.SteerConfig{Workers: 2, Key: testKey, Hash: kind},
		Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour, CheckDeviceHash: check,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// drive runs one batch through e's first receive loop and empties the rings.
func drive(e *Engine) {
	r := e.recv[0]
	r.src.Receive(r.batch)
	r.process(r.batch)
	for _, w := range e.workers {
		w.rings[0].Release(w.rings[0].Len())
	}
}

// TestReceiveLoopMetadataAllocs: a receive loop with metadata (a VLAN tag
// on half the frames, the device hash taken or checked) allocates nothing
// per frame; the device hash here is a bijection of the kernel's, so the
// check finds no conflict (and keeps no sample).
func TestReceiveLoopMetadataAllocs(t *testing.T) {
	k := hash.NewKernel(hash.Key{9})
	var keys dissect.FlowKeys
	src := &metaSource{tagged: true, devHash: func(f []byte, tag dissect.VLANTag) uint32 {
		dissect.DissectFrameTagged(&keys, f, tag, dissect.DefaultFlags)
		h, _ := k.Hash(&keys)
		return h*2654435761 + 1
	}}
	for _, kind := range []hash.Kind{hash.KindAuto, hash.KindDevice, hash.KindKernel} {
		e := metaEngine(t, src, kind, kind != hash.KindDevice)
		drive(e)
		if a := testing.AllocsPerRun(100, func() { drive(e) }); a != 0 {
			t.Errorf("--hash %v: %.1f allocations per batch of %d, want 0", kind, a, e.recv[0].batch.Len())
		}
		st := e.Stats()
		if kind != hash.KindDevice && (st.DeviceHash.Checked == 0 || st.DeviceHash.Conflicts != 0) {
			t.Errorf("--hash %v: check %+v, want frames checked and no conflict", kind, *st.DeviceHash)
		}
		if want := map[hash.Kind]uint64{hash.KindAuto: st.HashSources.Device, hash.KindDevice: st.HashSources.Device, hash.KindKernel: st.HashSources.Kernel}[kind]; want != st.Accounting.Received || want == 0 {
			t.Errorf("--hash %v: hash sources %+v for %d frames", kind, st.HashSources, st.Accounting.Received)
		}
	}
}

// BenchmarkReceiveLoopHash is the receive loop's cost per frame (ns/op)
// with device metadata on every frame, taking the device's hash (device)
// or computing the kernel's (kernel): what the device hash saves. Under
// kernel/no-device-data every kfunc failed, as on veth's XDP frames: the
// metadata changes nothing, and the batch is hashed together.
func BenchmarkReceiveLoopHash(b *testing.B) {
	var n uint32
	src := &metaSource{devHash: func([]byte, dissect.VLANTag) uint32 { n++; return n * 2654435761 }}
	for _, kind := range []hash.Kind{hash.KindDevice, hash.KindKernel} {
		b.Run(kind.String(), func(b *testing.B) {
			benchmarkReceiveLoop(b, metaEngine(b, src, kind, false))
		})
	}
	b.Run("kernel/no-device-data", func(b *testing.B) {
		const enodata = kernel.KfuncErr(61)
		failed := kernel.XDPMetadata{Valid: true, HashErr: enodata, VLANErr: enodata, TimestampErr: enodata}
		src := &funcMetaSource{syntheticSource(b, "default", source.SyntheticConfig{}), func(int) kernel.XDPMetadata { return failed }}
		e, err := NewEngine(EngineConfig{
			Source: src, Steering: hash.SteerConfig{Workers: 2, Key: testKey},
			Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour,
		})
		if err != nil {
			b.Fatal(err)
		}
		benchmarkReceiveLoop(b, e)
	})
}

func benchmarkReceiveLoop(b *testing.B, e *Engine) {
	r := e.recv[0]
	b.ResetTimer()
	for i := 0; i < b.N; i += r.batch.Len() {
		drive(e)
	}
}

// TestCaptureAllocs: a receive loop that captures every frame, with a
// writer that gives the slots back, allocates nothing per frame, and the
// capture holds each frame as received with what the loop found.
func TestCaptureAllocs(t *testing.T) {
	src := &metaSource{tagged: true, devHash: func([]byte, dissect.VLANTag) uint32 { return 7 }}
	src.Source = syntheticSource(t, "default", source.SyntheticConfig{})
	c := NewCapture(1<<30, 8, 2048)
	e, err := NewEngine(EngineConfig{
		Source: src, Steering: hash.SteerConfig{Workers: 2, Key: testKey, Hash: hash.KindDevice},
		Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour, Capture: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan CapturedFrame, 1)
	released := make(chan struct{})
	go func() {
		defer close(released)
		for f := range c.Frames() {
			select {
			case got <- *f:
			default:
			}
			c.Release(f)
		}
	}()
	drive(e)
	first := <-got
	if a := testing.AllocsPerRun(100, func() { drive(e) }); a != 0 {
		t.Errorf("%.1f allocations per batch of %d with a capture, want 0", a, e.recv[0].batch.Len())
	}
	c.Close()
	<-released
	if first.Hash != 7 || first.Source != hash.SourceDevice || first.Tag != (dissect.VLANTag{TPID: 0x8100, TCI: 100}) || len(first.Data) != first.WireLen {
		t.Errorf("first captured frame %+v, want the device hash 7, the metadata tag and the whole frame", first)
	}
}

// TestDeviceArrival: frames the device stamped keep the device's spacing on
// the run's clock, never after their batch nor before the frame before.
func TestDeviceArrival(t *testing.T) {
	var d deviceState
	tests := []struct {
		name        string
		ts          uint64
		now, last   int64
		wantArrival int64
	}{
		{"first anchors at its batch", 1_000_000, 5000, 0, 5000},
		{"spacing kept", 1_000_700, 6000, 5000, 5700},
		{"a smaller delay moves the anchor", 1_002_000, 6500, 5700, 6500},
		{"never before the last", 1_001_000, 7000, 6500, 6500},
	}
	for _, tt := range tests {
		if got := d.arrival(tt.ts, tt.now, tt.last); got != tt.wantArrival {
			t.Errorf("%s: arrival(%d, %d, %d) = %d, want %d", tt.name, tt.ts, tt.now, tt.last, got, tt.wantArrival)
		}
	}
}
