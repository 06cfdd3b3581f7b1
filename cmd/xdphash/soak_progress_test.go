package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestSoakBarTimes: the soak's bar shows the time elapsed and left of its
// fixed duration, not a rate's prediction ("3% [1s:29s]" on a 60 s run).
func TestSoakBarTimes(t *testing.T) {
	var buf bytes.Buffer
	bar := newSoakBar(&buf, time.Minute)
	bar.update(15*time.Second+300*time.Millisecond, "1.00 Mpps received, 0 dropped")
	out := buf.String()
	if !strings.Contains(out, "soak: 15s of 1m0s, 45s left: 1.00 Mpps received") {
		t.Errorf("the bar at 15 s of 60 s: %q", out)
	}
	if strings.Contains(out, "[15s:") || strings.Contains(out, "[0s:") {
		t.Errorf("the bar predicts the time from a rate: %q", out)
	}
	if !strings.Contains(out, "25%") {
		t.Errorf("the bar at 15 s of 60 s is not at 25%%: %q", out)
	}
	if got := soakTimes(70*time.Second, time.Minute); got != "1m0s of 1m0s, 0s left" {
		t.Errorf("past the end: %q", got)
	}
}
