package xdptest

import (
	"strings"
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// TestTemplatesDefault checks that the default mix spans every
// fast-path shape and has frames of no shape.
func TestTemplatesDefault(t *testing.T) {
	frames, err := Templates("default")
	if err != nil {
		t.Fatal(err)
	}
	var shapes [dissect.NumShapes]int
	other := 0
	for _, f := range frames {
		if s, ok := dissect.ClassifyFrame(f); ok {
			shapes[s]++
		} else {
			other++
		}
	}
	for s, n := range shapes {
		if _, tunnel := dissect.Shape(s).Tunnel(); tunnel {
			continue // a class only under a descent policy (ClassifyFrameDescend)
		}
		if n == 0 {
			t.Errorf("no %s frame", dissect.Shape(s))
		}
	}
	if other == 0 {
		t.Error("no frame of no shape")
	}
	if _, err := Templates("nope"); err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("unknown profile: %v", err)
	}
}
