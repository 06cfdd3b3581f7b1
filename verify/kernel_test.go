package verify_test

import (
	"math/rand/v2"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/testenv"
	"github.com/xdphash/xdphash/verify"
)

func newOracle(tb testing.TB) *kernel.HashOracle {
	tb.Helper()
	testenv.RequireRoot(tb)
	o, err := kernel.NewHashOracle()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { o.Close() })
	return o
}

// flows are the xdphash sides checked against the kernel: the slow path, and a
// Dissector with every fast-path gate open.
var flows = map[string]func(hash.Key) verify.FlowFunc{
	"slow": verify.KernelFlow,
	"fast": func(k hash.Key) verify.FlowFunc { return verify.DissectorFlow(k, dissect.AllGates) },
}

// metadataTags are corpus.MetadataTags as dissect.VLANTags: none, 802.1Q,
// 802.1AD.
var metadataTags = func() []dissect.VLANTag {
	var out []dissect.VLANTag
	for _, m := range corpus.MetadataTags() {
		out = append(out, dissect.VLANTag{TPID: m.TPID, TCI: m.TCI})
	}
	return out
}()

// tagName is a frame name's suffix for a metadata tag: "" for none.
func tagName(tag dissect.VLANTag) string {
	if tag.IsZero() {
		return ""
	}
	return " hwtag=" + tag.String()
}

// kernelHashTagged is the oracle's hash of frame received with tag.
func kernelHashTagged(o *kernel.HashOracle, frame []byte, tag dissect.VLANTag) (uint32, error) {
	return o.HashTagged(frame, tag.TPID, tag.TCI)
}

// TestCorpusPartitionMatchesKernel is the promise of the product: over the whole
// corpus (every shape, its single-field mutation families, truncations at every
// byte, nesting around the bound), each frame received without a metadata VLAN
// tag, with an 802.1Q one and with an 802.1AD one, xdphash groups frames into
// flows exactly as the running kernel's skb_get_hash does. The three copies of
// the corpus share one partition: a tagged frame must land in the flow of the
// same frame with the tag in line where the kernel puts it there.
func TestCorpusPartitionMatchesKernel(t *testing.T) {
	o := newOracle(t)
	frames := corpus.Build()
	if len(frames) < 2000 {
		t.Fatalf("corpus has %d frames, want at least 2000", len(frames))
	}
	type received struct {
		corpus.Frame
		tag dissect.VLANTag
	}
	var all []received
	for _, tag := range metadataTags {
		for _, f := range frames {
			all = append(all, received{f, tag})
		}
	}
	kernelHashes := make([]uint32, len(all))
	distinct := map[uint32]bool{}
	for i, r := range all {
		h, err := kernelHashTagged(o, r.Data, r.tag)
		if err != nil {
			t.Fatalf("%s%s: %v", r.Name, tagName(r.tag), err)
		}
		kernelHashes[i] = h
		distinct[h] = true
	}
	t.Logf("%d frames (%d corpus frames with %d metadata tags), %d kernel flows, kernel %s",
		len(all), len(frames), len(metadataTags), len(distinct), kernel.Release())
	for name, flow := range flows {
		t.Run(name, func(t *testing.T) {
			ours := flow(hash.RandomKey())
			samples := make([]verify.Sample, len(all))
			for i, r := range all {
				samples[i] = verify.NewTaggedSample(r.Name+tagName(r.tag), r.Data, r.tag, ours, kernelHashes[i])
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
	o := newOracle(t)
	rng := rand.New(rand.NewPCG(2026, 11))
	ours := verify.KernelFlow(hash.RandomKey())
	var pairs [][2]verify.Sample
	for _, b := range corpus.Bases() {
		for _, tag := range metadataTags {
			kb, err := kernelHashTagged(o, b.Data, tag)
			if err != nil {
				t.Fatalf("%s%s: %v", b.Name, tagName(tag), err)
			}
			base := verify.NewTaggedSample(b.Name+tagName(tag), b.Data, tag, ours, kb)
			for range 40 {
				m, mut := corpus.Mutate(rng, b.Data, nil)
				km, err := kernelHashTagged(o, m, tag)
				if err != nil {
					continue // refused by the test run: nothing to compare
				}
				pairs = append(pairs, [2]verify.Sample{base, verify.NewTaggedSample(b.Name+"/"+mut.String()+tagName(tag), m, tag, ours, km)})
			}
		}
	}
	for _, d := range verify.Pairs(pairs) {
		t.Errorf("divergence: %s", d)
	}
}

// FuzzKernelAgreement mutates a frame and checks that "same flow or not" for the
// pair agrees with the running kernel, with the pair received without a
// metadata VLAN tag, with an 802.1Q and with an 802.1AD one; and, for each
// tag, for the frame with the tag in the metadata against the frame with the
// tag in line. The corpus's base frames are the seeds.
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
		type received struct {
			name  string
			frame []byte
			tag   dissect.VLANTag
		}
		var pairs [][2]received
		for _, tag := range metadataTags {
			pairs = append(pairs, [2]received{{"frame", frame, tag}, {mut.String(), m, tag}})
			if !tag.IsZero() {
				pairs = append(pairs, [2]received{{"frame", frame, tag}, {"tag in line", corpus.InsertTag(frame, tag.TPID, tag.TCI), dissect.VLANTag{}}})
			}
		}
		for _, p := range pairs {
			var kh [2]uint32
			for i, r := range p {
				h, err := kernelHashTagged(o, r.frame, r.tag)
				if err != nil && i == 0 && r.tag.IsZero() {
					t.Fatalf("kernel refused a frame FitsOracle accepts: %v", err)
				}
				if err != nil {
					return // a mutation, or a tag in line, the test run refuses
				}
				kh[i] = h
			}
			for name, flow := range flows {
				ours := flow(fuzzKey)
				pair := [2]verify.Sample{
					verify.NewTaggedSample(p[0].name+tagName(p[0].tag), p[0].frame, p[0].tag, ours, kh[0]),
					verify.NewTaggedSample(p[1].name+tagName(p[1].tag), p[1].frame, p[1].tag, ours, kh[1]),
				}
				for _, d := range verify.Pairs([][2]verify.Sample{pair}) {
					t.Errorf("%s: %s", name, d)
				}
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
	testenv.RequireRoot(t)
	if fuzzOracleInst == nil {
		o, err := kernel.NewHashOracle()
		if err != nil {
			t.Fatal(err)
		}
		fuzzOracleInst = o
	}
	return fuzzOracleInst
}
