package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestPktgenSends runs xdphash pktgen from the lab's namespace in each mode
// and checks the output's per-thread and total lines against what the Host
// end received. The destination MAC is found from the veth.
func TestPktgenSends(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2, Named: true}, kernel.PrepareReceiver) // named: pktgen --netns
	profile := filepath.Join(t.TempDir(), "small.yaml")
	if err := os.WriteFile(profile, []byte("flows: 64\ncycle: 512\nframe_sizes: imix\nmix: {vlan/ipv4/tcp: 3, ipv6+frag/udp: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cpus, err := kernel.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	threadLine := regexp.MustCompile(`(?m)^\s*(\d)\s+\d+\s+[-\d]+\s+(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s*$`)
	for _, tt := range []struct {
		mode, profile, count, threads string
	}{
		{"xdp", "simple", "4096", "2"},
		{"afxdp", profile, "1000", "1"},
		{"packet", "isp", "3001", "2"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			if len(cpus) < 2 { // the generator pins one thread per CPU
				tt.threads = "1"
			}
			before := xdptest.HostRxPackets(t, lab)
			args := []string{"pktgen", "--netns", lab.NSName, "--iface", lab.Peer, "--profile", tt.profile, "--count", tt.count, "--threads", tt.threads}
			if tt.mode != "xdp" { // the default on this kernel
				args = append(args, "--mode", tt.mode)
			}
			out, errOut, code := runXdphash(t, nil, args...)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if errOut != "" {
				t.Errorf("stderr:\n%s", errOut)
			}
			if rx := xdptest.HostRxPackets(t, lab) - before; rx != parseUint(t, tt.count) {
				t.Errorf("Host received %d frames, want %s", rx, tt.count)
			}
			if n := len(threadLine.FindAllString(out, -1)); n != int(parseUint(t, tt.threads)) {
				t.Errorf("%d thread lines, want %s:\n%s", n, tt.threads, out)
			}
			for _, want := range []string{"mode " + tt.mode + " on " + lab.Peer, "total", " " + tt.count + " ", "tx_packets +" + tt.count} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func parseUint(tb testing.TB, s string) uint64 {
	tb.Helper()
	var n uint64
	for _, c := range s {
		n = n*10 + uint64(c-'0')
	}
	return n
}

// TestPktgenErrors checks the command's refusals: usage errors with the
// usage text, and runtime errors that say what to do.
func TestPktgenErrors(t *testing.T) {
	// A profile whose schedule cannot be built (a cycle of 2 frames leaves
	// the light shape none): the interface must be refused before it.
	unbuildable := filepath.Join(t.TempDir(), "unbuildable.yaml")
	if err := os.WriteFile(unbuildable, []byte("flows: 2\ncycle: 2\nmix: {ipv4/tcp: 1000, ipv6/tcp: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		root  bool
		want  string
		usage bool
	}{
		{"no interface", []string{"--count", "1"}, false, "--iface is required", true},
		{"unbounded", []string{"--iface", "x"}, false, "give --count or --duration", true},
		{"bad rate", []string{"--iface", "x", "--count", "1", "--rate", "fast"}, false, "--rate: parse rate \"fast\": want max or a packet rate", true},
		{"bad mode", []string{"--iface", "x", "--count", "1", "--mode", "dpdk"}, false, "--mode: want xdp|afxdp|packet|kernel", true},
		{"bad MAC", []string{"--iface", "x", "--count", "1", "--dst-mac", "zz"}, false, "--dst-mac", true},
		{"unknown profile", []string{"--iface", "lo", "--count", "1", "--profile", "nosuch", "--dst-mac", "02:00:00:00:00:01"}, false, `profile "nosuch": unknown profile (built in: collide, datacenter, elephants, hotset, isp, mobile, simple, tunnels, vxlan)`, false},
		{"no such interface", []string{"--iface", "xhlnosuch0", "--count", "1", "--dst-mac", "02:00:00:00:00:01"}, true, "xhlnosuch0", false},
		{"interface before schedule", []string{"--iface", "xhlnosuch0", "--count", "1", "--dst-mac", "02:00:00:00:00:01", "--profile", unbuildable}, false, "check generator: find interface xhlnosuch0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				xdptest.RequireRoot(t)
			}
			out, errOut, code := runXdphash(t, nil, append([]string{"pktgen"}, tt.args...)...)
			if code != exitFailure || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr %q: want exit %d and %q\nstdout: %s", code, errOut, exitFailure, tt.want, out)
			}
			if got := strings.Contains(errOut, "Usage:"); got != tt.usage {
				t.Errorf("usage printed: %v, want %v", got, tt.usage)
			}
		})
	}
}

// TestPktgenKernelMode checks that mode kernel says why it cannot run on a
// kernel without pktgen (this one), or runs where pktgen is there.
func TestPktgenKernelMode(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2, Named: true}, kernel.PrepareReceiver) // named: pktgen --netns
	out, errOut, code := runXdphash(t, nil, "pktgen", "--netns", lab.NSName, "--iface", lab.Peer, "--count", "100", "--mode", "kernel")
	if _, err := os.Stat("/proc/net/pktgen"); err == nil {
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return
	}
	if code != exitFailure || !strings.Contains(errOut, "generator mode unavailable: /proc/net/pktgen does not exist") {
		t.Errorf("exit %d, stderr %q, stdout %q", code, errOut, out)
	}
}

