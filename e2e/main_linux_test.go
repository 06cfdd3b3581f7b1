package e2e

import (
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestMain also removes the xdphash binary the tests built.
func TestMain(m *testing.M) { xdptest.Main(m, removeXdphash) }
