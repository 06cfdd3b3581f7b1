package soak

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/runstats"
)

// trafgenConfig writes frames as a trafgen packet configuration: one
// { byte, byte, ... } block per frame, sent round robin.
func trafgenConfig(tb testing.TB, frames [][]byte) string {
	tb.Helper()
	var b strings.Builder
	for _, f := range frames {
		b.WriteString("{ ")
		for i, c := range f {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "0x%02x", c)
		}
		b.WriteString(" }\n")
	}
	path := filepath.Join(tb.TempDir(), "frames.cfg")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestTrafgen feeds the engine from a generator nobody here wrote:
// netsniff-ng's trafgen, sending the corpus's base frames round robin out of
// the lab's peer end. Every frame must be received exactly once (the sampler
// keeps every frame: Every 1), and each must hash as the offline dissector
// and hash say.
func TestTrafgen(t *testing.T) {
	xdptest.RequireRoot(t)
	trafgen, err := exec.LookPath("trafgen")
	if err != nil {
		xdptest.Unavailable(t, "trafgen not found (apt-get install netsniff-ng): %v", err)
	}
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2, Named: true}) // named: for ip netns exec
	var frames [][]byte
	for _, f := range corpus.Bases() {
		if len(f.Data) >= 14 && len(f.Data) <= 1514 {
			frames = append(frames, f.Data)
		}
	}
	const rounds = 20
	n := rounds * len(frames)

	src, err := source.OpenAFXDP(source.AFXDPConfig{Iface: lab.Host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	sampler, err := pipeline.NewSampler(pipeline.SamplerConfig{Loops: len(src.Queues()), Every: 1, PerLoop: n})
	if err != nil {
		t.Fatal(err)
	}
	key := hash.RandomKey()
	engine, err := pipeline.NewEngine(pipeline.EngineConfig{
		Source: src, Steering: hash.SteerConfig{Workers: 2, Key: key},
		Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Sampler: sampler,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := xdptest.Go(func() (*runstats.RunStats, error) { return engine.Run(ctx) })

	// -P 1: one process, so that -n counts all frames; -A: leave the
	// system's socket memory sysctls alone; a gap keeps the AF_XDP rings
	// from overflowing, so that every frame must arrive.
	cmd := exec.Command("ip", "netns", "exec", lab.NSName, trafgen, "--dev", lab.Peer, "--conf", trafgenConfig(t, frames),
		"-n", fmt.Sprint(n), "--cpus", "1", "--no-sock-mem", "--gap", "20us")
	if out, err := cmd.CombinedOutput(); err != nil {
		cancel()
		<-done
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	// Polled, for 5 s at most: the engine's counters signal nothing.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var got uint64
		for _, q := range engine.Stats().Queues {
			got += q.Stats.Frames
		}
		if got >= uint64(n) {
			break
		}
	}
	cancel()
	r := <-done
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if st := r.Value; st.Accounting.Received != uint64(n) {
		t.Errorf("received %d frames, trafgen sent %d; kernel drops %v", st.Accounting.Received, n, st.Accounting.KernelDrops)
	}

	want := map[string]int{}
	for _, f := range frames {
		want[string(f)] += rounds
	}
	samples := sampler.Samples()
	got := map[string]int{}
	for _, s := range samples {
		got[string(s.Frame)]++
	}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("frame %x: received %d times, want %d", f, got[f], w)
		}
	}
	for f, g := range got {
		if _, ok := want[f]; !ok {
			t.Errorf("frame %x received %d times, never sent", f, g)
		}
	}
	hc, sc, sum := checkSamples(samples, sampler.Taken(), key, 2)
	if !hc.Pass || !sc.Pass {
		t.Errorf("%s: %s\n%s: %s", hc.Name, hc.Detail, sc.Name, sc.Detail)
	}
	if sum.Checked != n {
		t.Errorf("checked %d samples, want every frame: %d", sum.Checked, n)
	}
}
