package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestTableRoundTrip(t *testing.T) {
	rows := []row{
		{name: "a", path: "fast:eth_ip", per: [numLoops]float64{loopEmpty: 10, loopSlow: 210, loopFast: 110, loopHash: 400, loopSip: 350, loopClosed: 215}},
		{name: "b", path: "slow", per: [numLoops]float64{loopEmpty: 10, loopSlow: 60, loopFast: 70, loopClosed: 62}},
		{name: "decline:vlan", path: "slow", kind: rowDecline, per: [numLoops]float64{loopEmpty: 10, loopSlow: 130, loopFast: 250, loopClosed: 135}},
		{name: "auto-hit:vlan", kind: rowAutoHit, per: [numLoops]float64{loopEmpty: 10, loopFast: 110, loopClosed: 170}},
		{name: "auto-miss:vlan", kind: rowAutoMiss, per: [numLoops]float64{loopEmpty: 10, loopFast: 230, loopClosed: 170}},
		{name: "batch:ipv4", kind: rowBatch, per: [numLoops]float64{loopEmpty: 10, loopHash: 350, loopBatch: 180, loopHashRev: 430, loopBatchRev: 210}},
		{name: "descend:vxlan", path: "fast:vxlan", kind: rowDescend, per: [numLoops]float64{loopEmpty: 10, loopSlow: 90, loopDescend: 410, loopFast: 160, loopClosed: 440}},
	}
	var buf bytes.Buffer
	writeTable(&buf, rows, 64)
	got, err := parseTable(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"a": 100, "b": 60, "decline:vlan": 240, "closed:a": 205, "closed:b": 52, "closed:decline:vlan": 125, "batch:ipv4": 170,
		"descend:vxlan": 150, "closed:descend:vxlan": 430}
	if len(got) != len(want) {
		t.Errorf("parseTable(writeTable) = %v, want %v\n%s", got, want, buf.String())
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("parseTable(writeTable)[%q] = %v, want %v\n%s", k, got[k], v, buf.String())
		}
	}
	// The batch row: single 340, batch 170, ratio 0.50; rev 420, 200, 0.48.
	if !strings.Contains(buf.String(), "340.0   170.0  0.50   420.0       200.0      0.48") {
		t.Errorf("the batch row does not show single 340, batch 170, ratio 0.50, rev 420, 200, 0.48:\n%s", buf.String())
	}
	// The descent row: outer 80, descended 400, fast 150, closed 430, D = -250.
	if !strings.Contains(buf.String(), "vxlan    fast:vxlan  80.0   400.0      150.0  430.0   -250.0") {
		t.Errorf("the descent row does not show its path, outer 80, descended 400, fast 150, closed 430, D -250:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "+120.0") {
		t.Errorf("the decline row does not show C = decline - slow = +120:\n%s", buf.String())
	}
	// Auto mode: S = 170 - 110, C = 230 - 170, p_be = 60 / 120.
	if !strings.Contains(buf.String(), "60.0  60.0  0.50") {
		t.Errorf("the auto row does not show S = 60, C = 60, p_be = 0.50:\n%s", buf.String())
	}
}

func TestRegressions(t *testing.T) {
	committed := map[string]float64{"a": 100, "b": 60, "gone": 5, "decline:gre": 200, "decline:vlan": 250, "closed:a": 100, "closed:b": 100}
	rows := []row{
		{name: "a", per: [numLoops]float64{loopFast: 102, loopClosed: 103}},             // +2%: allowed; closed +3%: a regression
		{name: "b", per: [numLoops]float64{loopFast: 61.3, loopClosed: 90}},             // +2.2%: a regression; closed fell
		{name: "new", per: [numLoops]float64{loopFast: 500}},                            // not committed: not judged
		{name: "decline:gre", kind: rowDecline, per: [numLoops]float64{loopFast: 205}},  // +2.5%: a regression
		{name: "decline:vlan", kind: rowDecline, per: [numLoops]float64{loopFast: 200}}, // fell: allowed
	}
	bad := regressions(committed, rows, 0.02)
	wantPrefixes := []string{"b:", "closed:a:", "decline:gre:", "gone:"}
	if len(bad) != len(wantPrefixes) {
		t.Fatalf("regressions = %q, want %q", bad, wantPrefixes)
	}
	for i, p := range wantPrefixes {
		if !strings.HasPrefix(bad[i], p) {
			t.Errorf("regressions = %q, want %q", bad, wantPrefixes)
		}
	}
}

func TestClosedOverSlow(t *testing.T) {
	rows := []row{
		{name: "a", per: [numLoops]float64{loopSlow: 80, loopClosed: 85}},                                // +5: within
		{name: "b", per: [numLoops]float64{loopSlow: 80, loopClosed: 86}},                                // +6: over
		{name: "decline:vlan", kind: rowDecline, per: [numLoops]float64{loopSlow: 120, loopClosed: 100}}, // below
		{name: "decline:gre", kind: rowDecline, per: [numLoops]float64{loopSlow: 120, loopClosed: 130}},  // +10: over
		{name: "auto-hit:gre", kind: rowAutoHit, per: [numLoops]float64{loopClosed: 300}},                // not judged
	}
	bad := closedOverSlow(rows, 5)
	if len(bad) != 2 || !strings.HasPrefix(bad[0], "b:") || !strings.HasPrefix(bad[1], "decline:gre:") {
		t.Errorf("closedOverSlow = %q, want b and decline:gre", bad)
	}
}

func TestParseTableRejects(t *testing.T) {
	for name, text := range map[string]string{
		"empty":                "# only a comment\n",
		"short row":            "case path slow closed fast hash setup setup-rev\nx fast:eth_ip 1 2\n",
		"not numbers":          "x fast:eth_ip 1 2 two 3 4 5 6\n",
		"short decline":        "gate slow closed decline C\nvlan 1 2 3\n",
		"decline not a number": "gate slow closed decline C\nvlan 1 2 three +2\n",
		"short descent":        "descend path outer descended fast closed D\nvxlan slow 1 2 3\n",
	} {
		if _, err := parseTable([]byte(text)); err == nil {
			t.Errorf("%s: parseTable accepted %q", name, text)
		}
	}
}

// TestCommittedTableParses keeps the committed table readable by the check.
func TestCommittedTableParses(t *testing.T) {
	b, err := os.ReadFile("../../testdata/instructions.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseTable(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases() {
		if _, ok := got[c.Name]; !ok {
			t.Errorf("committed table has no row %q", c.Name)
		}
		if _, ok := got[closedKey(c.Name)]; !ok {
			t.Errorf("committed table has no closed column for row %q", c.Name)
		}
	}
	for _, nm := range nearMisses() {
		if _, ok := got[rowName(rowDecline, nm.gate)]; !ok {
			t.Errorf("committed table has no decline of gate %v", nm.gate)
		}
	}
	for _, br := range batchRows {
		if _, ok := got["batch:"+br.name]; !ok {
			t.Errorf("committed table has no batch row %q", br.name)
		}
	}
	for _, dr := range descendRows() {
		if _, ok := got["descend:"+dr.name]; !ok {
			t.Errorf("committed table has no descent row %q", dr.name)
		}
	}
}
