package e2e

import (
	"net"
	"testing"

	"github.com/xdphash/xdphash/internal/kernel"
)

// XDPAttached tells what XDP program the interface iface of the caller's
// namespace runs: "" for none, "native" or "generic" for one attached in
// that mode (source.XDPMode's names), "other" for offload or several.
func XDPAttached(tb testing.TB, iface string) string {
	tb.Helper()
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		tb.Fatalf("find %s: %v", iface, err)
	}
	mode, id, err := kernel.AttachedXDP(ifi.Index)
	switch {
	case err != nil:
		tb.Fatal(err)
	case id == 0:
		return ""
	case mode == 0:
		return "other"
	}
	return mode.String()
}
