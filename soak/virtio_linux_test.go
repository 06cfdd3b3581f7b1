package soak

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestSoakVirtio runs the soak in the virtio lab: 4 queue pairs, the
// datacenter profile at up to 10 kpps for 2.5 s, and every check must pass: the guest's run, the accounting from the generator to
// the engine, the device hash of every frame and its queue.
func TestSoakVirtio(t *testing.T) {
	xdptest.RequireRoot(t)
	if _, err := exec.LookPath(virtiolab.QEMU); err != nil {
		xdptest.Unavailable(t, "the virtio lab needs %s (apt-get install qemu-system-x86): %v", virtiolab.QEMU, err)
	}
	res, err := Run(context.Background(), Config{
		Lab: LabVirtio, GuestBinary: xdptest.XdphashBinary(t),
		Duration: 2500 * time.Millisecond, Queues: 4, Workers: 2, Rate: DefaultVirtioRate,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generator: %d frames", res.Generator.Frames)
	for _, c := range res.Checks {
		t.Logf("%s %s: %s", c.Verdict(), c.Name, c.Detail)
		if !c.Pass {
			t.Errorf("check failed: %s", c.Name)
		}
	}
	// How many frames go in 2.5 s depends on the machine's load: the test
	// asserts counts that must agree, not how many there were.
	if len(res.Checks) != 4 || res.Generator.Frames == 0 {
		t.Errorf("%d checks, %d frames sent; want 4 checks on the frames sent", len(res.Checks), res.Generator.Frames)
	}
	if err := res.WriteFiles(t.TempDir()); err != nil {
		t.Error(err)
	}
}
