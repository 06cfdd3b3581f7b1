package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline"
)

// Bounds of --write.
const (
	defaultWriteCount = 10000
	maxWriteCount     = 10_000_000
	// writeSlots frames of writeSnapLen bytes wait for the writer at most:
	// a jumbo frame fits.
	writeSlots   = 512
	writeSnapLen = 9216
)

// pcapngWriter writes a run's captured frames (pipeline.Capture) to a
// pcapng file on a goroutine of its own, the file checked before the run
// (pendingOutput) and renamed into place when the run ends.
type pcapngWriter struct {
	out     *pendingOutput
	capture *pipeline.Capture
	done    chan error
	written uint64
}

// startPcapngWriter writes the section and interface headers and starts
// the goroutine that writes c's frames, stamped start plus their arrival.
func startPcapngWriter(out *pendingOutput, c *pipeline.Capture, iface string, start time.Time) (*pcapngWriter, error) {
	intf := pcapgo.DefaultNgInterface
	intf.Name, intf.LinkType, intf.SnapLength = iface, layers.LinkTypeEthernet, uint32(c.SnapLen())
	opts := pcapgo.DefaultNgWriterOptions
	opts.SectionInfo.Application = "xdphash run"
	ng, err := pcapgo.NewNgWriterInterface(out.tmp, intf, opts)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", out.path, err)
	}
	w := &pcapngWriter{out: out, capture: c, done: make(chan error, 1)}
	go func() {
		var werr error
		var comment []byte
		var hashBytes [4]byte
		flags := &pcapgo.NgEpbFlags{Direction: pcapgo.NgEpbFlagDirectionInbound}
		for f := range c.Frames() {
			if werr == nil {
				comment = appendCaptureComment(comment[:0], f)
				queue := uint32(f.Queue)
				po := pcapgo.NgPacketOptions{Comments: []string{string(comment)}, Flags: flags, Queue: &queue}
				if f.Meta.HasHash() {
					binary.BigEndian.PutUint32(hashBytes[:], f.Meta.Hash)
					po.Hashes = []pcapgo.NgEpbHash{{Algorithm: epbHashAlgorithm(f.Meta.HashType), Hash: hashBytes[:]}}
				}
				ci := gopacket.CaptureInfo{Timestamp: start.Add(time.Duration(f.Arrival)), CaptureLength: len(f.Data), Length: f.WireLen}
				if werr = ng.WritePacketWithOptions(ci, f.Data, po); werr == nil {
					w.written++
				}
			}
			c.Release(f)
		}
		if werr == nil {
			werr = ng.Flush()
		}
		w.done <- werr
	}()
	return w, nil
}

// finish ends the capture (the engine has run) and waits for the writer,
// then renames the file into place; it returns the frames written.
func (w *pcapngWriter) finish() (uint64, error) {
	w.capture.Close()
	if err := <-w.done; err != nil {
		w.out.Abort()
		return w.written, fmt.Errorf("write %s: %w", w.out.path, err)
	}
	return w.written, w.out.Commit(nil)
}

// abort ends the capture and removes the file.
func (w *pcapngWriter) abort() {
	w.capture.Close()
	<-w.done
	w.out.Abort()
}

// epbHashAlgorithm is the epb_hash algorithm of a device hash: Toeplitz
// where the device says what it hashed as NICs do (an L3 type), and the
// generic first code (2s complement) otherwise: veth's hash is the kernel's
// SipHash, which pcapng has no code for.
func epbHashAlgorithm(t kernel.RSSHashType) pcapgo.NgEpbHashAlgorithm {
	if t&(kernel.RSSL3IPv4|kernel.RSSL3IPv6) != 0 {
		return pcapgo.NgEpbHashAlgorithmToeplitz
	}
	return pcapgo.NgEpbHashAlgorithm2sComplement
}

// captureCommentPrefix starts the comment xdphash run --write gives each
// frame:
//
//	xdphash hash=1a2b3c4d source=device l4=true worker=1 path=fast:eth_ip vlan_tag=0x8100:0x0064 device_hash=1a2b3c4d device_hash_type=l4 rx_timestamp=0
//
// vlan_tag= is empty when the frame came with no metadata VLAN tag;
// device_hash=, device_hash_type= and rx_timestamp= appear when the device
// gave them.
const captureCommentPrefix = "xdphash "

