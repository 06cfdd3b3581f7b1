package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
	"github.com/xdphash/xdphash/soak"
)

// soakChecks is the part of checks.json the tests read.
type soakChecks struct {
	Status string       `json:"status"`
	Checks []soak.Check `json:"checks"`
}

// runSoak runs xdphash soak in-process with args and --out in a temporary
// directory, checks that it left no lab behind, and returns the output, the
// exit status, the checks and the run statistics.
func runSoakCmd(t *testing.T, args ...string) (string, int, soakChecks, *runstats.RunStats) {
	t.Helper()
	xdptest.RequireRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := runXdphash(t, nil, append([]string{"soak", "--out", out}, args...)...)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	// Only this process's labs: other tests may run their own meanwhile.
	for _, l := range xdptest.OwnLabs() {
		t.Errorf("left behind: %s", l)
	}
	for _, f := range []string{soak.FileRun, soak.FileReportText, soak.FileReportHTML, soak.FileChecks} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
	var checks soakChecks
	var st runstats.RunStats
	for name, v := range map[string]any{soak.FileChecks: &checks, soak.FileRun: &st} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return stdout, code, checks, &st
}

// TestSoakPasses runs the README's main command for 20 seconds: every check
// must hold.
func TestSoakPasses(t *testing.T) {
	stdout, code, checks, _ := runSoakCmd(t, "--duration", "20s", "--profile", "datacenter")
	if code != 0 || checks.Status != soak.StatusPass {
		t.Errorf("exit status %d, status %q, want 0 and %q", code, checks.Status, soak.StatusPass)
	}
	if len(checks.Checks) != 4 {
		t.Errorf("%d checks, want 4", len(checks.Checks))
	}
	for _, c := range checks.Checks {
		if !c.Pass {
			t.Errorf("FAIL %s: %s", c.Name, c.Detail)
		}
		if !strings.Contains(stdout, "PASS  "+c.Name) {
			t.Errorf("stdout does not show PASS  %s", c.Name)
		}
	}
}

// TestSoakTinyRing runs with an 8-slot backlog: the rings overflow, and the
// drops are counted and reported, with the accounting still exact.
func TestSoakTinyRing(t *testing.T) {
	stdout, _, checks, st := runSoakCmd(t, "--duration", "5s", "--ring-size", "8")
	if st.Accounting.Dropped["ring/full"] == 0 {
		t.Errorf("no ring drops with --ring-size 8: %+v", st.Accounting)
	}
	if !strings.Contains(stdout, "ring/full") {
		t.Error("stdout does not report the ring drops")
	}
	if len(checks.Checks) == 0 || !checks.Checks[0].Pass {
		t.Errorf("accounting check: %+v", checks.Checks)
	}
}

// TestSoakCheckDevice runs the device check: every frame, half of them sent
// with a hardware VLAN tag, agrees with the kernel's own hash, and a profile
// with in-band tags is refused.
func TestSoakCheckDevice(t *testing.T) {
	stdout, code, checks, st := runSoakCmd(t, "--duration", "3s", "--check-device")
	// 3 s is too short for the memory check, which says SKIP (exit 3);
	// every other check passes.
	if code != exitSkipped || len(checks.Checks) != 5 {
		t.Fatalf("exit status %d, %d checks; want %d, 5\n%s", code, len(checks.Checks), exitSkipped, stdout)
	}
	for _, c := range checks.Checks {
		if !c.Pass && !(c.Skipped && strings.HasPrefix(c.Name, "memory")) {
			t.Errorf("%s %s: %s", c.Verdict(), c.Name, c.Detail)
		}
	}
	last := checks.Checks[4]
	if !strings.HasPrefix(last.Name, "device hash") || st.DeviceHash == nil || st.DeviceHash.Checked != st.Accounting.Received || st.DeviceHash.Checked == 0 {
		t.Errorf("device check %+v, statistics %+v", last, st.DeviceHash)
	}
	_, stderr, code := runXdphash(t, nil, "soak", "--duration", "1s", "--check-device", "--profile", "datacenter", "--out", t.TempDir())
	if code != exitFailure || !strings.Contains(stderr, "without in-band VLAN tags") {
		t.Errorf("--check-device --profile datacenter: exit %d, stderr %q", code, stderr)
	}
}
