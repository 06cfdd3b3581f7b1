package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/verify"
)

const testKeyHex = "000102030405060708090a0b0c0d0e0f"

// runWith runs xdphash in-process with flow as verify's xdphash side.
func runWith(tb testing.TB, flow flowFunc, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	root := newRootCmdWith(flow)
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	code = run(root, args)
	return out.String(), errOut.String(), code
}

func TestVerifyAgreesWithKernel(t *testing.T) {
	xdptest.RequireRoot(t)
	for _, args := range [][]string{
		{"verify"},
		{"verify", "--path", "fast"},
		{"verify", "--count", "5000", "--seed", "3"},
	} {
		out, errOut, code := runXdphash(t, nil, args...)
		if code != exitOK || !strings.Contains(out, " 0 divergences") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
}

// portsIgnored is a deliberately wrong flow hash: the ports are left out.
func portsIgnored(key hash.Key, _ dissectPath) verify.FlowFunc {
	right := verify.KernelFlow(key)
	h := hash.NewKernel(key)
	return func(frame []byte, tag dissect.VLANTag) (dissect.FlowKeys, bool, uint32) {
		k, ok, _ := right(frame, tag)
		wrong := k
		clear(wrong[dissect.OffPorts : dissect.OffPorts+4])
		v, _ := h.Hash(&wrong)
		return k, ok, v
	}
}

func TestVerifyNamesTheWrongField(t *testing.T) {
	xdptest.RequireRoot(t)
	out, errOut, code := runWith(t, portsIgnored, "verify", "--max", "5")
	if code != exitDivergence {
		t.Fatalf("exit status %d, want %d\nstderr: %s", code, exitDivergence, errOut)
	}
	for _, want := range []string{"kernel: different flows", "xdphash: same flow", "fields that differ in xdphash's keys: sport", "... and "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "divergences from the kernel") {
		t.Errorf("stderr: %q", errOut)
	}
}

func TestVerifyPcap(t *testing.T) {
	xdptest.RequireRoot(t)
	var rs []record
	for _, f := range corpus.Build()[:300] {
		rs = append(rs, record{data: f.Data})
	}
	path := tempFile(t, "corpus.pcapng", captureFile(t, "pcapng", layers.LinkTypeEthernet, rs...))
	out, errOut, code := runXdphash(t, nil, "verify", "--pcap", path)
	if code != exitOK || !strings.Contains(out, "verify: 300 frames checked") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestVerifyFlagErrors(t *testing.T) {
	_, errOut, code := runXdphash(t, nil, "verify", "--pcap", "x", "--count", "3")
	if code != exitFailure || !strings.Contains(errOut, "exclude each other") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestDissectPathsAgree checks the contract end to end: on a capture of every
// corpus frame and its truncations, --path fast and --path auto print what
// --path slow prints, but for the path field.
func TestDissectPathsAgree(t *testing.T) {
	var rs []record
	for i, f := range corpus.Build() {
		rs = append(rs, record{data: f.Data})
		if i%7 == 0 {
			for n := 14; n < len(f.Data); n += 3 {
				rs = append(rs, record{data: f.Data[:n]})
			}
		}
	}
	path := tempFile(t, "corpus.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, rs...))
	outputs := map[string][]string{}
	for _, p := range []string{"slow", "fast", "auto"} {
		out, errOut, code := runXdphash(t, nil, "dissect", "--format", "jsonl", "--hash-key", testKeyHex, "--path", p, "--stats", path)
		if code != exitOK {
			t.Fatalf("--path %s: exit %d: %s", p, code, errOut)
		}
		if !strings.Contains(errOut, "eth_ip") || !strings.Contains(errOut, "total:") {
			t.Errorf("--path %s --stats printed no counters: %s", p, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		fastSeen := false
		for i, line := range lines {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(rec["path"].(string), "fast:") {
				fastSeen = true
			}
			delete(rec, "path")
			b, _ := json.Marshal(rec)
			lines[i] = string(b)
		}
		if p != "slow" && !fastSeen {
			t.Errorf("--path %s: no frame took a fast path", p)
		}
		outputs[p] = lines
	}
	for _, p := range []string{"fast", "auto"} {
		if len(outputs[p]) != len(outputs["slow"]) {
			t.Fatalf("--path %s: %d lines, slow %d", p, len(outputs[p]), len(outputs["slow"]))
		}
		for i := range outputs[p] {
			if outputs[p][i] != outputs["slow"][i] {
				t.Errorf("--path %s differs at frame %d:\n slow %s\n %s %s", p, i, outputs["slow"][i], p, outputs[p][i])
				break
			}
		}
	}
}

func TestDissectGatesFlag(t *testing.T) {
	frames := records(dissect.SampleFrame(dissect.ShapeEthIP), dissect.SampleFrame(dissect.ShapeVLAN))
	path := tempFile(t, "two.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, frames...))
	out, errOut, code := runXdphash(t, nil, "dissect", "--format", "jsonl", "--gates", "vlan", "--hash-key", testKeyHex, path)
	recs := parseJSONL(t, out)
	if code != exitOK || len(recs) != 2 || recs[0].Path != "slow" || recs[1].Path != "fast:vlan" {
		t.Errorf("exit %d, records %+v, stderr %s", code, recs, errOut)
	}
	_, errOut, code = runXdphash(t, nil, "dissect", "--path", "slow", "--gates", "vlan", path)
	if code != exitFailure || !strings.Contains(errOut, "--gates needs --path fast or auto") {
		t.Errorf("--path slow --gates: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = runXdphash(t, nil, "dissect", "--gates", "bogus", path)
	if code != exitFailure || !strings.Contains(errOut, "unknown shape") {
		t.Errorf("--gates bogus: exit %d, stderr %q", code, errOut)
	}
}

// tagIgnored is a deliberately wrong flow: the metadata VLAN tag is dropped,
// as dissecting only the bytes an AF_XDP socket gets would.
func tagIgnored(key hash.Key, _ dissectPath) verify.FlowFunc {
	right := verify.KernelFlow(key)
	return func(frame []byte, _ dissect.VLANTag) (dissect.FlowKeys, bool, uint32) {
		return right(frame, dissect.VLANTag{})
	}
}

// TestVerifyMetadataTags checks that verify checks every corpus frame three
// times (no tag, 802.1Q and 802.1AD metadata tags), and that a dissector that
// drops the metadata tag fails it.
func TestVerifyMetadataTags(t *testing.T) {
	xdptest.RequireRoot(t)
	out, errOut, code := runXdphash(t, nil, "verify")
	want := fmt.Sprintf("verify: %d frames checked", 3*len(corpus.Build()))
	if code != exitOK || !strings.Contains(out, want) {
		t.Errorf("exit %d, want output %q\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	out, errOut, code = runWith(t, tagIgnored, "verify", "--max", "3")
	if code != exitDivergence || !strings.Contains(out, "metadata VLAN tag 0x8100:0x6064") {
		t.Errorf("tag dropped: exit %d, want %d and a divergence naming the metadata tag\nstdout:\n%s\nstderr:\n%s", code, exitDivergence, out, errOut)
	}
}

// TestVerifyPcapMetadataTag: verify --pcap checks a frame that xdphash run
// --write recorded with a metadata VLAN tag as received with that tag, and
// a frame without such a comment as received with none.
func TestVerifyPcapMetadataTag(t *testing.T) {
	xdptest.RequireRoot(t)
	tag := dissect.VLANTag{TPID: 0x8100, TCI: 100}
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.WriterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	comment := capture.Comment{Hash: 1, Source: "kernel", Path: "slow", Tag: tag}
	for _, f := range []capture.Frame{
		{Data: tcpOut, Time: recordTime(0), Comment: comment.AppendTo(nil)},
		{Data: tcpOut, Time: recordTime(1)},
	} {
		if err := w.Write(&f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := tempFile(t, "tagged.pcapng", buf.Bytes())
	var seen []dissect.VLANTag
	recording := func(key hash.Key, _ dissectPath) verify.FlowFunc {
		right := verify.KernelFlow(key)
		return func(frame []byte, tag dissect.VLANTag) (dissect.FlowKeys, bool, uint32) {
			seen = append(seen, tag)
			return right(frame, tag)
		}
	}
	out, errOut, code := runWith(t, recording, "verify", "--pcap", path)
	if code != exitOK || !strings.Contains(out, "2 frames checked") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if len(seen) != 2 || seen[0] != tag || !seen[1].IsZero() {
		t.Errorf("frames checked with metadata tags %v, want [%v none]", seen, tag)
	}
}
