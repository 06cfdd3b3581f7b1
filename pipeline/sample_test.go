package pipeline

import (
	"bytes"
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

func TestSampler(t *testing.T) {
	for _, tt := range []struct {
		name                        string
		cfg                         SamplerConfig
		offers                      int
		wantTaken                   uint64
		wantKept                    int
		wantFirstSeq, wantTruncated int
	}{
		// Loop 0 starts its countdown at 1: the first frame is sampled.
		{name: "every frame", cfg: SamplerConfig{Loops: 1, Every: 1, PerLoop: 8, MaxLen: 16}, offers: 5, wantTaken: 5, wantKept: 5, wantFirstSeq: 0},
		{name: "1 in 3", cfg: SamplerConfig{Loops: 1, Every: 3, PerLoop: 8, MaxLen: 16}, offers: 10, wantTaken: 4, wantKept: 4, wantFirstSeq: 0},
		// The oldest samples are overwritten: slot 0 holds the 5th.
		{name: "wraps, keeps the latest", cfg: SamplerConfig{Loops: 1, Every: 1, PerLoop: 4, MaxLen: 16}, offers: 6, wantTaken: 6, wantKept: 4, wantFirstSeq: 4},
		{name: "truncates long frames", cfg: SamplerConfig{Loops: 1, Every: 1, PerLoop: 4, MaxLen: 1}, offers: 2, wantTaken: 2, wantKept: 2, wantFirstSeq: 0, wantTruncated: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSampler(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.offers {
				s.offer(0, []byte{byte(i), 0xee}, dissect.VLANTag{TPID: 0x8100, TCI: uint16(i)}, uint32(i), i%2, 3)
			}
			// A loop past Loops samples nothing.
			s.offer(tt.cfg.Loops, []byte{1}, dissect.VLANTag{}, 1, 0, 0)
			if got := s.Taken(); got != tt.wantTaken {
				t.Errorf("Taken() = %d, want %d", got, tt.wantTaken)
			}
			got := s.Samples()
			if len(got) != tt.wantKept {
				t.Fatalf("kept %d samples, want %d", len(got), tt.wantKept)
			}
			truncated := 0
			for _, smp := range got {
				seq := int(smp.Frame[0])
				if smp.Hash != uint32(seq) || smp.Worker != seq%2 || smp.Queue != 3 || smp.Tag != (dissect.VLANTag{TPID: 0x8100, TCI: uint16(seq)}) {
					t.Errorf("sample %+v: hash, worker, queue or metadata tag do not match its frame", smp)
				}
				if smp.Truncated {
					truncated++
				} else if !bytes.Equal(smp.Frame, []byte{byte(seq), 0xee}) {
					t.Errorf("sample frame %x, want %x", smp.Frame, []byte{byte(seq), 0xee})
				}
			}
			if first := int(got[0].Frame[0]); first != tt.wantFirstSeq {
				t.Errorf("slot 0 holds frame %d, want %d", first, tt.wantFirstSeq)
			}
			if truncated != tt.wantTruncated {
				t.Errorf("%d truncated, want %d", truncated, tt.wantTruncated)
			}
		})
	}
}

func TestSamplerConfig(t *testing.T) {
	if _, err := NewSampler(SamplerConfig{}); err == nil {
		t.Error("NewSampler with no loops: want an error")
	}
	s, err := NewSampler(SamplerConfig{Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.Every != DefaultSampleEvery || s.cfg.PerLoop != DefaultSamplesPerLoop || s.cfg.MaxLen != DefaultSampleMaxLen {
		t.Errorf("defaults not filled: %+v", s.cfg)
	}
}

// TestSamplerAllocs proves the per-frame hook allocates nothing, sampled or
// not.
func TestSamplerAllocs(t *testing.T) {
	s, err := NewSampler(SamplerConfig{Loops: 2, Every: 3, PerLoop: 16, MaxLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 60)
	if n := testing.AllocsPerRun(1000, func() { s.offer(1, frame, dissect.VLANTag{}, 7, 1, 1) }); n != 0 {
		t.Errorf("offer allocates %v times per frame, want 0", n)
	}
}

func BenchmarkSamplerOffer(b *testing.B) {
	s, err := NewSampler(SamplerConfig{Loops: 1})
	if err != nil {
		b.Fatal(err)
	}
	frame := make([]byte, 64)
	for b.Loop() {
		s.offer(0, frame, dissect.VLANTag{}, 7, 1, 0)
	}
}
