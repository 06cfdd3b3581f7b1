package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// TestRunSynthetic is the command of the issue: a second of the default
// synthetic profile, on the wall clock, with its statistics as JSON.
func TestRunSynthetic(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.json")
	stdout, stderr, code := runXdphash(t, nil, "run", "--synthetic", "datacenter", "--duration", "1s", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	// --duration is honoured: the run lasted at least the second it was
	// given (an upper bound would time the machine, not the program).
	if d := time.Duration(st.DurationNs); d < time.Second {
		t.Errorf("a --duration 1s run recorded duration_ns %s, want at least 1s", d)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("the output directory holds %v, want f.json alone (no temporary file left)", ents)
	}
	if st.SchemaVersion != runstats.SchemaVersion {
		t.Errorf("schema_version %d, want %d", st.SchemaVersion, runstats.SchemaVersion)
	}
	acc := st.Accounting
	if !acc.Balanced || acc.Received == 0 {
		t.Errorf("accounting %+v", acc)
	}
	c := st.Config
	if c.Source != "synthetic:datacenter" || c.Consumer != "fifo" || c.Clock != "wall" || c.Workers != 2 || len(c.HashKey) != 32 || len(st.Workers) != 2 {
		t.Errorf("config %+v", c)
	}
	for _, want := range []string{"xdphash run synthetic:datacenter", "worker", "eth_ip", "(balanced)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "random key") {
		t.Errorf("stderr does not log the random key: %s", stderr)
	}
}

// TestRunPcapVirtual replays the corpus from a file over 2 RSS queues on the
// virtual clock, into fq_codel at a limited rate: every frame is received,
// and two runs give the same report.
func TestRunPcapVirtual(t *testing.T) {
	var rs []record
	for _, f := range corpus.Bases() {
		rs = append(rs, record{data: f.Data})
	}
	path := tempFile(t, "corpus.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, rs...))
	run := func() *runstats.RunStats {
		out := filepath.Join(t.TempDir(), "run.json")
		_, stderr, code := runXdphash(t, nil, "run", "--pcap", path, "--virtual-clock", "--virtual-queues", "2",
			"--workers", "3", "--hash-key", kunitKey, "--consumer", "fq_codel", "--service-rate", "1kpps", "--out", out)
		if code != exitOK {
			t.Fatalf("exit %d\nstderr: %s", code, stderr)
		}
		return xdptest.ReadJSON[runstats.RunStats](t, out)
	}
	a, b := run(), run()
	if a.Accounting.Received != uint64(len(rs)) || !a.Accounting.Balanced {
		t.Errorf("accounting %+v, want %d frames", a.Accounting, len(rs))
	}
	if a.Config.Clock != "virtual" || a.Config.HashKey != kunitKey || a.Config.Flows != queues.DefaultFlows || len(a.Queues) != 2 {
		t.Errorf("config %+v", a.Config)
	}
	// One frame a millisecond for len(rs) ms.
	if want := int64(len(rs)-1)*int64(time.Millisecond) + 1; a.DurationNs != want {
		t.Errorf("duration %d ns, want %d", a.DurationNs, want)
	}
	a.Started, b.Started = time.Time{}, time.Time{}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	// Two queues merge in the order their records reach each worker, which
	// may differ (and with it how many a slow consumer served by the end):
	// compare what does not depend on it.
	if a.Accounting.Processed+a.Accounting.Unserved != b.Accounting.Processed+b.Accounting.Unserved || len(a.Windows) != len(b.Windows) ||
		a.Queues[0].Stats.Frames != b.Queues[0].Stats.Frames {
		t.Errorf("two virtual runs differ:\n%s\n%s", ja, jb)
	}
}

// TestRunCPUs pins the one worker to the first CPU this process may use.
func TestRunCPUs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.json")
	_, stderr, code := runXdphash(t, nil, "run", "--synthetic", "simple", "--count", "10000", "--cpus", "0", "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	if len(st.Workers) != 1 || st.Workers[0].CPU != 0 || st.Accounting.Received != 10000 {
		t.Errorf("workers %+v, accounting %+v", st.Workers, st.Accounting)
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no source", nil, "want exactly one source"},
		{"two sources", []string{"--synthetic", "datacenter", "--pcap", "x.pcap"}, "want exactly one source"},
		{"virtual clock live", []string{"--iface", "lo", "--virtual-clock"}, "are for --pcap and --synthetic"},
		{"queues offline", []string{"--synthetic", "datacenter", "--queues", "0"}, "are for --iface"},
		{"count on pcap", []string{"--pcap", "x.pcap", "--count", "5"}, "are for --synthetic"},
		{"reta weights with rps", []string{"--synthetic", "datacenter", "--reta-weights", "1,1"}, "--reta-weights is for --steer reta"},
		{"hash key with toeplitz", []string{"--synthetic", "datacenter", "--hash", "toeplitz", "--hash-key", kunitKey}, "--hash-key is for --hash kernel"},
		{"cpus and workers", []string{"--synthetic", "datacenter", "--cpus", "0", "--workers", "2"}, "one CPU per worker"},
		{"bad hash", []string{"--synthetic", "datacenter", "--hash", "crc"}, `--hash: parse hash kind "crc": unknown name, want auto, kernel, toeplitz or device`},
		{"bad cpus", []string{"--synthetic", "datacenter", "--cpus", "x"}, "--cpus: want CPU numbers"},
		// Sizes that would ask for more memory than any machine has.
		{"workers 100000", []string{"--synthetic", "datacenter", "--workers", "100000"}, "--workers 100000: want 1 to 1024"},
		{"virtual queues 100000", []string{"--synthetic", "datacenter", "--virtual-queues", "100000"}, "--virtual-queues 100000: want 1 to 1024"},
		{"ring size 1e9", []string{"--synthetic", "datacenter", "--ring-size", "1000000000"}, "--ring-size 1000000000: want 1 to"},
		{"batch 1e8", []string{"--synthetic", "datacenter", "--batch", "100000000"}, "--batch 100000000: want 1 to"},
		{"batch 0", []string{"--synthetic", "datacenter", "--batch", "0"}, "--batch 0: want 1 to"},
		{"batch -1", []string{"--synthetic", "datacenter", "--batch", "-1"}, "--batch -1: want 1 to"},
		{"window 1us", []string{"--synthetic", "datacenter", "--window", "1us"}, "--window 1µs: want at least 1ms"},
		{"ring size 0", []string{"--synthetic", "datacenter", "--ring-size", "0"}, "--ring-size 0: want 1 to 1048576"},
		{"reta size 256", []string{"--synthetic", "datacenter", "--steer", "reta", "--reta-size", "256"}, "--reta-size 256: want one of 128, 512, 2048"},
		{"rebalance 10us", []string{"--synthetic", "datacenter", "--steer", "reta", "--rebalance=10us"}, "--rebalance 10µs: want an interval of at least 1ms"},
		{"rebalance threshold 0.9", []string{"--synthetic", "datacenter", "--steer", "reta", "--rebalance", "--rebalance-threshold", "0.9"}, "--rebalance-threshold 0.9: want a max/mean from 1 to 65536"},
		{"rebalance dwell -1", []string{"--synthetic", "datacenter", "--steer", "reta", "--rebalance", "--rebalance-dwell", "-1"}, "--rebalance-dwell -1: want 0 to 1073741824 intervals"},
		{"rings over 4 GiB", []string{"--synthetic", "datacenter", "--workers", "1024", "--virtual-queues", "8", "--ring-size", "1000000"}, "MiB of rings, over 4096 MiB"},
		{"bad symmetric", []string{"--synthetic", "datacenter", "--symmetric", "or-xor"}, `--symmetric: parse symmetry "or-xor": unknown name, want none, xor or sort`},
		// Values that used to be taken silently as something else.
		{"synthetic flows -1", []string{"--synthetic", "datacenter", "--synthetic-flows", "-1"}, "--synthetic-flows -1: want 1 to"},
		{"flow limit 1e12", []string{"--synthetic", "datacenter", "--flow-limit", "1000000000000"}, "--flow-limit 1000000000000: want a table length up to 65536"},
		{"fifo flows", []string{"--synthetic", "datacenter", "--consumer", "fifo", "--flows", "64"}, "--flows is for --consumer fq or fq_codel, not fifo"},
		{"fifo ecn", []string{"--synthetic", "datacenter", "--ecn"}, "--ecn is for --consumer fq_codel, not fifo"},
		{"fq target", []string{"--synthetic", "datacenter", "--consumer", "fq", "--target", "1ms"}, "--target is for --consumer fq_codel, not fq"},
		{"frame size offline", []string{"--synthetic", "datacenter", "--frame-size", "4096"}, "are for --iface"},
		{"device hash offline", []string{"--synthetic", "datacenter", "--hash", "device"}, "it is for --iface"},
		{"check device hash offline", []string{"--pcap", "x.pcap", "--check-device-hash"}, "are for --iface"},
		{"reta table offline", []string{"--synthetic", "datacenter", "--steer", "reta", "--reta-table", "device"}, "is for --iface with --steer reta"},
		{"reta table not device", []string{"--iface", "lo", "--steer", "reta", "--reta-table", "0,1"}, `--reta-table "0,1": want device`},
		{"check device hash against itself", []string{"--iface", "lo", "--hash", "device", "--check-device-hash"}, "not device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runXdphash(t, nil, append([]string{"run"}, tt.args...)...)
			if code != exitFailure || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, "Usage:") {
				t.Errorf("exit %d, stderr:\n%s\nwant %q and the usage", code, stderr, tt.want)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown profile", []string{"--synthetic", "nope"}, `profile "nope": unknown profile`},
		{"missing file", []string{"--pcap", "/nonexistent.pcap"}, "open capture"},
		{"service rate", []string{"--synthetic", "datacenter", "--service-rate", "fast"}, "--service-rate"},
		{"replay", []string{"--synthetic", "datacenter", "--replay", "10Mbit"}, "--replay"},
		{"recorded synthetic", []string{"--synthetic", "datacenter", "--replay", "recorded"}, "--replay recorded is for --pcap"},
		{"consumer", []string{"--synthetic", "datacenter", "--consumer", "red"}, `no consumer "red"`},
		{"rss key", []string{"--synthetic", "datacenter", "--hash", "toeplitz", "--rss-key", "0011"}, "--rss-key"},
		{"reta weights", []string{"--synthetic", "datacenter", "--steer", "reta", "--reta-weights", "1,1,1"}, "weights"},
		{"cpu not allowed", []string{"--synthetic", "datacenter", "--cpus", "1000"}, "CPU 1000 is not one this process may run on"},
		{"no such interface", []string{"--iface", "xdphash-none0"}, "xdphash-none0"},
		{"negative queue", []string{"--iface", "lo", "--queues", "-1"}, "--queues: parse queues \"-1\": a list element is empty or negative"},
		{"synthetic flows too few", []string{"--synthetic", "datacenter", "--synthetic-flows", "3"}, "flows: 3, want 8 (one per shape)"},
		// The output is checked before the run, which would last an hour.
		{"out in a missing directory", []string{"--synthetic", "datacenter", "--duration", "1h", "--out", "/nonexistent/run.json"}, "check output /nonexistent/run.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runXdphash(t, nil, append([]string{"run"}, tt.args...)...)
			if code != exitFailure || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "Usage:") {
				t.Errorf("exit %d, stderr:\n%s\nwant %q without the usage", code, stderr, tt.want)
			}
		})
	}
}

// TestRunStatusLine checks the live status line's rates between two
// snapshots a second apart.
func TestRunStatusLine(t *testing.T) {
	stats := func(frames, kernelDrops uint64, served [2]uint64, drops uint64) *runstats.RunStats {
		st := &runstats.RunStats{
			Queues:  []runstats.QueueReport{{Queue: 3, Stats: runstats.QueueStats{Frames: frames, RxRingFull: kernelDrops}}},
			Workers: make([]runstats.WorkerReport, 2),
		}
		for w := range st.Workers {
			st.Workers[w].Consumer.Dequeued = served[w]
		}
		st.Accounting.Dropped = map[runstats.DropReason]uint64{runstats.DropRingFull: drops}
		return st
	}
	prev := stats(1000, 0, [2]uint64{500, 0}, 0)
	cur := stats(2501000, 7, [2]uint64{1000500, 1500000}, 5)
	got := string(appendStatus(nil, prev, cur, 1))
	want := "\r\x1b[Kq3 2.50 Mpps in  | w0 1.00 Mpps served  w1 1.50 Mpps served  | drops 5 after receive, 7 kernel"
	if got != want {
		t.Errorf("status line (-want +got)\n-%q\n+%q", want, got)
	}
}
