package pipeline

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
)

// TestReceiveLoopBatchHash: the receive loop, which dissects a batch and
// then hashes its keys together, writes for each frame the record that
// dissecting and hashing the frame on its own gives (keys, hash, l4, path,
// hash source), to the worker that hash steers it to, in order, for the
// kernel's hash and Toeplitz.
func TestReceiveLoopBatchHash(t *testing.T) {
	for _, kind := range []hash.Kind{hash.KindKernel, hash.KindToeplitz} {
		t.Run(kind.String(), func(t *testing.T) {
			e, err := NewEngine(EngineConfig{
				Source:   syntheticSource(t, "default", source.SyntheticConfig{}),
				Steering: hash.SteerConfig{Workers: 3, Key: testKey, Hash: kind},
				Flags:    dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour,
			})
			if err != nil {
				t.Fatal(err)
			}
			r := e.recv[0]
			d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
			for range 3 {
				if err := r.src.Receive(r.batch); err != nil {
					t.Fatal(err)
				}
				if r.batch.Len() < 5 {
					t.Fatalf("the source gave a batch of %d frames, want a full one", r.batch.Len())
				}
				want := make([][]queues.Record, len(e.workers))
				for _, frame := range r.batch.Frames {
					var keys dissect.FlowKeys
					_, path := d.DissectFrame(&keys, frame)
					var rec queues.Record
					rec.FromKeys(&keys)
					rec.Hash, rec.L4 = e.steer.Hash(&keys)
					rec.Path, rec.HashSource = path, e.steer.Own()
					w := e.steer.Worker(rec.Hash, r.queue)
					want[w] = append(want[w], rec)
				}
				r.process(r.batch)
				takeRecords(t, e, want)
			}
		})
	}
}

// takeRecords checks that the ring from the first receive loop to each
// worker w holds want[w], in order (Len, Arrival and Queue aside), and
// empties it.
func takeRecords(t *testing.T, e *Engine, want [][]queues.Record) {
	t.Helper()
	for w, wk := range e.workers {
		first, second := wk.rings[0].Peek()
		got := append(append([]queues.Record(nil), first...), second...)
		if len(got) != len(want[w]) {
			t.Fatalf("worker %d got %d records, want %d", w, len(got), len(want[w]))
		}
		for i := range got {
			g, x := got[i], want[w][i]
			x.Len, x.Arrival, x.Queue = g.Len, g.Arrival, g.Queue
			if g != x {
				t.Fatalf("worker %d record %d:\n got %+v\nwant %+v", w, i, g, x)
			}
		}
		wk.rings[0].Release(len(got))
	}
}

// funcMetaSource hands each batch's frame i the metadata meta(i), as the
// AF_XDP source does under the metadata program.
type funcMetaSource struct {
	source.Source
	meta func(i int) kernel.XDPMetadata
}

type funcMetaQueue struct {
	source.QueueSource
	meta func(i int) kernel.XDPMetadata
}

func (s *funcMetaSource) Queues() []source.QueueSource {
	var qs []source.QueueSource
	for _, q := range s.Source.Queues() {
		qs = append(qs, &funcMetaQueue{q, s.meta})
	}
	return qs
}

func (q *funcMetaQueue) Receive(b *source.Batch) error {
	err := q.QueueSource.Receive(b)
	for i := range b.Frames {
		b.Meta = append(b.Meta, q.meta(i))
	}
	return err
}

// TestReceiveLoopMetadataBatch: whatever the device metadata says, the
// receive loop writes for each frame the record that the metadata path
// gives it alone (dissected with its VLAN tag, hashed by HashDevice), to the
// worker that hash steers it to, and counts the hash sources alike. A batch
// whose metadata changes nothing (no record, every kfunc failed, a device
// hash the steering does not take) is hashed together; one VLAN tag or one
// device hash taken sends the batch down the per-frame path: taking the
// wrong one changes a record here.
func TestReceiveLoopMetadataBatch(t *testing.T) {
	const enodata = kernel.KfuncErr(61)
	failed := kernel.XDPMetadata{Valid: true, HashErr: enodata, VLANErr: enodata, TimestampErr: enodata}
	withHash := func(typ kernel.RSSHashType) kernel.XDPMetadata {
		return kernel.XDPMetadata{Valid: true, Hash: 0x5eed1234, HashType: typ, VLANErr: enodata, TimestampErr: enodata}
	}
	tagged := failed
	tagged.VLANErr, tagged.VLANProto, tagged.VLANTCI = 0, 0x8100, 100
	for _, tc := range []struct {
		name string
		kind hash.Kind
		meta func(i int) kernel.XDPMetadata
	}{
		{"no record", hash.KindKernel, func(int) kernel.XDPMetadata { return kernel.XDPMetadata{} }},
		{"every kfunc failed", hash.KindAuto, func(int) kernel.XDPMetadata { return failed }},
		{"an L3 device hash under auto", hash.KindAuto, func(int) kernel.XDPMetadata { return withHash(kernel.RSSL3IPv4) }},
		{"an L4 device hash under kernel", hash.KindKernel, func(int) kernel.XDPMetadata { return withHash(kernel.RSSL4) }},
		{"an L4 device hash under toeplitz", hash.KindToeplitz, func(int) kernel.XDPMetadata { return withHash(kernel.RSSL4) }},
		{"one L4 device hash under auto", hash.KindAuto, func(i int) kernel.XDPMetadata {
			if i == 3 {
				return withHash(kernel.RSSL4TCP | kernel.RSSL4)
			}
			return failed
		}},
		{"one VLAN tag", hash.KindKernel, func(i int) kernel.XDPMetadata {
			if i == 5 {
				return tagged
			}
			return failed
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEngine(EngineConfig{
				Source:   &funcMetaSource{syntheticSource(t, "default", source.SyntheticConfig{}), tc.meta},
				Steering: hash.SteerConfig{Workers: 3, Key: testKey, Hash: tc.kind},
				Flags:    dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour,
			})
			if err != nil {
				t.Fatal(err)
			}
			r := e.recv[0]
			d := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
			var sources [hash.NumSources]uint64
			for range 3 {
				if err := r.src.Receive(r.batch); err != nil {
					t.Fatal(err)
				}
				if r.batch.Len() < 6 {
					t.Fatalf("the source gave a batch of %d frames, want a full one", r.batch.Len())
				}
				want := make([][]queues.Record, len(e.workers))
				for i, frame := range r.batch.Frames {
					m := r.batch.Meta[i]
					var tag dissect.VLANTag
					if m.HasVLAN() {
						tag = dissect.VLANTag{TPID: m.VLANProto, TCI: m.VLANTCI}
					}
					var keys dissect.FlowKeys
					_, path := d.DissectFrameTagged(&keys, frame, tag)
					var rec queues.Record
					rec.FromKeys(&keys)
					rec.Hash, rec.L4, rec.HashSource = e.steer.HashDevice(&keys, m.Hash, m.HashType.IsL4(), m.HasHash())
					rec.Path = path
					sources[rec.HashSource]++
					w := e.steer.Worker(rec.Hash, r.queue)
					want[w] = append(want[w], rec)
				}
				r.process(r.batch)
				takeRecords(t, e, want)
			}
			if r.dev.sources != sources {
				t.Errorf("hash sources %v, want %v", r.dev.sources, sources)
			}
		})
	}
}
