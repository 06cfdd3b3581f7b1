package e2e

import (
	"bytes"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
)

// rounds is how many times over the tests send every corpus shape.
const rounds = 3

var testMAC = net.HardwareAddr{0x02, 0x78, 0x68, 0, 0, 1}

// TestFrames checks that every frame keeps its corpus shape and differs from
// its base only where Frames says, and that the frames can be told apart.
func TestFrames(t *testing.T) {
	frames, err := Frames(testMAC, rounds)
	if err != nil {
		t.Fatal(err)
	}
	bases := corpus.Bases()
	if len(frames) != rounds*len(bases) {
		t.Fatalf("%d frames, want %d rounds of %d shapes", len(frames), rounds, len(bases))
	}
	type identity struct {
		keys dissect.FlowKeys
		len  int
	}
	ids := map[identity]int{}
	flows := map[dissect.FlowKeys]int{}
	for i, f := range frames {
		b := bases[i%len(bases)]
		if !bytes.Equal(f[:6], testMAC) {
			t.Errorf("%s (frame %d): destination %x, want %s", b.Name, i, f[:6], testMAC)
		}
		baseShape, baseOK := dissect.ClassifyFrame(b.Data)
		if s, ok := dissect.ClassifyFrame(f); s != baseShape || ok != baseOK {
			t.Errorf("%s (frame %d): class %v %v, the base's %v %v", b.Name, i, s, ok, baseShape, baseOK)
		}
		before, after := keysOf(b.Data), keysOf(f)
		if !sameOutside(&before, &after, portsRegion) && !sameOutside(&before, &after, addrsRegion) {
			t.Errorf("%s (frame %d): keys changed outside the ports and the addresses:\n-%x\n+%x", b.Name, i, before, after)
		}
		if len(f) > len(b.Data) && bytes.ContainsFunc(f[len(b.Data):], func(r rune) bool { return r != 0 }) {
			t.Errorf("%s (frame %d): padded with non-zero bytes", b.Name, i)
		}
		id := identity{after, len(f)}
		if j, dup := ids[id]; dup {
			t.Errorf("%s: frames %d and %d have the same keys and length", b.Name, j, i)
		}
		ids[id] = i
		flows[after]++
	}
	// The shapes whose keys hold neither ports nor addresses keep their
	// flow: all but those are flows of their own.
	var shared []string
	for i, f := range frames[:len(bases)] {
		if flows[keysOf(f)] > 1 {
			shared = append(shared, bases[i].Name)
		}
	}
	t.Logf("%d frames, %d flows; shapes that keep their flow: %s", len(frames), len(flows), strings.Join(shared, " "))
	if len(shared) > len(bases)/5 {
		t.Errorf("%d of %d shapes keep their flow", len(shared), len(bases))
	}
	again, _ := Frames(testMAC, rounds)
	if !slices.EqualFunc(frames, again, bytes.Equal) {
		t.Error("a second call made other frames")
	}
}

func TestFramesErrors(t *testing.T) {
	tests := []struct {
		name   string
		mac    net.HardwareAddr
		rounds int
		says   string
	}{
		{"short MAC", net.HardwareAddr{2, 0, 0}, 1, "want 6 bytes"},
		{"more frames than ports and addresses", testMAC, maxFrames, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Frames(tt.mac, tt.rounds); err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Frames(%s, %d) = %v, want an error saying %q", tt.mac, tt.rounds, err, tt.says)
			}
		})
	}
}
