package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline"
)

// Bounds of --write.
const (
	defaultWriteCount = 10000
	maxWriteCount     = 10_000_000
	// writeSlots frames of writeSnapLen bytes wait for the writer at most
	// in a file or synthetic run, whose receive loops wait for the writer
	// when they are taken: a jumbo frame fits.
	writeSlots   = 512
	writeSnapLen = 9216
	// An AF_XDP run's receive loops do not wait for the writer unless
	// --write-wait asks (the kernel would drop meanwhile): up to
	// writeMemory bytes of slots of afxdpWriteSnapLen() hold the frames
	// the writer has not written yet, so that as many as fit are written
	// whatever the writer's pace.
	writeMemory = 64 << 20
)

// afxdpWriteSnapLen is the slot size of an AF_XDP run's --write: no AF_XDP
// frame is longer than its UMEM frame, at most a page.
func afxdpWriteSnapLen() int { return min(os.Getpagesize(), pipeline.MaxCaptureSnapLen) }

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
func startPcapngWriter(out *pendingOutput, c *pipeline.Capture, iface string, settings *capture.Settings, start time.Time) (*pcapngWriter, error) {
	cw, err := capture.NewWriter(out.tmp, capture.WriterConfig{Iface: iface, SnapLen: c.SnapLen(), Application: "xdphash run", Settings: settings})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", out.path, err)
	}
	w := &pcapngWriter{out: out, capture: c, done: make(chan error, 1)}
	go func() {
		var (
			werr    error
			comment []byte
		)
		for f := range c.Frames() {
			if werr == nil {
				fc := frameComment(f)
				comment = fc.AppendTo(comment[:0])
				cf := capture.Frame{
					Data: f.Data, WireLen: f.WireLen, Time: start.Add(time.Duration(f.Arrival)),
					HasQueue: true, Queue: f.Queue, Inbound: true, Comment: comment,
				}
				if f.Meta.HasHash() {
					cf.HasHash, cf.Hash, cf.HashAlgorithm = true, f.Meta.Hash, epbHashAlgorithm(f.Meta.HashType)
				}
				if werr = cw.Write(&cf); werr == nil {
					w.written++
				}
			}
			c.Release(f)
		}
		if werr == nil {
			werr = cw.Flush()
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
func epbHashAlgorithm(t kernel.RSSHashType) capture.HashAlgorithm {
	if t&(kernel.RSSL3IPv4|kernel.RSSL3IPv6) != 0 {
		return capture.HashToeplitz
	}
	return capture.HashTwosComplement
}

// frameComment is the comment (capture.Comment) that --write gives a frame:
// what the receive loop found for it and the device's metadata.
func frameComment(f *pipeline.CapturedFrame) capture.Comment {
	c := capture.Comment{Hash: f.Hash, Source: f.Source.String(), L4: f.L4, Worker: f.Worker, Path: f.Path.String(), Tag: f.Tag}
	if f.Meta.HasHash() {
		c.HasDeviceHash, c.DeviceHash, c.DeviceHashType = true, f.Meta.Hash, f.Meta.HashType.String()
	}
	if f.Meta.HasTimestamp() {
		c.HasRxTimestamp, c.RxTimestamp = true, f.Meta.Timestamp
	}
	return c
}

// captureSettings is what the capture's section comment records of the
// run's setup (capture.Settings): the hash that the frames' comments give,
// for dissect and verify to hash with by default.
func captureSettings(s *runSetup) *capture.Settings {
	cs := &capture.Settings{Hash: s.steer.Hash.String(), Symmetry: s.steer.Symmetry.String(), Descend: capture.DescendNone}
	if s.steer.Hash == hash.KindToeplitz {
		key := s.steer.RSSKey
		if key == nil {
			key = hash.DefaultRSSKey[:]
		}
		cs.RSSKey = hex.EncodeToString(key)
	} else {
		cs.Key = s.steer.Key.String()
	}
	return cs
}

// runWrite is --write: the capture, its file, and once the run starts its
// writer. Its methods do nothing on a nil runWrite (no --write).
type runWrite struct {
	out      *pendingOutput
	capture  *pipeline.Capture
	settings *capture.Settings
	w        *pcapngWriter
	ended    bool // finish or abort ran
	stopWait func() bool
}

// prepareWrite checks --write's file before the source opens, and sizes
// the capture so that --write-count frames are written: a file's or
// synthetic run's receive loops wait for the writer (the replay waits for
// them in turn, and synthetic frames are made on demand: nothing is lost);
// an AF_XDP run's keep the frames in slots enough for them all, within
// writeMemory, or wait with --write-wait. Where neither holds, it says so
// on log before the run: the count cannot be promised.
func (o *runOptions) prepareWrite(s *runSetup, log *slog.Logger) (*runWrite, error) {
	if o.write == "" {
		return nil, nil
	}
	out, err := createOutput(o.write)
	if err != nil {
		return nil, fmt.Errorf("--write: %w", err)
	}
	var c *pipeline.Capture
	switch {
	case o.iface == "":
		c = pipeline.NewCapture(o.writeCount, writeSlots, writeSnapLen)
		c.SetWait()
	default:
		snap := afxdpWriteSnapLen()
		c = pipeline.NewCapture(o.writeCount, min(o.writeCount, writeMemory/snap), snap)
		if o.writeWait {
			c.SetWait()
		} else if c.Slots() < o.writeCount {
			log.Warn(fmt.Sprintf("--write-count %d may not all be written: the receive loops do not wait for the writer, and %d frames (%d MiB) can wait for it; past that, frames the writer is behind on are missed (counted). --write-wait makes the receive loops wait instead, while the kernel drops on the full RX ring (rx_ring_full)",
				o.writeCount, c.Slots(), writeMemory>>20))
		}
	}
	return &runWrite{out: out, capture: c, settings: captureSettings(s)}, nil
}

// engineCapture is the capture for the engine's configuration.
func (rw *runWrite) engineCapture() *pipeline.Capture {
	if rw == nil {
		return nil
	}
	return rw.capture
}

// start starts the writer, just before the run; when ctx is done (the
// run's stop), the receive loops wait for it no longer.
func (rw *runWrite) start(ctx context.Context, name string) error {
	if rw == nil {
		return nil
	}
	w, err := startPcapngWriter(rw.out, rw.capture, name, rw.settings, time.Now())
	if err != nil {
		return err
	}
	rw.w = w
	rw.stopWait = context.AfterFunc(ctx, rw.capture.Stop)
	return nil
}

// abort removes the file, unless finish ran: for the run's error paths.
func (rw *runWrite) abort() {
	if rw == nil || rw.ended {
		return
	}
	rw.ended = true
	if rw.w != nil {
		rw.stopWait()
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
	rw.stopWait()
	n, err := rw.w.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %d frames to %s", n, rw.out.path)
	c := rw.capture
	switch m := c.Missed(); {
	case m > 0 && c.Waiting():
		fmt.Fprintf(w, " (%d of the first frames missed: the run stopped while the receive loops waited for the writer)", m)
	case m > 0:
		fmt.Fprintf(w, " (%d of the first frames missed: the writer fell behind and the %d frames that can wait for it were taken; --write-wait makes the receive loops wait)", m, c.Slots())
	}
	if n := c.Waited(); n > 0 {
		fmt.Fprintf(w, "; the receive loops waited for the writer %d times, which the run's rates include", n)
	}
	fmt.Fprintln(w)
	return nil
}