func appendCaptureComment(b []byte, f *pipeline.CapturedFrame) []byte {
	b = fmt.Appendf(b, "%shash=%08x source=%s l4=%t worker=%d path=%s vlan_tag=%s", captureCommentPrefix, f.Hash, f.Source, f.L4, f.Worker, f.Path, f.Tag)
	if f.Meta.HasHash() {
		b = fmt.Appendf(b, " device_hash=%08x device_hash_type=%s", f.Meta.Hash, f.Meta.HashType)
	}
	if f.Meta.HasTimestamp() {
		b = fmt.Appendf(b, " rx_timestamp=%d", f.Meta.Timestamp)
	}
	return b
}

// captureCommentTag reads the metadata VLAN tag back from a comment that
// appendCaptureComment wrote: ok is false for any other comment, and the
// tag is zero when the frame had none.
func captureCommentTag(comment string) (tag dissect.VLANTag, ok bool, err error) {
	if !strings.HasPrefix(comment, captureCommentPrefix) {
		return dissect.VLANTag{}, false, nil
	}
	for field := range strings.FieldsSeq(comment) {
		v, found := strings.CutPrefix(field, "vlan_tag=")
		if !found {
			continue
		}
		if v == "" {
			return dissect.VLANTag{}, true, nil
		}
		tag, err := dissect.ParseVLANTag(v)
		if err != nil {
			return dissect.VLANTag{}, false, fmt.Errorf("the frame's comment: %w", err)
		}
		return tag, true, nil
	}
	return dissect.VLANTag{}, false, errors.New("the frame's comment from xdphash run has no vlan_tag=")
}

// runWrite is --write: the capture, its file, and once the run starts its
// writer. Its methods do nothing on a nil runWrite (no --write).
type runWrite struct {
	out     *pendingOutput
	capture *pipeline.Capture
	w       *pcapngWriter
	ended   bool // finish or abort ran
}

// prepareWrite checks --write's file before the source opens.
func (o *runOptions) prepareWrite() (*runWrite, error) {
	if o.write == "" {
		return nil, nil
	}
	out, err := createOutput(o.write)
	if err != nil {
		return nil, fmt.Errorf("--write: %w", err)
	}
	return &runWrite{out: out, capture: pipeline.NewCapture(o.writeCount, writeSlots, writeSnapLen)}, nil
}

// engineCapture is the capture for the engine's configuration.
func (rw *runWrite) engineCapture() *pipeline.Capture {
	if rw == nil {
		return nil
	}
	return rw.capture
}

// start starts the writer, just before the run.
func (rw *runWrite) start(name string) error {
	if rw == nil {
		return nil
	}
	w, err := startPcapngWriter(rw.out, rw.capture, name, time.Now())
	if err != nil {
		return err
	}
	rw.w = w
	return nil
}

// abort removes the file, unless finish ran: for the run's error paths.
func (rw *runWrite) abort() {
	if rw == nil || rw.ended {
		return
	}
	rw.ended = true
	if rw.w != nil {
		rw.w.abort()
		return
	}
	rw.out.Abort()
}

// finish writes the rest of the file, renames it into place and says so on
// w; without a started writer it removes the file.
func (rw *runWrite) finish(w io.Writer) error {
	if rw == nil || rw.ended {
		return nil
	}
	rw.ended = true
	if rw.w == nil {
		rw.out.Abort()
		return nil
	}
	n, err := rw.w.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %d frames to %s", n, rw.out.path)
	if m := rw.capture.Missed(); m > 0 {
		fmt.Fprintf(w, " (%d of the first frames missed: the writer fell behind)", m)
	}
	fmt.Fprintln(w)
	return nil
}

// readTaggedFrame reads the next frame of capture and the metadata VLAN tag
// to dissect it with: the one its comment from xdphash run --write names
// (pcapng), def for a frame without such a comment.
func readTaggedFrame(capture interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}, def dissect.VLANTag) ([]byte, gopacket.CaptureInfo, dissect.VLANTag, error) {
	frame, info, err := capture.ZeroCopyReadPacketData()
	ng, ok := capture.(interface{ PacketComments() [][]byte })
	if err != nil || !ok {
		return frame, info, def, err
	}
	for _, c := range ng.PacketComments() {
		if !bytes.HasPrefix(c, []byte(captureCommentPrefix)) {
			continue
		}
		tag, ok, err := captureCommentTag(string(c))
		if err != nil {
			return frame, info, def, err
		}
		if ok {
			return frame, info, tag, nil
		}
	}
	return frame, info, def, nil
}
