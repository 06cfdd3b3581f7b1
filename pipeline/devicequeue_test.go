package pipeline

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
)

// TestDeviceQueueCheck runs frames with device hashes through a receive
// loop on queue 0 with --check-device-queue: a table that sends every hash
// to queue 0 finds every frame where it belongs; one that sends the odd
// hashes to queue 1 finds exactly the frames with an odd hash misplaced.
func TestDeviceQueueCheck(t *testing.T) {
	for _, tt := range []struct {
		name  string
		table []uint32
	}{
		{"all on queue 0", []uint32{0, 0, 0, 0}},
		{"odd hashes on queue 1", []uint32{0, 1, 0, 1, 0, 1, 0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var odd uint64
			src := &metaSource{devHash: func(frame []byte, _ dissect.VLANTag) uint32 {
				h := uint32(len(frame))*2654435761 + uint32(frame[len(frame)-1])
				odd += uint64(h & 1)
				return h
			}}
			src.Source = syntheticSource(t, "default", source.SyntheticConfig{})
			e, err := NewEngine(EngineConfig{
				Source: src, Steering: hash.SteerConfig{Workers: 2, Key: testKey, Hash: hash.KindKernel},
				Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour, CheckDeviceQueue: tt.table,
			})
			if err != nil {
				t.Fatal(err)
			}
			drive(e)
			if tt.table[1] == 0 {
				if a := testing.AllocsPerRun(20, func() { drive(e) }); a != 0 {
					t.Errorf("%.1f allocations per batch with the queue check, want 0", a)
				}
			} else {
				drive(e)
			}
			r := e.recv[0]
			r.publishDevice()
			st := e.Stats()
			q := st.DeviceQueue
			if q == nil {
				t.Fatal("no DeviceQueue in the stats")
			}
			frames := st.Queues[0].Stats.Frames
			wantMismatch := uint64(0)
			if tt.table[1] == 1 {
				wantMismatch = odd
			}
			if q.TableLen != len(tt.table) || q.Frames != frames || q.Checked != frames || q.Mismatches != wantMismatch || frames == 0 {
				t.Errorf("table %d, %d frames, %d checked, %d mismatches; want table %d, %d frames all checked, %d mismatches", q.TableLen, q.Frames, q.Checked, q.Mismatches, len(tt.table), frames, wantMismatch)
			}
			for _, s := range q.Samples {
				if s.Queue != 0 || s.Want != 1 || s.DeviceHash&1 != 1 {
					t.Errorf("sample %+v: want an odd hash on queue 0 that the table puts on 1", s)
				}
			}
			if wantMismatch > 0 && len(q.Samples) == 0 {
				t.Error("mismatches without a sample")
			}
		})
	}
}