// TestPktgenWrite writes a sample capture without an interface or
// privileges, and reads it back with dissect: every frame is there.
func TestPktgenWrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sample.pcapng")
	stdout, stderr, code := runXdphash(t, nil, "pktgen", "--profile", "datacenter", "--count", "1000", "--write", out)
	if code != exitOK || !strings.Contains(stdout, "1000 frames written") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	stdout, stderr, code = runXdphash(t, nil, "dissect", out, "--format", "jsonl")
	if code != exitOK {
		t.Fatalf("dissect: exit %d\n%s", code, stderr)
	}
	if recs := parseJSONL(t, stdout); len(recs) != 1000 {
		t.Errorf("dissect read %d frames back, want 1000", len(recs))
	}
	for _, args := range [][]string{
		{"--write", out}, // no --count
		{"--write", out, "--count", "5", "--iface", "lo"}, // both
		{"--write", out, "--count", "100000000"},          // too many
	} {
		if _, _, code := runXdphash(t, nil, append([]string{"pktgen"}, args...)...); code != exitFailure {
			t.Errorf("pktgen %v: exit %d, want %d", args, code, exitFailure)
		}
	}
	if _, stderr, code := runXdphash(t, nil, "pktgen", "--count", "5", "--write", "/nonexistent/x.pcapng"); code != exitFailure || !strings.Contains(stderr, "check output") {
		t.Errorf("a capture in a missing directory: exit %d, %s", code, stderr)
	}
}

// TestVersion: --version names the Go release that built the binary.
func TestVersion(t *testing.T) {
	stdout, _, code := runXdphash(t, nil, "--version")
	if code != exitOK || !strings.Contains(stdout, "go1.") {
		t.Errorf("exit %d, %q", code, stdout)
	}
}

// TestPktgenWriteSlowRate: a rate so slow that the stamps would pass what
// nanosecond timestamps hold is refused before anything is written; a slow
// rate that fits gives stamps 1/rate apart, in order.
func TestPktgenWriteSlowRate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "slow.pcapng")
	_, stderr, code := runXdphash(t, nil, "pktgen", "--count", "5", "--rate", "1e-12", "--write", out)
	if code != exitFailure || !strings.Contains(stderr, "2262") {
		t.Errorf("--rate 1e-12: exit %d, %s", code, stderr)
	}
	if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--rate 1e-12 left %s: %v", out, err)
	}
	if _, stderr, code := runXdphash(t, nil, "pktgen", "--count", "4", "--rate", "0.001", "--write", out); code != exitOK {
		t.Fatalf("--rate 0.001: exit %d, %s", code, stderr)
	}
	r := openCaptureFile(t, out)
	var prev time.Time
	for i := range 4 {
		_, ci, err := r.ZeroCopyReadPacketData()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if i > 0 && ci.Timestamp.Sub(prev) != 1000*time.Second {
			t.Errorf("frame %d stamped %v after the one before, want 1000s", i, ci.Timestamp.Sub(prev))
		}
		prev = ci.Timestamp
	}
}
