package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
)

// benchCaptureFrames is the length of BenchmarkPipelinePcap's capture,
// replayed as often as b.N needs.
const benchCaptureFrames = 1 << 19

// benchCapture is a pcap of benchCaptureFrames frames of the default
// templates, 1 µs apart, over 1024 flows per template.
func benchCapture(b *testing.B) []byte {
	tpls, err := xdptest.Templates("default")
	if err != nil {
		b.Fatal(err)
	}
	frames := make([][]byte, benchCaptureFrames)
	for i := range frames {
		t := tpls[i%len(tpls)]
		f := slices.Clone(t)
		if off := xdptest.FlowPortOffset(f); off >= 0 {
			binary.BigEndian.PutUint16(f[off:], binary.BigEndian.Uint16(t[off:])+uint16(i/len(tpls)%1024))
		}
		frames[i] = f
	}
	return xdptest.WriteCapture(b, xdptest.CapturePcapNanos, layers.LinkTypeEthernet, xdptest.CaptureRecords(frames, time.Microsecond)...)
}

// BenchmarkPipelinePcap is BenchmarkPipeline on a capture replayed on the
// virtual clock, on one queue or spread over two by the RSS stage: what
// reading, copying and (with two queues) spreading cost the pipeline.
func BenchmarkPipelinePcap(b *testing.B) {
	file := benchCapture(b)
	for _, queues := range []int{1, 2} {
		b.Run(fmt.Sprintf("queues=%d", queues), func(b *testing.B) {
			var processed uint64
			var elapsed time.Duration
			for done := 0; done < b.N; done += benchCaptureFrames {
				src, err := NewPcap(bytes.NewReader(file), "bench.pcap", source.PcapConfig{}, RSSConfig{Queues: queues})
				if err != nil {
					b.Fatal(err)
				}
				e, err := NewEngine(EngineConfig{
					Source:   src,
					Steering: hash.SteerConfig{Workers: 2, Key: testKey},
					Flags:    dissect.DefaultFlags,
					Gates:    dissect.AllGates,
					Virtual:  true,
				})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				st, err := e.Run(context.Background())
				elapsed += time.Since(start)
				src.Close()
				if err != nil {
					b.Fatal(err)
				}
				processed += st.Accounting.Processed
			}
			b.ReportMetric(float64(processed)/elapsed.Seconds()/1e6, "Mpps")
		})
	}
}
