package xdptest

import "testing"

// TestOutputSeen checks that Seen's channel closes when, and only when, a
// whole line holding the text has been written, in any number of writes.
func TestOutputSeen(t *testing.T) {
	var o Output
	early := o.Seen("msg=run ")
	o.Write([]byte("level=DEBUG msg=open\nlevel=DEBUG msg=ru"))
	o.Write([]byte("n source=afxdp"))
	select {
	case <-early:
		t.Fatal("seen before the line ended")
	default:
	}
	o.Write([]byte("\nlevel=INFO msg=done\n"))
	select {
	case <-early:
	default:
		t.Fatalf("not seen after the line ended: %q", o.String())
	}
	select {
	case <-o.Seen("msg=open"):
	default:
		t.Error("a line written before Seen was called is not seen")
	}
	if c := o.Seen("msg=other"); len(o.waits) != 1 || c == nil {
		t.Errorf("%d waits pending, want 1 (the unseen one)", len(o.waits))
	}
}
