package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/runstats"
	"github.com/xdphash/xdphash/soak"
)

// searchFile is search.json as the tests read it.
type searchFile struct {
	runstats.SearchReport
	Checks [][]soak.Check `json:"checks"`
}

// runSearchCmd runs xdphash soak --search in-process with args and --out in
// a temporary directory, checks that it left no lab behind, and returns the
// exit status, stderr and search.json.
func runSearchCmd(t *testing.T, args ...string) (int, string, *searchFile, string) {
	t.Helper()
	xdptest.RequireRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := runXdphash(t, nil, append([]string{"soak", "--out", out}, args...)...)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, l := range xdptest.OwnLabs() {
		t.Errorf("left behind: %s", l)
	}
	return code, stderr, xdptest.ReadJSON[searchFile](t, filepath.Join(out, soak.FileSearch)), out
}

// TestSoakSearchKnownCeiling searches a pipeline whose one worker serves
// 2 kpps into a fifo of 1000 packets: a trial of 2 s at rate r loses
// 2(r - 2000) - 1000 frames (the fifo holds the rest when it ends), so the
// non-drop rate is at most 2500 fps (less when the loaded machine holds the
// worker up: its token bucket serves no more for the wait), at least the
// service rate, and low enough for one generator thread on a loaded
// machine. The search must never claim more than 2500, must find the
// fifo's drops in every sustained trial well above it and, unless this
// machine's generator or kernel gave out first (which the trials then say),
// end its bracket between the service rate and 2500.
func TestSoakSearchKnownCeiling(t *testing.T) {
	const service, limit, trialSecs = 2000.0, 1000.0, 2.0
	const ceiling = service + limit/trialSecs
	code, stderr, sp, out := runSearchCmd(t, "--search", "ndr", "--workers", "1", "--threads", "1", "--consumer", "fifo",
		"--service-rate", "2kpps", "--trial", "2s", "--duration", "90s", "--search-floor", "500", "--search-width", "0.05")
	s := *sp
	floorShort := code == exitFailure && strings.Contains(stderr, "cannot reach the search floor")
	if code != 0 && !floorShort || len(s.Goals) != 1 {
		t.Fatalf("exit status %d, %d goals; want 0 (or the generator short of the floor), 1", code, len(s.Goals))
	}
	g := s.Goals[0]
	// The sustain tolerance lets a trial's asked rate exceed what was sent
	// by 3%.
	if g.LowerTrial >= 0 && g.Lower > ceiling*1.03 {
		t.Errorf("NDR %.0f fps: above the pipeline's ceiling of %.0f", g.Lower, ceiling)
	}
	for i, tr := range s.Trials {
		if tr.Sustained && !tr.Max && tr.Rate > ceiling*1.1 && (tr.Pass[0] || tr.Drops["consumer/overlimit"] == 0) {
			t.Errorf("trial %d at %.0f fps (ceiling %.0f): pass %v, drops %v; want a failure with the fifo's drops", i, tr.Rate, ceiling, tr.Pass[0], tr.Drops)
		}
	}
	if floorShort {
		t.Logf("this machine's generator did not sustain the floor: %s", s.Error)
		return
	}
	if g.UpperTrial < 0 {
		t.Fatalf("no upper bound: %+v", g)
	}
	up := s.Trials[g.UpperTrial]
	if !up.Sustained || up.Drops["consumer/overlimit"] == 0 {
		t.Logf("the upper bound %.0f fps is this machine's generator or kernel, not the fifo: sustained %v, drops %v", g.Upper, up.Sustained, up.Drops)
	} else if g.LowerTrial < 0 || g.Upper < service*0.97 {
		t.Errorf("bracket [%.0f, %.0f), want it to hold %.0f: the fifo dropped below its service rate", g.Lower, g.Upper, ceiling)
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, filepath.Join(out, soak.FileRun))
	if st.Search == nil || st.Search.SchemaVersion != runstats.SearchSchemaVersion || st.Config.ServiceRate != "2kpps" {
		t.Errorf("run.json: search section %v, service rate %q", st.Search != nil, st.Config.ServiceRate)
	}
	// The report reads it and shows the search.
	stdout, stderr, code := runXdphash(t, nil, "report", filepath.Join(out, soak.FileRun))
	if code != 0 || !strings.Contains(stdout, "rate search, lab veth") || !strings.Contains(stdout, "NDR") {
		t.Errorf("report: exit %d, stderr %q, stdout without the search", code, stderr)
	}
	html, err := os.ReadFile(filepath.Join(out, soak.FileReportHTML))
	if err != nil || !strings.Contains(string(html), "Rate search: loss ratio") {
		t.Errorf("report.html without the search chart (%v)", err)
	}
}

// TestSoakSearchFloorOutOfReach asks for a floor no generator reaches: the
// search says so, with the trial that measured the maximum.
func TestSoakSearchFloorOutOfReach(t *testing.T) {
	code, stderr, sp, _ := runSearchCmd(t, "--search", "ndr", "--search-floor", "1G", "--trial", "1s", "--duration", "10s")
	if code != exitFailure || !strings.Contains(stderr, "cannot reach the search floor") || !strings.Contains(stderr, "lower --search-floor") {
		t.Errorf("exit %d, stderr %q; want %d and the floor out of reach", code, stderr, exitFailure)
	}
	s := *sp
	if len(s.Trials) != 1 || !s.Trials[0].Max || s.Max <= 0 || s.Max >= 1e9 || s.Error == "" {
		t.Errorf("search.json: %d trials, max %.0f, error %q; want the maximum's trial alone", len(s.Trials), s.Max, s.Error)
	}
}

// searchSignalChildEnv marks the child of TestSoakSearchSIGINT; its value
// is the child's --out.
const searchSignalChildEnv = "XDPHASH_SEARCH_SIGNAL_CHILD"

// searchSignalChild is TestSoakSearchSIGINT's child: a long search that
// says "ready" once its first trial is done.
func searchSignalChild(out string) int {
	root := newRootCmd()
	root.SetErr(&readyWriter{out: os.Stdout, marker: "msg=trial"})
	return run(root, []string{"soak", "--search", "ndr,pdr", "--trial", "1s", "--duration", "10m", "--out", out})
}

// TestSoakSearchSIGINT interrupts a search after its first trial: it ends
// with exit status 130 and writes the trials so far, and no lab is left.
func TestSoakSearchSIGINT(t *testing.T) {
	xdptest.RequireRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoakSearchSIGINT$")
	xdptest.StartChild(t, cmd, searchSignalChildEnv+"="+out, func(line string) bool { return line == "ready" })
	interruptChild(t, cmd, "the search")
	s := xdptest.ReadJSON[searchFile](t, filepath.Join(out, soak.FileSearch))
	if !s.Interrupted || len(s.Trials) == 0 || !s.Trials[0].Max || len(s.Checks) != len(s.Trials) {
		t.Errorf("search.json: interrupted %v, %d trials, %d check lists; want the trials so far", s.Interrupted, len(s.Trials), len(s.Checks))
	}
	if st := xdptest.ReadJSON[runstats.RunStats](t, filepath.Join(out, soak.FileRun)); st.Search == nil || !st.Search.Interrupted {
		t.Error("run.json has no interrupted search section")
	}
	mine := vethlab.Prefix + fmt.Sprint(cmd.Process.Pid)
	for _, l := range vethlab.Leftovers() {
		if strings.Contains(l, mine) {
			t.Errorf("the child left behind: %s", l)
		}
	}
}
