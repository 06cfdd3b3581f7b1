package soak

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/xdphash/xdphash/corpus"

	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestSoakVirtio runs the soak in the virtio lab with the corpus's frames
// as a capture (--pcap: every shape the dissector knows, mutations,
// truncations), 4 queue pairs, at up to 10 kpps for 8 s, and every check
// must pass: the guest's run (ended as asked, exit 0), the accounting from
// the generator to the engine, the sampled frames' hash and worker
// recomputed here, the guest run's memory and goroutines, and, for every
// frame the device hashed, the device hash and the queue. (The profile's
// frames go through the device in internal/virtiolab's
// TestDeviceHashAndQueue.)
func TestSoakVirtio(t *testing.T) {
	xdptest.RequireRoot(t)
	if _, err := exec.LookPath(virtiolab.QEMU); err != nil {
		xdptest.Unavailable(t, "the virtio lab needs %s (apt-get install qemu-system-x86): %v", virtiolab.QEMU, err)
	}
	cfg := Config{
		Lab: LabVirtio, GuestBinary: xdptest.XdphashBinary(t),
		// 8 s: the memory check wants 4 samples after its warm-up, one a
		// second, and under TCG on a loaded host a read can time out.
		Duration: 8 * time.Second, Queues: 4, Workers: 2, Rate: DefaultVirtioRate, Pcap: corpusPcap(t),
	}
	res, err := Run(context.Background(), cfg)
	if errors.Is(err, virtiolab.ErrGuestPanicked) {
		// The emulation now and then faults in the guest's boot under TCG on
		// a loaded host (docs/virtio-lab.md): one more boot; a second fails.
		t.Logf("the guest kernel panicked in its boot; booting it again once: %v", err)
		res, err = Run(context.Background(), cfg)
	}
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
	// How many frames go in 8 s depends on the machine's load: the test
	// asserts counts that must agree, not how many there were.
	if len(res.Checks) != 7 || res.Generator.Frames == 0 {
		t.Errorf("%d checks, %d frames sent; want 7 checks on the frames sent", len(res.Checks), res.Generator.Frames)
	}
	if res.Samples.Checked == 0 || len(res.Memory) == 0 {
		t.Errorf("%d samples checked, %d memory samples; want the guest's frames and memory", res.Samples.Checked, len(res.Memory))
	}
	if err := res.WriteFiles(t.TempDir()); err != nil {
		t.Error(err)
	}
}

// corpusPcap writes the corpus's frames that fit a 1500-byte MTU to a pcap
// file of the test's own.
func corpusPcap(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "corpus.pcap")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, fr := range corpus.Build() {
		if len(fr.Data) < 14 || len(fr.Data) > 1514 {
			continue
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, 0), CaptureLength: len(fr.Data), Length: len(fr.Data)}
		if err := w.WritePacket(ci, fr.Data); err != nil {
			tb.Fatal(err)
		}
		n++
	}
	tb.Logf("corpus capture: %d frames", n)
	return path
}

// TestSoakPcapVeth runs the veth soak with the corpus as a capture: the
// generator sends its frames, and the accounting, hash and steering checks
// pass on them.
func TestSoakPcapVeth(t *testing.T) {
	xdptest.RequireRoot(t)
	res, err := Run(context.Background(), Config{Duration: time.Second, Queues: 2, Workers: 2, Rate: 20000, Mode: "afxdp", Pcap: corpusPcap(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(res.Generator.Profile, "/corpus.pcap") || res.Generator.Frames == 0 {
		t.Errorf("generator: profile %q, %d frames", res.Generator.Profile, res.Generator.Frames)
	}
	for _, c := range res.Checks {
		t.Logf("%s %s: %s", c.Verdict(), c.Name, c.Detail)
		if !c.Pass && !c.Skipped {
			t.Errorf("check failed: %s", c.Name)
		}
	}
}
