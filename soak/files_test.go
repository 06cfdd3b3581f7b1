package soak

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

// interruptedResult is a soak of a planned minute that a signal stopped
// after 17.049 s: 1,000 frames sent, 100 refused by the veth, 200 dropped
// by AF_XDP, 50 at the worker ring, 650 served; the memory check could not
// judge.
func interruptedResult() *Result {
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion, DurationNs: int64(17049 * time.Millisecond),
		Config:  runstats.RunConfig{Source: "afxdp:test", Hash: "kernel", Steer: "rps", Consumer: "fq_codel", Workers: 1, WindowNs: int64(100 * time.Millisecond)},
		Queues:  []runstats.QueueReport{{Queue: 0, Stats: runstats.QueueStats{Frames: 700, RxRingFull: 200}, Steered: []uint64{650}}},
		Workers: []runstats.WorkerReport{{Worker: 0, CPU: -1, Packets: 650, Drops: map[runstats.DropReason]uint64{runstats.DropRingFull: 50, runstats.DropFlowLimit: 0}}},
	}
	st.Workers[0].Consumer.Enqueued, st.Workers[0].Consumer.Dequeued = 650, 650
	st.Account()
	return &Result{
		Stats: st, Lab: LabVeth, Duration: time.Minute, Interrupted: true,
		Generator: pktgen.Report{Mode: pktgen.ModeXDP, Profile: "datacenter", Iface: "peer0", Frames: 1000, Bytes: 64000,
			Elapsed: 17049 * time.Millisecond, Threads: []pktgen.ThreadReport{{Thread: 0, CPU: 1, Queue: 0, Frames: 1000, Bytes: 64000, Elapsed: 17049 * time.Millisecond}}},
		Links:  LinkDeltas{PeerTxPackets: 900, PeerTxDropped: 100, HostRxPackets: 900, HostRxDropped: 300},
		Memory: []MemPoint{{ElapsedNs: 1e9, HeapInuse: 1 << 20, Sys: 4 << 20, Goroutines: 9}},
		Checks: []Check{{Name: "accounting", Pass: true, Detail: "ok"}, {Name: "memory", Skipped: true, Detail: "too few samples"}},
	}
}

// TestInterruptedSoakFiles: an interrupted soak's report.html, report.txt
// and checks.json say it was interrupted and how much of it ran; checks.json
// has one status vocabulary (a skip is "skip", not "passed": false),
// snake_case names with units and a version; report.txt carries the loss of
// the frames sent, the generator and the checks.
func TestInterruptedSoakFiles(t *testing.T) {
	dir := t.TempDir()
	if err := interruptedResult().WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const said = "the soak was interrupted after 17.049s of its 1m0s: the checks cover the run so far (1 of 2 checks passed, 0 failed, 1 skipped)"
	// Sent 1,000: lost 100 at the veth, 200 in the kernel, 50 at the ring.
	const loss = "35.00% of sent frames lost (350 of 1,000): veth 10.00% (tx_dropped 10.00%), kernel 20.00% (rx_ring_full 20.00%), worker rings 5.00% (ring/full 5.00%), consumers 0.00%"
	text := read(FileReportText)
	for _, want := range []string{
		"xdphash soak\nstatus: INTERRUPTED: " + said + "\n",
		"loss: " + loss,
		"\ngenerator\n",
		"profile datacenter, mode xdp, on peer0: 1000 frames, 64000 bytes in 17.049 s of the planned 1m0s",
		"\nchecks\nPASS  accounting\n      ok\nSKIP  memory\n      too few samples\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report.txt lacks %q:\n%s", want, text)
		}
	}
	html := read(FileReportHTML)
	for _, want := range []string{`<p class="status INTERRUPTED" id="status"><b>INTERRUPTED</b>: ` + said, loss} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	raw := read(FileChecks)
	var f map[string]any
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		t.Fatal(err)
	}
	if f["schema_version"] != float64(ChecksSchemaVersion) || f["status"] != StatusInterrupted || f["interrupted"] != true ||
		f["elapsed_seconds"] != 17.049 || f["duration_seconds"] != 60.0 {
		t.Errorf("checks.json: schema_version %v, status %v, interrupted %v, elapsed_seconds %v, duration_seconds %v",
			f["schema_version"], f["status"], f["interrupted"], f["elapsed_seconds"], f["duration_seconds"])
	}
	checks := f["checks"].([]any)
	if s := checks[1].(map[string]any)["status"]; s != StatusSkip {
		t.Errorf("the skipped check's status is %v, want skip", s)
	}
	if _, ok := f["passed"]; ok {
		t.Error("checks.json still has passed")
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var keys func(v any, path string)
	keys = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if !snake.MatchString(k) {
					t.Errorf("checks.json key %s.%s is not snake_case", path, k)
				}
				if k == "elapsed" || k == "elapsed_ns" || k == "heap_inuse" || k == "sys" {
					t.Errorf("checks.json key %s.%s has no unit in seconds or bytes", path, k)
				}
				keys(x, path+"."+k)
			}
		case []any:
			for _, x := range v {
				keys(x, path+"[]")
			}
		}
	}
	keys(f, "")
	if g := f["generator"].(map[string]any); g["elapsed_seconds"] != 17.049 || g["mode"] != "xdp" {
		t.Errorf("checks.json generator %v", g)
	}
}

