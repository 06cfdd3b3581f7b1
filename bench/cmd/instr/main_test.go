package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestTableRoundTrip(t *testing.T) {
	rows := []row{
		{name: "a", path: "fast:eth_ip", per: [numLoops]float64{loopEmpty: 10, loopSlow: 210, loopFast: 110, loopHash: 400, loopSip: 350}},
		{name: "b", path: "slow", per: [numLoops]float64{loopEmpty: 10, loopSlow: 60, loopFast: 70}},
	}
	var buf bytes.Buffer
	writeTable(&buf, rows, 64)
	got, err := parseTable(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a"] != 100 || got["b"] != 60 {
		t.Errorf("parseTable(writeTable) = %v, want a:100 b:60\n%s", got, buf.String())
	}
}

func TestRegressions(t *testing.T) {
	committed := map[string]float64{"a": 100, "b": 60, "gone": 5}
	rows := []row{
		{name: "a", per: [numLoops]float64{loopFast: 102}},   // +2%: allowed
		{name: "b", per: [numLoops]float64{loopFast: 61.3}},  // +2.2%: a regression
		{name: "new", per: [numLoops]float64{loopFast: 500}}, // not committed: not judged
	}
	bad := regressions(committed, rows, 0.02)
	if len(bad) != 2 || !strings.HasPrefix(bad[0], "b:") || !strings.HasPrefix(bad[1], "gone:") {
		t.Errorf("regressions = %q, want b and gone", bad)
	}
}

func TestParseTableRejects(t *testing.T) {
	for name, text := range map[string]string{
		"empty":       "# only a comment\n",
		"short row":   "case path slow fast hash setup setup-rev\nx fast:eth_ip 1 2\n",
		"not numbers": "x fast:eth_ip 1 two 3 4 5\n",
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
	}
}
