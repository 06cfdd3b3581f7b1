package main

import (
	"bytes"
	"testing"
)

func TestNICTableRoundTrip(t *testing.T) {
	rows := []nicRow{
		{name: "eth+IPv4+TCP", report: "tcp4", per: [numNICLoops]float64{nicEmpty: 10, nicParse: 110, nicHash: 310, nicHashInner: 320}},
		{name: "PPPoE+IPv4+TCP", report: "none", per: [numNICLoops]float64{nicEmpty: 10, nicParse: 40, nicHash: 50, nicHashInner: 50}},
	}
	var buf bytes.Buffer
	writeNICTable(&buf, rows, 64)
	got, err := parseNICTable(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["eth+IPv4+TCP"] != 300 || got["PPPoE+IPv4+TCP"] != 40 {
		t.Errorf("parseNICTable(writeNICTable) = %v, want the nic column less the empty loop\n%s", got, buf.String())
	}
	if _, err := parseNICTable([]byte("shape report parse nic nic-inner\nx tcp4 1 2\n")); err == nil {
		t.Error("parseNICTable accepted a short row")
	}
}
