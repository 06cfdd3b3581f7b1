package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/report"
)

// TestReportOfRun runs a short virtual-clock run with fq_codel and reports
// on it in every form.
func TestReportOfRun(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.json")
	if _, stderr, code := runXdphash(t, nil, "run", "--synthetic", "datacenter", "--virtual-clock", "--count", "20000",
		"--workers", "2", "--consumer", "fq_codel", "--service-rate", "1Gbit", "--window", "10ms", "--out", run); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	html, js := filepath.Join(dir, "report.html"), filepath.Join(dir, "measures.json")
	stdout, stderr, code := runXdphash(t, nil, "report", run, "--html", html, "--json", js)
	if code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"receive queues", "workers", "flows inside each worker's consumer (fq_codel)", "top flows of worker 0", "note: rps steering and fq_codel"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	// Load per queue and per worker, imbalance, flow shares, throughput
	// per queue and per worker, the kernel's and the workers' drops, depth.
	if n := bytes.Count(page, []byte("<svg")); n != 9 {
		t.Errorf("the HTML page has %d charts, want 9", n)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m report.Measures
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode measures: %v", err)
	}
	if m.SchemaVersion != report.SchemaVersion || len(m.Consumers) != 2 || m.Run.Consumer != "fq_codel" {
		t.Errorf("measures %+v", m)
	}

	// The same from stdin.
	in, err := os.ReadFile(run)
	if err != nil {
		t.Fatal(err)
	}
	if stdin, _, code := runXdphash(t, in, "report", "-"); code != exitOK || stdin != stdout {
		t.Errorf("report of stdin: exit %d, same text %v", code, stdin == stdout)
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema_version": 99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stderr string // its start
		last   string // its end
	}{
		{name: "empty", args: []string{"report", empty}, stderr: "xdphash: " + empty + ": read run statistics: invalid run statistics: the file is empty (want the JSON that xdphash run --out writes)"},
		{name: "no file", args: []string{"report"}, stderr: "Usage:", last: "xdphash: accepts 1 arg(s), received 0\n"},
		{name: "missing", args: []string{"report", filepath.Join(dir, "none.json")}, stderr: "xdphash: open run statistics: "},
		{name: "other schema", args: []string{"report", bad}, stderr: "xdphash: " + bad + ": read run statistics: unsupported run statistics schema: version 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runXdphash(t, nil, tt.args...)
			if code != exitFailure || !strings.HasPrefix(stderr, tt.stderr) || !strings.HasSuffix(stderr, tt.last) {
				t.Errorf("exit %d, stderr %q; want %d, %q…", code, stderr, exitFailure, tt.stderr)
			}
		})
	}
}
