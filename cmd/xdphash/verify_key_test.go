package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/verify"
)

// TestVerifyCaptureKey: verify --pcap of a capture from xdphash run --write
// hashes xdphash's side with the key the capture records, says so, and
// takes --hash-key over it.
func TestVerifyCaptureKey(t *testing.T) {
	xdptest.RequireRoot(t)
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.WriterConfig{Settings: &capture.Settings{Hash: "kernel", Key: kunitKey, Descend: capture.DescendNone}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&capture.Frame{Data: tcpOut, Time: recordTime(0)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := tempFile(t, "settings.pcapng", buf.Bytes())
	var used []string
	recording := func(key hash.Key, _ dissectPath) verify.FlowFunc {
		used = append(used, key.String())
		right := verify.KernelFlow(key)
		return func(frame []byte, tag dissect.VLANTag) (dissect.FlowKeys, bool, uint32) { return right(frame, tag) }
	}
	other := "ffeeddccbbaa99887766554433221100"
	for _, c := range []struct {
		args []string
		key  string
		from string
	}{
		{[]string{"verify", "--pcap", path}, kunitKey, keyFromCapture},
		{[]string{"verify", "--pcap", path, "--hash-key", other}, other, keyFromFlag},
	} {
		used = nil
		out, errOut, code := runWith(t, recording, c.args...)
		want := "hash key " + c.key + " (" + c.from + "))"
		if code != exitOK || !strings.Contains(out, want) || len(used) != 1 || used[0] != c.key {
			t.Errorf("%v: exit %d, keys used %v, output lacks %q:\n%s\nstderr:\n%s", c.args, code, used, want, out, errOut)
		}
	}
}
