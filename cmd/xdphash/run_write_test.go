package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pipeline"
)

// TestFrameComment: the comment --write gives a captured frame reads back
// with what the receive loop found and the device's metadata, the
// metadata VLAN tag among them.
func TestFrameComment(t *testing.T) {
	for _, tag := range []dissect.VLANTag{{}, {TPID: 0x8100, TCI: 100}, {TPID: 0x88a8, TCI: 0xe123}} {
		f := &pipeline.CapturedFrame{Hash: 0x1a2b3c4d, Source: hash.SourceDevice, L4: true, Worker: 1, Tag: tag,
			Meta: kernel.XDPMetadata{Valid: true, Hash: 0x5ea39405, HashType: kernel.RSSL4}}
		fc := frameComment(f)
		text := fc.String()
		got, ok, err := capture.ParseComment(text)
		if err != nil || !ok {
			t.Fatalf("comment %q: %v, %v", text, ok, err)
		}
		want := capture.Comment{Hash: 0x1a2b3c4d, Source: hash.SourceDevice.String(), L4: true, Worker: 1, Path: f.Path.String(), Tag: tag,
			HasDeviceHash: true, DeviceHash: 0x5ea39405, DeviceHashType: kernel.RSSL4.String()}
		if got != want {
			t.Errorf("comment %q reads back %+v, want %+v", text, got, want)
		}
	}
}

