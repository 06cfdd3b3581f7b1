//go:build linux

package main

import (
	"path/filepath"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestRunIface runs xdphash run on the host end of a veth pair of its own
// while the peer end, in the lab's namespace, sends the corpus's base frames:
// every frame sent is received and accounted for, and the XDP program is
// gone when the run ends.
func TestRunIface(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	out := filepath.Join(t.TempDir(), "run.json")
	done := startIfaceRun(t, "run", "--iface", lab.Host, "--duration", "2s",
		"--workers", "2", "--hash-key", kunitKey, "--rx-mode", "poll", "--out", out)
	if xdptest.XDPAttached(t, lab.Host) == "" {
		t.Errorf("xdphash run is receiving, but no XDP program is attached to %s", lab.Host)
	}
	var frames [][]byte
	for range 10 {
		for _, f := range corpus.Bases() {
			frames = append(frames, f.Data)
		}
	}
	xdptest.Send(t, lab, frames)
	st := finishIfaceRun(t, done, out, len(frames))
	if len(st.Queues) != 2 || st.Config.Source != "afxdp:"+lab.Host || st.Config.RxMode != "poll" {
		t.Errorf("queues %d, config %+v", len(st.Queues), st.Config)
	}
	if xdptest.XDPAttached(t, lab.Host) != "" {
		t.Errorf("an XDP program is still attached to %s", lab.Host)
	}
}
