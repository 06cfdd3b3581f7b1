package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/xdphash/xdphash/dissect"
)

// TestWriterReadBack writes frames with every option and reads them back
// with this package's reader (data, lengths, times, the comment and the
// metadata tag it records) and with pcapgo's (epb_queue, epb_hash,
// epb_flags).
func TestWriterReadBack(t *testing.T) {
	t0 := time.Unix(1700000000, 123456789).UTC()
	frames := []Frame{
		{Data: testFrame(0), Time: t0, HasQueue: true, Queue: 3, Inbound: true, HasHash: true, Hash: 0x01020304, HashAlgorithm: HashToeplitz,
			Comment: (&Comment{Hash: 7, Source: "device", Path: "slow", Tag: dissect.VLANTag{TPID: 0x8100, TCI: 5}}).AppendTo(nil)},
		{Data: testFrame(1)[:40], WireLen: 60, Time: t0.Add(time.Microsecond), HasHash: true, Hash: 0xa0b0c0d0},
		{Data: testFrame(2), Time: t0.Add(time.Second)},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterConfig{Iface: "veth0", SnapLen: 9216, Application: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		if err := w.Write(&frames[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	r, err := OpenEthernet(bytes.NewReader(buf.Bytes()), "test.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	def := dissect.VLANTag{TPID: 0x88a8, TCI: 1}
	for i, f := range frames {
		data, ci, tag, err := ReadTagged(r, def)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		wantTag := def
		if i == 0 {
			wantTag = dissect.VLANTag{TPID: 0x8100, TCI: 5}
		}
		if !bytes.Equal(data, f.Data) || ci.Length != max(f.WireLen, len(f.Data)) || !ci.Timestamp.Equal(f.Time) || tag != wantTag {
			t.Errorf("frame %d: % x %+v tag %v; want % x, tag %v", i, data, ci, tag, f.Data, wantTag)
		}
	}
	if _, _, _, err := ReadTagged(r, def); !errors.Is(err, io.EOF) {
		t.Errorf("after the last frame: %v, want io.EOF", err)
	}

	ng, err := pcapgo.NewNgReader(bytes.NewReader(buf.Bytes()), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		_, _, opts, err := ng.ReadPacketDataWithOptions()
		if err != nil {
			t.Fatalf("pcapgo, frame %d: %v", i, err)
		}
		if got := opts.Queue != nil; got != f.HasQueue || got && *opts.Queue != uint32(f.Queue) {
			t.Errorf("frame %d: epb_queue %v, want %v %d", i, opts.Queue, f.HasQueue, f.Queue)
		}
		if got := opts.Flags != nil && opts.Flags.Direction == pcapgo.NgEpbFlagDirectionInbound; got != f.Inbound {
			t.Errorf("frame %d: epb_flags %+v, want inbound %v", i, opts.Flags, f.Inbound)
		}
		wantAlg := pcapgo.NgEpbHashAlgorithm2sComplement
		if f.HashAlgorithm == HashToeplitz {
			wantAlg = pcapgo.NgEpbHashAlgorithmToeplitz
		}
		switch {
		case !f.HasHash && len(opts.Hashes) != 0:
			t.Errorf("frame %d: epb_hash %+v, want none", i, opts.Hashes)
		case f.HasHash && (len(opts.Hashes) != 1 || opts.Hashes[0].Algorithm != wantAlg || len(opts.Hashes[0].Hash) != 4 ||
			binary.BigEndian.Uint32(opts.Hashes[0].Hash) != f.Hash):
			t.Errorf("frame %d: epb_hash %+v, want %v %08x", i, opts.Hashes, wantAlg, f.Hash)
		}
		if want := len(f.Comment) > 0; want != (len(opts.Comments) == 1) || want && opts.Comments[0] != string(f.Comment) {
			t.Errorf("frame %d: comments %q, want %q", i, opts.Comments, f.Comment)
		}
	}
}
