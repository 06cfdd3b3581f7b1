package soak

import (
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
)

func TestMain(m *testing.M) { xdptest.Main(m, xdptest.RemoveXdphashBinary) }
