//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestRSSShowVeth: a veth has no RSS to show, and says so.
func TestRSSShowVeth(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{})
	_, stderr, code := runXdphash(t, nil, "rss", "show", "--iface", lab.Host)
	if code == 0 || !strings.Contains(stderr, "not supported") || !strings.Contains(stderr, "veth") {
		t.Errorf("rss show on a veth: exit %d, stderr %q; want a not-supported error naming veth", code, stderr)
	}
	stdout, stderr, code := runXdphash(t, nil, "rss", "show", "--iface", lab.Host, "--json")
	if code == 0 || stdout != "" || !strings.Contains(stderr, "not supported") {
		t.Errorf("rss show --json on a veth: exit %d, stdout %q, stderr %q; want nothing written and a not-supported error", code, stdout, stderr)
	}
}

// TestRSSShowNeedsIface refuses a missing --iface.
func TestRSSShowNeedsIface(t *testing.T) {
	_, stderr, code := runXdphash(t, nil, "rss", "show")
	if code == 0 || !strings.Contains(stderr, "--iface") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
