package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/bench"
)

func TestBenchDissect(t *testing.T) {
	out := filepath.Join(t.TempDir(), "bench.json")
	stdout, stderr, code := runXdphash(t, nil, "bench", "dissect", "--rounds", "5", "--per", "1ms", "--json", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"machine:", "eth_ip", "fast:gre", "gopacket ns", "decline ns"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil || rep.Rounds != 5 || len(rep.Rows) == 0 {
		t.Errorf("JSON report: %v, %+v", err, rep)
	}
}