// TestRunPcapMetadataTag: run --pcap reads the metadata VLAN tag that a
// frame's comment from xdphash run --write records, as dissect does: the
// replay's --write keeps the tag in each rewritten comment, and its hashes
// are dissect's of the same input.
func TestRunPcapMetadataTag(t *testing.T) {
	tag := dissect.VLANTag{TPID: 0x8100, TCI: 0x64}
	var frames [][]byte
	for _, f := range corpus.Bases() {
		if et := binary.BigEndian.Uint16(f.Data[12:]); et != 0x8100 && et != 0x88a8 {
			frames = append(frames, f.Data)
		}
	}
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.WriterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for i, data := range frames {
		f := capture.Frame{Data: data, Time: recordTime(i)}
		if i%2 == 0 {
			c := capture.Comment{Hash: 1, Source: "kernel", Path: "slow", Tag: tag}
			f.Comment = c.AppendTo(nil)
		}
		if err := w.Write(&f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	in := tempFile(t, "tagged.pcapng", buf.Bytes())
	out := filepath.Join(t.TempDir(), "replay.pcapng")
	if _, stderr, code := runXdphash(t, nil, "run", "--pcap", in, "--hash-key", kunitKey, "--write", out); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	recs := parseJSONL(t, func() string {
		stdout, stderr, code := runXdphash(t, nil, "dissect", "--format", "jsonl", "--hash-key", kunitKey, in)
		if code != exitOK {
			t.Fatalf("dissect: exit %d: %s", code, stderr)
		}
		return stdout
	}())
	r := openCaptureFile(t, out)
	for i := range frames {
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			t.Fatalf("replay frame %d: %v", i, err)
		}
		c, ok := capture.FrameComment(r)
		if !ok {
			t.Fatalf("replay frame %d: no comment of xdphash's", i)
		}
		want := dissect.VLANTag{}
		if i%2 == 0 {
			want = tag
		}
		if c.Tag != want {
			t.Errorf("replay frame %d: vlan_tag %v, want %v", i, c.Tag, want)
		}
		if got := fmt.Sprintf("%08x", c.Hash); i < len(recs) && got != recs[i].Hash {
			t.Errorf("frame %d: the replay hashes %s, dissect %s (metadata tag %q)", i, got, recs[i].Hash, recs[i].MetaVLANTag)
		}
	}
	if len(recs) != len(frames) {
		t.Errorf("dissect read %d frames, want %d", len(recs), len(frames))
	}
}

// TestDissectCaptureKey: a capture from run --write records the run's hash
// settings, and dissect, without --hash-key, hashes with its key: every
// frame's hash is the one its comment records, and the output says where
// the key came from. --hash-key overrides it.
func TestDissectCaptureKey(t *testing.T) {
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.WriterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bases := corpus.Bases()
	for i, f := range bases {
		if err := w.Write(&capture.Frame{Data: f.Data, Time: recordTime(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	in := tempFile(t, "in.pcapng", buf.Bytes())
	out := filepath.Join(t.TempDir(), "out.pcapng")
	if _, stderr, code := runXdphash(t, nil, "run", "--pcap", in, "--write", out); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	r := openCaptureFile(t, out)
	settings, ok, err := capture.ReadSettings(r)
	if !ok || err != nil || settings.Hash != "kernel" || len(settings.Key) != 32 || settings.Descend != capture.DescendNone {
		t.Fatalf("the capture's settings %+v, %v, %v; want hash kernel (a file's default), a key, descend none", settings, ok, err)
	}
	var comments []capture.Comment
	for {
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			break
		}
		c, ok := capture.FrameComment(r)
		if !ok {
			t.Fatalf("frame %d: no comment of xdphash's", len(comments))
		}
		comments = append(comments, c)
	}
	if len(comments) != len(bases) {
		t.Fatalf("the capture holds %d frames, want %d", len(comments), len(bases))
	}

	stdout, stderr, code := runXdphash(t, nil, "dissect", "--format", "jsonl", out)
	if code != exitOK {
		t.Fatalf("dissect: exit %d: %s", code, stderr)
	}
	if !bytes.Contains([]byte(stderr), []byte("hash_key="+settings.Key+" from=\"recorded in the capture\"")) {
		t.Errorf("dissect's log does not say it took the capture's key %s:\n%s", settings.Key, stderr)
	}
	recs := parseJSONL(t, stdout)
	if len(recs) != len(comments) {
		t.Fatalf("dissect read %d frames, want %d", len(recs), len(comments))
	}
	for i, c := range comments {
		if got := fmt.Sprintf("%08x", c.Hash); got != recs[i].Hash {
			t.Errorf("frame %d (%s): comment hash=%s, dissect %s", i, bases[i].Name, got, recs[i].Hash)
		}
	}

	stdout, _, code = runXdphash(t, nil, "dissect", "--hash-key", kunitKey, out)
	if want := "hash key " + kunitKey + " (--hash-key)"; code != exitOK || !bytes.Contains([]byte(stdout), []byte(want)) {
		t.Errorf("dissect --hash-key: exit %d, output lacks %q:\n%.300s", code, want, stdout)
	}
	// A capture without settings (written before they were recorded, or by
	// another tool) reads, hashed with a random key.
	stdout, stderr, code = runXdphash(t, nil, "dissect", in)
	if code != exitOK || !bytes.Contains([]byte(stdout), []byte(" (random), path slow")) {
		t.Errorf("dissect of a capture without settings: exit %d, output:\n%.300s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestRunWriteCount: a user who asks for --write-count N frames of a run
// faster than the writer gets N: the receive loops of a synthetic run wait
// for the writer rather than miss frames.
func TestRunWriteCount(t *testing.T) {
	const n = 10000
	out := filepath.Join(t.TempDir(), "out.pcapng")
	stdout, stderr, code := runXdphash(t, nil, "run", "--synthetic", "datacenter", "--count", "100000", "--write", out, "--write-count", strconv.Itoa(n))
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if want := fmt.Sprintf("wrote %d frames to %s", n, out); !strings.Contains(stdout, want) || strings.Contains(stdout, "missed") {
		t.Errorf("the run's summary does not say %q, or says frames were missed:\n%s", want, stdout)
	}
	r := openCaptureFile(t, out)
	frames := 0
	for ; ; frames++ {
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			break
		}
	}
	if frames != n {
		t.Errorf("the file holds %d frames, want %d", frames, n)
	}
	if _, _, code := runXdphash(t, nil, "run", "--synthetic", "datacenter", "--count", "10", "--write", out+"2", "--write-wait"); code != exitFailure {
		t.Errorf("--write-wait without --iface: exit %d, want a usage error", code)
	}
}

// TestDissectCaptureBeforeSettings: a capture that run --write wrote before
// it recorded its settings still reads: dissect hashes it with a random key,
// or with the run's key given as --hash-key, which gives each frame the hash
// its comment records.
func TestDissectCaptureBeforeSettings(t *testing.T) {
	const file, runKey = "../../capture/testdata/run-write-before-settings.pcapng", "000102030405060708090a0b0c0d0e0f"
	stdout, stderr, code := runXdphash(t, nil, "dissect", file)
	if code != exitOK || !strings.Contains(stdout, " (random), path slow") {
		t.Fatalf("dissect: exit %d, output:\n%.300s\nstderr:\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runXdphash(t, nil, "dissect", "--format", "jsonl", "--hash-key", runKey, file)
	if code != exitOK {
		t.Fatalf("dissect --hash-key: exit %d: %s", code, stderr)
	}
	recs := parseJSONL(t, stdout)
	r := openCaptureFile(t, file)
	for i := 0; ; i++ {
		if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
			if i != len(recs) || i == 0 {
				t.Errorf("%d frames, dissect read %d", i, len(recs))
			}
			break
		}
		c, ok := capture.FrameComment(r)
		if !ok || i >= len(recs) || fmt.Sprintf("%08x", c.Hash) != recs[i].Hash {
			t.Errorf("frame %d: comment %+v (%v), dissect %+v", i, c, ok, recs[min(i, len(recs)-1)])
		}
	}
}

// TestCaptureSettings: the settings --write records are the run's: the
// SipHash key of a kernel (or auto) run, the Toeplitz key of a toeplitz
// run (the default key when none was given), its symmetry, and no descent.
func TestCaptureSettings(t *testing.T) {
	key, err := hash.ParseKey(kunitKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		steer hash.SteerConfig
		want  capture.Settings
	}{
		{hash.SteerConfig{Hash: hash.KindAuto, Key: key}, capture.Settings{Hash: "auto", Key: kunitKey, Symmetry: "none", Descend: "none"}},
		{hash.SteerConfig{Hash: hash.KindToeplitz, Symmetry: hash.SymmetricXOR},
			capture.Settings{Hash: "toeplitz", RSSKey: fmt.Sprintf("%x", hash.DefaultRSSKey), Symmetry: hash.SymmetricXOR.String(), Descend: "none"}},
	} {
		got := captureSettings(&runSetup{steer: c.steer})
		if *got != c.want {
			t.Errorf("%v: settings %+v, want %+v", c.steer.Hash, *got, c.want)
		}
		if back, ok, err := capture.ParseSettings(got.String()); !ok || err != nil || back != c.want {
			t.Errorf("%v: %q reads back %+v, %v, %v", c.steer.Hash, got, back, ok, err)
		}
	}
}

// openCaptureFile opens the capture at path for reading, closed when the
// test ends.
func openCaptureFile(tb testing.TB, path string) capture.Reader {
	tb.Helper()
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { fh.Close() })
	r, err := capture.Open(fh)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
