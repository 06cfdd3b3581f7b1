//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
)

// deviceLab is a veth pair whose peer end sends through AF_PACKET, one TX
// queue (a sender with several would hash the frames itself: see
// docs/afxdp.md), with a TCX egress program that gives every other frame a
// hardware VLAN tag when tagged.
type deviceLab struct {
	lab *vethlab.Lab
	fd  int
}

// deviceTCI is the hardware VLAN tag's TCI: priority 3, VLAN 0x123.
const deviceTCI = 3<<13 | 0x123

func newDeviceLab(t *testing.T, tagged bool) *deviceLab {
	t.Helper()
	xdptest.RequireRoot(t)
	d := &deviceLab{lab: xdptest.NewLab(t, vethlab.Config{Queues: 1}), fd: -1}
	var push *kernel.VLANPush
	err := d.lab.InPeer(func() (err error) {
		if tagged {
			if push, err = kernel.AttachVLANPush(d.lab.PeerIndex, unix.ETH_P_8021Q, deviceTCI); err != nil {
				return err
			}
		}
		d.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if push != nil {
		t.Cleanup(func() { push.Close() })
	}
	if d.fd >= 0 {
		t.Cleanup(func() { unix.Close(d.fd) })
	}
	xdptest.SkipIfNotSupported(t, err) // TCX, for the tag
	return d
}

// untaggedCorpus is every corpus frame without an in-band VLAN tag: AF_PACKET
// moves the network header past such a tag, and veth hashes from there (a
// real conflict, which docs/afxdp.md explains).
func untaggedCorpus() [][]byte {
	var out [][]byte
	for _, f := range corpus.Build() {
		switch binary.BigEndian.Uint16(f.Data[12:]) {
		case unix.ETH_P_8021Q, unix.ETH_P_8021AD, 0x9100:
			continue
		}
		out = append(out, f.Data)
	}
	return out
}

// runWhileSending runs xdphash run on the lab's host end with args and,
// once the run is about to start its engine (its sockets are bound: it says
// so when it serves its metrics), sends each frame twice from the peer, in
// chunks the veth ring takes; once the host end has counted every frame (it
// has then run the XDP program on it: the frame is on an AF_XDP ring, or
// counted as dropped), it ends the run's input, which stops the run as
// asked, and it returns the run's statistics, its stdout and exit status,
// and the frames sent.
func (d *deviceLab) runWhileSending(t *testing.T, frames [][]byte, args ...string) (*runstats.RunStats, string, int, int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	in, feed := io.Pipe()
	defer feed.Close()
	var stdout bytes.Buffer
	var stderr xdptest.Output
	root := newRootCmd()
	root.SetIn(in)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	// Rings that hold every frame sent: a run starved of CPU (a loaded
	// machine, GOMAXPROCS=1) may take them only at its stop, and loses none.
	ring := "16384"
	if len(frames)*2 > 16384 {
		t.Fatalf("%d frames to send twice: more than the rings hold", len(frames))
	}
	args = append([]string{"run", "--iface", d.lab.Host, "--stop-on-eof", "--workers", "2", "--hash-key", kunitKey,
		"--rx-mode", "poll", "--xdp-ring-size", ring, "--frames", ring, "--metrics-addr", "127.0.0.1:0", "--out", out}, args...)
	done := make(chan int, 1)
	go func() { done <- run(root, args) }()
	select {
	case <-stderr.Seen("serving metrics"):
	case code := <-done:
		t.Fatalf("the run ended with %d before it started:\n%s", code, stderr.String())
	}
	before := xdptest.HostRxPackets(t, d.lab)
	to := &unix.SockaddrLinklayer{Ifindex: d.lab.PeerIndex}
	sent := 0
	for i, f := range frames {
		for range 2 {
			if err := unix.Sendto(d.fd, f, 0, to); err != nil {
				t.Fatalf("send frame %d: %v", i, err)
			}
			sent++
		}
		if i%16 == 15 {
			// Pace the sender below what veth's 256-entry ring takes
			// between two NAPI polls.
			time.Sleep(time.Millisecond)
		}
	}
	// The counter signals nothing: it is polled, for 10 s at most.
	for deadline := time.Now().Add(10 * time.Second); xdptest.HostRxPackets(t, d.lab)-before < uint64(sent); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%s counted %d of the %d frames sent after 10 s", d.lab.Host, xdptest.HostRxPackets(t, d.lab)-before, sent)
		}
	}
	feed.Close()
	bound := time.NewTimer(time.Minute)
	defer bound.Stop()
	var code int
	select {
	case code = <-done:
	case <-bound.C:
		t.Fatal("the run still runs a minute after its input ended")
	}
	if code == exitFailure {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	return xdptest.ReadJSON[runstats.RunStats](t, out), stdout.String(), code, sent
}

// TestRunCheckDeviceHash sends every corpus frame without an in-band tag
// through AF_PACKET, each twice, plain and (through the peer's VLAN push)
// with a hardware VLAN tag every other frame, and runs --check-device-hash:
// the device hash, which veth takes from the kernel's skb_get_hash, and
// xdphash's must partition the frames alike, for every frame. Withholding
// the metadata tag from the dissector must make the tagged frames conflict.
func TestRunCheckDeviceHash(t *testing.T) {
	frames := untaggedCorpus()
	for _, tt := range []struct {
		name     string
		tagged   bool
		withhold bool
	}{
		{"plain", false, false},
		{"hw tag", true, false},
		{"hw tag withheld", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDeviceLab(t, tt.tagged)
			args := []string{"--check-device-hash"}
			if tt.withhold {
				args = append(args, "--withhold-vlan-tag")
			}
			st, stdout, code, sent := d.runWhileSending(t, frames, args...)
			c := st.DeviceHash
			if c == nil {
				t.Fatalf("no device_hash in the run statistics; stdout:\n%s", stdout)
			}
			t.Logf("%d sent: %+v (%d samples); %s", sent, *c, len(c.Samples), st.Config.XDPProgram)
			if c.Frames != uint64(sent) || c.Checked != uint64(sent) || c.WithHash != uint64(sent) {
				t.Errorf("sent %d frames; the check saw %d, %d with a device hash, checked %d", sent, c.Frames, c.WithHash, c.Checked)
			}
			if tt.withhold {
				// Each pair's tagged frame has the same keys without its tag
				// as the plain one, and another device hash.
				if c.Conflicts < uint64(len(frames)) || code != exitDivergence {
					t.Errorf("tag withheld: %d conflicts, exit %d; want at least one per tagged frame, %d, exit %d", c.Conflicts, code, len(frames), exitDivergence)
				}
				return
			}
			if c.Conflicts != 0 || code != exitOK {
				t.Errorf("%d conflicts, exit %d; want 0, %d; first samples:\n%s", c.Conflicts, code, exitOK, fmt.Sprint(c.Samples))
			}
			if st.HashSources.Device+st.HashSources.Kernel != uint64(sent) {
				t.Errorf("hash sources %+v for %d frames", st.HashSources, sent)
			}
		})
	}
}

// TestRunDeviceRSSOnVeth: veth has no RSS key or table to read, and
// --rss-key device and --reta-table device say so before anything is
// attached.
func TestRunDeviceRSSOnVeth(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
	for _, args := range [][]string{
		{"--hash", "toeplitz", "--rss-key", "device"},
		{"--steer", "reta", "--reta-table", "device"},
	} {
		_, stderr, code := runXdphash(t, nil, append([]string{"run", "--iface", lab.Host, "--duration", "1s"}, args...)...)
		if code != exitFailure || !strings.Contains(stderr, "not supported") || !strings.Contains(stderr, "hint:") {
			t.Errorf("%v on veth: exit %d, stderr %q; want exit %d and a not-supported error with a hint", args, code, stderr, exitFailure)
		}
		if xdptest.XDPAttached(t, lab.Host) != "" {
			t.Errorf("%v: an XDP program is attached to %s", args, lab.Host)
		}
	}
}
