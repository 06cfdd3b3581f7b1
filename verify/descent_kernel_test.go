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

// corpusDescent is the policy entering every tunnel, with the FOU table of
// the corpus's UDP tunnel families.
func corpusDescent(tb testing.TB) dissect.Descent {
	tb.Helper()
	d, err := dissect.NewDescent(dissect.AllTunnels,
		dissect.EncapPort{Port: corpus.GUEPort, GUE: true},
		dissect.EncapPort{Port: corpus.FOUPortIPIP, Inner: 4},
		dissect.EncapPort{Port: corpus.FOUPortIPv6, Inner: 41})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// descendedSample is the sample of a descended frame: its keys with the
// quirks undone, against the kernel's hash of the inner frame; false when
// the policy does not descend or the oracle cannot take the inner frame.
func descendedSample(tb testing.TB, o *kernel.HashOracle, h hash.Kernel, name string, frame []byte, p dissect.Descent) (verify.Sample, dissect.Tunnel, bool) {
	tb.Helper()
	d, ok := verify.Descend(frame, p)
	if !ok || !corpus.Comparable(d.Inner) {
		return verify.Sample{}, 0, false
	}
	kh, err := o.HashTagged(d.Inner, d.Tag.TPID, d.Tag.TCI)
	if err != nil {
		tb.Fatalf("%s: inner frame %x: %v", name, d.Inner, err)
	}
	v, _ := h.Hash(&d.Keys)
	return verify.Sample{Name: name, Frame: frame, Tag: d.Tag, Keys: d.Keys, OK: d.OK, Hash: v, KernelHash: kh}, d.Entry.Tunnel, true
}

// TestDescentMatchesKernel is the descent's oracle: over the corpus (the
// UDP tunnel families, their truncations at every byte and mutations, and
// every other frame the policy enters), the descended keys group frames as
// the running kernel's dissection of the decapsulated inner frames does,
// apart from the quirks verify.UndoQuirks undoes by hand.
func TestDescentMatchesKernel(t *testing.T) {
	o := xdptest.Open(t, kernel.NewHashOracle)
	p := corpusDescent(t)
	h := hash.NewKernel(hash.RandomKey())
	var samples []verify.Sample
	per := map[dissect.Tunnel]int{}
	for _, f := range corpus.Build() {
		if s, tun, ok := descendedSample(t, o, h, f.Name, f.Data, p); ok {
			samples = append(samples, s)
			per[tun]++
		}
	}
	rng := rand.New(rand.NewPCG(24, 1))
	for _, b := range corpus.Bases() {
		if _, ok := verify.Descend(b.Data, p); !ok {
			continue
		}
		for range 60 {
			m, mut := corpus.Mutate(rng, b.Data, nil)
			if s, tun, ok := descendedSample(t, o, h, b.Name+"/"+mut.String(), m, p); ok {
				samples = append(samples, s)
				per[tun]++
			}
		}
	}
	t.Logf("%d descended frames %v, kernel %s", len(samples), per, kernel.Release())
	for tun := range dissect.NumTunnels {
		if per[tun] < 20 {
			t.Errorf("%d frames descended into %v, want at least 20", per[tun], tun)
		}
	}
	for i, d := range verify.Partition(samples) {
		if i == 10 {
			t.Errorf("... and more")
			break
		}
		t.Errorf("divergence: %s", d)
	}
}

// FuzzDescentKernel mutates a tunnel frame and checks that "same flow or
// not" for the descended pair (base, mutation) agrees with the running
// kernel's view of the two inner frames.
func FuzzDescentKernel(f *testing.F) {
	for _, b := range corpus.Bases() {
		f.Add(b.Data)
	}
	p := corpusDescent(f)
	h := hash.NewKernel(fuzzKey)
	var bases []verify.Sample
	f.Fuzz(func(t *testing.T, frame []byte) {
		o := fuzzOracle(t)
		if bases == nil {
			for _, b := range corpus.Bases() {
				if s, _, ok := descendedSample(t, o, h, b.Name, b.Data, p); ok {
					bases = append(bases, s)
				}
			}
		}
		s, _, ok := descendedSample(t, o, h, "fuzz", frame, p)
		if !ok {
			return
		}
		var pairs [][2]verify.Sample
		for _, b := range bases {
			pairs = append(pairs, [2]verify.Sample{b, s})
		}
		for _, d := range verify.Pairs(pairs) {
			t.Errorf("divergence: %s", d)
		}
	})
}