// TestCheckJSON: a check reads back from checks.json of this version and
// of version 1 (pass, skipped), and an unknown status is refused.
func TestCheckJSON(t *testing.T) {
	for _, c := range []Check{{Name: "a", Pass: true}, {Name: "b"}, {Name: "c", Skipped: true, Detail: "x"}} {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Check
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Errorf("%+v reads back from %s as %+v (%v)", c, b, back, err)
		}
	}
	var old Check
	if err := json.Unmarshal([]byte(`{"name":"memory","pass":false,"skipped":true,"detail":"d"}`), &old); err != nil || old.Status() != StatusSkip {
		t.Errorf("version 1's skipped check reads as %+v (%v)", old, err)
	}
	if err := json.Unmarshal([]byte(`{"name":"x","status":"maybe"}`), &old); err == nil {
		t.Error("status maybe is accepted")
	}
}

// TestResultStatus: the soak's status for each outcome.
func TestResultStatus(t *testing.T) {
	pass, fail, skip := Check{Pass: true}, Check{}, Check{Skipped: true}
	for _, tt := range []struct {
		checks      []Check
		interrupted bool
		want        string
	}{
		{[]Check{pass, pass}, false, StatusPass},
		{[]Check{pass, fail, skip}, false, StatusFail},
		{[]Check{pass, skip}, false, StatusSkip},
		{[]Check{pass}, true, StatusInterrupted},
		{nil, false, StatusFail},
	} {
		if got := (&Result{Checks: tt.checks, Interrupted: tt.interrupted}).Status(); got != tt.want {
			t.Errorf("%+v interrupted %v: %s, want %s", tt.checks, tt.interrupted, got, tt.want)
		}
	}
}

// TestVirtioUpstream: in the virtio lab the guest NIC's stage is its own
// drops: eth0's rx_dropped less the frames XDP could not hand to AF_XDP,
// which it counts too and the kernel's stage already has.
func TestVirtioUpstream(t *testing.T) {
	r := interruptedResult()
	r.Lab = LabVirtio
	r.Links.HostRxDropped = 264 + 200 // AF_XDP's rx_ring_full 200, and the driver's own 264
	if got := r.Upstream().Drops; len(got) != 1 || got["guest/rx_dropped"] != 264 {
		t.Errorf("virtio upstream drops %v, want guest/rx_dropped 264", got)
	}
	r.Lab = LabVeth
	if got := r.Upstream().Drops; len(got) != 1 || got["veth/tx_dropped"] != 100 {
		t.Errorf("veth upstream drops %v, want veth/tx_dropped 100", got)
	}
}
