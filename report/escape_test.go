package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/runstats"
)

// TestTextEscapesControl: strings a run.json supplies reach the text report
// with their control characters escaped: no escape sequence reaches the
// terminal, and no string starts a line of its own.
func TestTextEscapesControl(t *testing.T) {
	st := simulatedRun(t, 10, 2, 2, 50*time.Millisecond)
	st.Config.Source = "synthetic:\x1b[2J\x1b[31mpwned"
	st.Config.Steer = "rps\nreceived 0, processed 0: balanced"
	st.Config.Consumer = "fifo\x07\x9b"
	st.Workers[0].Drops[runstats.DropReason("ring_full\x1b]0;title\x07")] = 0
	st.Workers[0].Consumer.Drops[runstats.DropReason("x\r")] = 0
	if len(st.Workers[0].Consumer.Flows.Top) > 0 {
		st.Workers[0].Consumer.Flows.Top[0].Src = "198.18.0.1\x1b[A"
	}
	var got bytes.Buffer
	if err := WriteText(&got, st); err != nil {
		t.Fatal(err)
	}
	for i, c := range got.Bytes() {
		if c < 0x20 && c != '\n' || c == 0x7f {
			t.Fatalf("control byte %#x at %d in:\n%s", c, i, got.String())
		}
	}
	if !utf8Clean(got.String()) {
		t.Errorf("a C1 control character reached the report:\n%s", got.String())
	}
	if strings.Contains(got.String(), "\nreceived 0") {
		t.Errorf("a string started a line of its own:\n%s", got.String())
	}
	if !strings.Contains(got.String(), `synthetic:\x1b[2J\x1b[31mpwned`) {
		t.Errorf("the source is not shown escaped:\n%s", got.String())
	}
}

func utf8Clean(s string) bool {
	for _, r := range s {
		if r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}
