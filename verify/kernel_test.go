package verify_test

import (
	"math/rand/v2"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/verify"
)

// TestMain closes the fuzz targets' oracle, which lives as long as the
// process, before it looks for what the tests left behind.
func TestMain(m *testing.M) {
	xdptest.Main(m, func() {
		if fuzzOracleInst != nil {
			fuzzOracleInst.Close()
		}
	})
}

// flows are the xdphash sides checked against the kernel: the slow path, and a
// Dissector with every fast-path gate open.
var flows = map[string]func(hash.Key) verify.FlowFunc{
	"slow": verify.KernelFlow,
	"fast": func(k hash.Key) verify.FlowFunc { return verify.DissectorFlow(k, dissect.AllGates) },
}

// TestCorpusPartitionMatchesKernel is the promise of the product: over the whole
// corpus (every shape, its single-field mutation families, truncations at every
// byte, nesting around the bound), xdphash groups frames into flows exactly as
// the running kernel's skb_get_hash does.
func TestCorpusPartitionMatchesKernel(t *testing.T) {
	o := xdptest.Open(t, kernel.NewHashOracle)
	frames := corpus.Build()
	if len(frames) < 2000 {
		t.Fatalf("corpus has %d frames, want at least 2000", len(frames))
	}
	kernelHashes := make([]uint32, len(frames))
	distinct := map[uint32]bool{}
	for i, f := range frames {
		h, err := o.Hash(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		kernelHashes[i] = h
		distinct[h] = true
	}
	t.Logf("%d frames, %d kernel flows, kernel %s", len(frames), len(distinct), kernel.Release())
	for name, flow := range flows {
		t.Run(name, func(t *testing.T) {
			ours := flow(hash.RandomKey())
			samples := make([]verify.Sample, len(frames))
			for i, f := range frames {
				samples[i] = verify.NewSample(f.Name, f.Data, ours, kernelHashes[i])
			}
			for i, d := range verify.Partition(samples) {
				if i == 10 {
					t.Errorf("... and more")
					break
				}
				t.Errorf("divergence: %s", d)
			}
		})
	}
}

// TestRandomMutationsMatchKernel compares random mutations of every base frame
// with their base, pair by pair.
func TestRandomMutationsMatchKernel(t *testing.T) {
	o := xdptest.Open(t, kernel.NewHashOracle)
	rng := rand.New(rand.NewPCG(2026, 11))
	ours := verify.KernelFlow(hash.RandomKey())
	var pairs [][2]verify.Sample
	for _, b := range corpus.Bases() {
		kb, err := o.Hash(b.Data)
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		base := verify.NewSample(b.Name, b.Data, ours, kb)
		for range 40 {
			m, mut := corpus.Mutate(rng, b.Data, nil)
			km, err := o.Hash(m)
			if err != nil {
				continue // refused by the test run: nothing to compare
			}
			pairs = append(pairs, [2]verify.Sample{base, verify.NewSample(b.Name+"/"+mut.String(), m, ours, km)})
		}
	}
	for _, d := range verify.Pairs(pairs) {
		t.Errorf("divergence: %s", d)
	}
}

// FuzzKernelAgreement mutates a frame and checks that "same flow or not" for the
// pair agrees with the running kernel. The corpus's base frames are the seeds.
func FuzzKernelAgreement(f *testing.F) {
	for _, b := range corpus.Bases() {
		f.Add(b.Data, uint64(1))
	}
	f.Fuzz(func(t *testing.T, frame []byte, seed uint64) {
		o := fuzzOracle(t)
		if !corpus.FitsOracle(frame) {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		m, mut := corpus.Mutate(rng, frame, nil)
		ka, err := o.Hash(frame)
		if err != nil {
			t.Fatalf("kernel refused a frame FitsOracle accepts: %v", err)
		}
		kb, err := o.Hash(m)
		if err != nil {
			return
		}
		for name, flow := range flows {
			ours := flow(fuzzKey)
			pair := [2]verify.Sample{verify.NewSample("frame", frame, ours, ka), verify.NewSample(mut.String(), m, ours, kb)}
			for _, d := range verify.Pairs([][2]verify.Sample{pair}) {
				t.Errorf("%s: %s", name, d)
			}
		}
	})
}

var (
	fuzzKey        = hash.RandomKey()
	fuzzOracleInst *kernel.HashOracle
)

// fuzzOracle loads the oracle once per fuzzing process: a load per input would
// dominate the run.
func fuzzOracle(t *testing.T) *kernel.HashOracle {
	t.Helper()
	xdptest.RequireRoot(t)
	if fuzzOracleInst == nil {
		o, err := kernel.NewHashOracle()
		if err != nil {
			t.Fatal(err)
		}
		fuzzOracleInst = o
	}
	return fuzzOracleInst
}
