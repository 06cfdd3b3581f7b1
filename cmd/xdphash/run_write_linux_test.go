//go:build linux

package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// requireTshark returns tshark's path; without it the test skips, or fails
// under CI=true (CI installs it).
func requireTshark(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		xdptest.Unavailable(tb, "tshark not found (apt-get install tshark): %v", err)
	}
	return p
}

// TestRunWritePcapng writes the frames of a run with hardware VLAN tags on
// every other frame to pcapng and reads them back: tshark finds the queue
// and xdphash's comment on every frame, each frame carries the device hash
// (epb_hash), and xdphash dissect, which takes the metadata VLAN tag back
// from the comment, computes the hash the run wrote for each frame.
func TestRunWritePcapng(t *testing.T) {
	tshark := requireTshark(t)
	var frames [][]byte
	for _, f := range corpus.Bases() {
		if et := binary.BigEndian.Uint16(f.Data[12:]); et != 0x8100 && et != 0x88a8 {
			frames = append(frames, f.Data)
		}
	}
	d := newDeviceLab(t, true)
	file := filepath.Join(t.TempDir(), "run.pcapng")
	st, stdout, code, sent := d.runWhileSending(t, frames, "--hash", "kernel", "--check-device-hash", "--write", file, "--write-count", "100000")
	if code != exitOK || st.Accounting.Received != uint64(sent) {
		t.Fatalf("exit %d, %d received of %d sent; stdout:\n%s", code, st.Accounting.Received, sent, stdout)
	}

	// capinfos, of tshark's package, shows the section comment with the
	// run's settings.
	if ci, err := exec.Command(filepath.Join(filepath.Dir(tshark), "capinfos"), "-k", file).Output(); err != nil ||
		!strings.Contains(string(ci), "xdphash-settings hash=kernel hash_key="+kunitKey) {
		t.Errorf("capinfos -k: %v, output lacks the settings:\n%s", err, ci)
	}

	out, err := exec.Command(tshark, "-r", file, "-T", "fields", "-e", "frame.interface_queue", "-e", "frame.packet_flags_direction", "-e", "frame.comment").Output() // stderr: the warning about running as root
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	tagged := 0
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[0] != "0" || f[1] != "0x00000001" || !strings.HasPrefix(f[2], capture.CommentPrefix) {
			t.Fatalf("tshark line %q: want queue 0, direction inbound (0x00000001) and xdphash's comment", l)
		}
		if strings.Contains(f[2], fmt.Sprintf("vlan_tag=0x8100:0x%04x", deviceTCI)) {
			tagged++
		}
	}
	if len(lines) != sent || tagged != sent/2 {
		t.Errorf("tshark read %d frames, %d with the metadata tag; want %d, %d", len(lines), tagged, sent, sent/2)
	}

	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	ng, err := pcapgo.NewNgReader(fh, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	var hashes []string // the run's hash of each frame, from the comment
	for {
		_, _, opts, err := ng.ReadPacketDataWithOptions()
		if err != nil {
			break
		}
		if len(opts.Hashes) != 1 || len(opts.Hashes[0].Hash) != 4 || opts.Queue == nil || len(opts.Comments) != 1 {
			t.Fatalf("frame %d: options %+v, want a 4-byte device hash, a queue and a comment", len(hashes), opts)
		}
		c, ok, err := capture.ParseComment(opts.Comments[0])
		if !ok || err != nil {
			t.Fatalf("frame %d: comment %q: %v, %v", len(hashes), opts.Comments[0], ok, err)
		}
		hashes = append(hashes, fmt.Sprintf("%08x", c.Hash))
	}
	recs := parseJSONL(t, func() string {
		// No --hash-key: the capture records the run's.
		stdout, stderr, code := runXdphash(t, nil, "dissect", "--format", "jsonl", file)
		if code != exitOK || !strings.Contains(stderr, "hash_key="+kunitKey+` from="recorded in the capture"`) {
			t.Fatalf("dissect: exit %d, does not say it hashed with the capture's key %s: %s", code, kunitKey, stderr)
		}
		return stdout
	}())
	if len(recs) != len(hashes) {
		t.Fatalf("dissect read %d frames, the file holds %d", len(recs), len(hashes))
	}
	tagged = 0
	for i, r := range recs {
		if r.Hash != hashes[i] {
			t.Errorf("frame %d: dissect hashes %s (metadata tag %q), the run wrote %s", i, r.Hash, r.MetaVLANTag, hashes[i])
		}
		if r.MetaVLANTag != "" {
			tagged++
		}
	}
	if tagged != sent/2 {
		t.Errorf("dissect read the metadata tag back on %d frames, want %d", tagged, sent/2)
	}
}
