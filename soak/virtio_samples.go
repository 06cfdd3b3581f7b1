package soak

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
	"github.com/xdphash/xdphash/pipeline"
)

// virtioSamples is how many frames the guest's run writes (--write-count)
// for the hash and steering checks: its first ones, as received.
const virtioSamples = 2048

// readWrittenSamples reads the frames of a pcapng file from `xdphash run
// --write` as samples: each frame with its receive queue (the packet's
// epb_queue), and the hash, worker and metadata VLAN tag of its comment.
// A frame without xdphash's comment or queue is an error: the file is not
// one that run wrote.
func readWrittenSamples(b []byte) ([]pipeline.Sample, error) {
	r, err := pcapgo.NewNgReader(bytes.NewReader(b), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		return nil, fmt.Errorf("read the guest's frames: %w", err)
	}
	var out []pipeline.Sample
	for i := 0; ; i++ {
		data, ci, opts, err := r.ReadPacketDataWithOptions()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the guest's frame %d: %w", i, err)
		}
		var c capture.Comment
		found := false
		for _, text := range opts.Comments {
			if c, found, err = capture.ParseComment(text); found && err == nil {
				break
			}
		}
		if !found || err != nil || opts.Queue == nil {
			return nil, fmt.Errorf("read the guest's frame %d: no xdphash comment or queue (comments %q, err %v)", i, opts.Comments, err)
		}
		out = append(out, pipeline.Sample{
			Queue: int(*opts.Queue), Worker: c.Worker, Hash: c.Hash, Tag: c.Tag,
			Frame: data, Truncated: ci.CaptureLength < ci.Length,
		})
	}
}

// checkVirtioSamples is the hash and steering checks on the guest's
// written frames: the run hashed with --hash toeplitz and the device's key
// (the kernel's flow keys, as the steering does) and steered by the RPS map
// over its workers.
func checkVirtioSamples(frames []byte, key []byte, workers int) (hashCheck, steerCheck Check, sum SampleSummary) {
	fail := func(err error) (Check, Check, SampleSummary) {
		hashCheck = Check{Name: "hash: sampled frames hash as the offline dissector says", Detail: err.Error()}
		steerCheck = Check{Name: "steering: sampled worker = RPS map of the sampled hash", Detail: err.Error()}
		return hashCheck, steerCheck, sum
	}
	samples, err := readWrittenSamples(frames)
	if err != nil {
		return fail(err)
	}
	steer, err := hash.NewSteering(hash.SteerConfig{Workers: workers, Hash: hash.KindToeplitz, RSSKey: key})
	if err != nil {
		return fail(fmt.Errorf("the device's key: %w", err))
	}
	return checkSampled(samples, uint64(len(samples)), workers, dissect.Descent{}, func(keys *dissect.FlowKeys) uint32 {
		h, _ := steer.Hash(keys)
		return h
	})
}

// guestMemory is a guest step's memory samples as the memory check reads
// them: elapsed from the first.
func guestMemory(ms []guest.MemSample) []MemPoint {
	points := make([]MemPoint, 0, len(ms))
	for _, m := range ms {
		points = append(points, MemPoint{ElapsedNs: int64(m.Uptime - ms[0].Uptime), HeapInuse: m.HeapInuse, Sys: m.Sys, Goroutines: m.Goroutines})
	}
	return points
}
