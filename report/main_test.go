package report

import (
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestMain also fails the run when a browser a test started outlives it.
func TestMain(m *testing.M) { xdptest.Main(m) }
