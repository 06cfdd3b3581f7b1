package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDissectStatsOnly: --stats alone prints the statistics and no frames;
// the table has a gate column only where the path has gates, and says which
// path dissected; an explicit --format prints the frames too, the
// statistics on stderr.
func TestDissectStatsOnly(t *testing.T) {
	capture := filepath.Join(t.TempDir(), "sample.pcapng")
	if _, stderr, code := runXdphash(t, nil, "pktgen", "--profile", "datacenter", "--count", "200", "--write", capture); code != exitOK {
		t.Fatalf("pktgen --write: exit %d, %s", code, stderr)
	}
	key := []string{"--hash-key", testKeyHex}

	stdout, _, code := runXdphash(t, nil, append([]string{"dissect", capture, "--stats"}, key...)...)
	if code != exitOK {
		t.Fatalf("dissect --stats: exit %d", code)
	}
	if strings.Contains(stdout, " hash ") || strings.Contains(stdout, "\n0 ok ") || strings.HasPrefix(stdout, "#") {
		t.Errorf("dissect --stats printed frames:\n%s", stdout)
	}
	if !strings.HasPrefix(stdout, "path slow") || strings.Contains(stdout, "shape    gate") || strings.Contains(stdout, "closed") {
		t.Errorf("dissect --stats on the default (slow) path:\n%s", stdout)
	}
	if !strings.Contains(stdout, "total: 0 fast, 200 slow-path runs") {
		t.Errorf("dissect --stats: no total of 200 slow-path runs:\n%s", stdout)
	}

	stdout, _, _ = runXdphash(t, nil, append([]string{"dissect", capture, "--stats", "--gates", "vlan"}, key...)...)
	if !strings.HasPrefix(stdout, "path fast") || !strings.Contains(stdout, "vlan    open") || !strings.Contains(stdout, "eth_ip  closed") {
		t.Errorf("dissect --stats --gates vlan:\n%s", stdout)
	}

	stdout, stderr, _ := runXdphash(t, nil, append([]string{"dissect", capture, "--stats", "--format", "text"}, key...)...)
	if lines := strings.Count(stdout, "\n"); lines != 201 || !strings.Contains(stderr, "path slow") {
		t.Errorf("dissect --stats --format text: %d lines on stdout (want the header and 200 frames), stderr:\n%s", lines, stderr)
	}
}
