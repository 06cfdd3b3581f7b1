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
}

// TestRSSShowNeedsIface refuses a missing --iface.
func TestRSSShowNeedsIface(t *testing.T) {
	_, stderr, code := runXdphash(t, nil, "rss", "show")
	if code == 0 || !strings.Contains(stderr, "--iface") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
