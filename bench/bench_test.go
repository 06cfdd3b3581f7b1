package bench

import (
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// BenchmarkDissect runs every case through each contender: compare them with
// benchstat, or use `xdphash bench dissect` for an interleaved table.
func BenchmarkDissect(b *testing.B) {
	for _, c := range Cases() {
		for name, fn := range contenders([][]byte{c.Frame}) {
			b.Run(c.Name+"/"+string(name), func(b *testing.B) {
				b.ReportAllocs()
				fn(b.N)
			})
		}
	}
	for name, fn := range contenders(Mix()) {
		b.Run("mix/"+string(name), func(b *testing.B) {
			b.ReportAllocs()
			fn(b.N)
		})
	}
}

// BenchmarkDecline measures one open gate declining a frame of its class that it
// does not cover, against the same Dissector with no gate open.
func BenchmarkDecline(b *testing.B) {
	for s := range dissect.NumShapes {
		f, ok := dissect.NearMissFrame(s)
		if _, tunnel := s.Tunnel(); tunnel {
			ok = false // declines only under a descent policy
		}
		if !ok {
			continue // its fast path declines nothing of its class
		}
		for _, g := range []dissect.Gates{dissect.NoGates, dissect.NoGates.With(s)} {
			d := dissect.NewDissector(dissect.DefaultFlags, g)
			b.Run(s.String()+"/gates="+g.String(), func(b *testing.B) {
				var k dissect.FlowKeys
				for b.Loop() {
					d.DissectFrame(&k, f)
				}
			})
		}
	}
}

func TestHarness(t *testing.T) {
	rep := Dissect(Options{Rounds: 5, PerTime: 200_000})
	plain := 0
	for s := range dissect.NumShapes {
		if _, tunnel := s.Tunnel(); !tunnel {
			plain++
		}
	}
	if len(rep.Rows) != len(Cases())+1 || len(rep.Declines)+len(rep.Whole) != plain {
		t.Fatalf("report has %d rows and %d declines", len(rep.Rows), len(rep.Declines))
	}
	for _, r := range rep.Rows {
		for _, c := range []Contender{Slow, Fast, Gopacket} {
			if r.Ns[c] <= 0 {
				t.Errorf("%s/%s: no time measured", r.Case, c)
			}
		}
		if r.Allocs[Slow] != 0 || r.Allocs[Fast] != 0 {
			t.Errorf("%s: the dissector allocates: %v", r.Case, r.Allocs)
		}
	}
	// Every shape's representative must be taken by its own fast path, or the
	// table would measure the slow path twice.
	for _, r := range rep.Rows[:len(Cases())] {
		if r.Path == "slow" {
			t.Errorf("%s: took the slow path", r.Case)
		}
	}
}

func TestGopacketParser(t *testing.T) {
	p := NewGopacketParser()
	var ft FiveTuple
	if !p.Parse(dissect.SampleFrame(dissect.ShapeEthIP), &ft) || ft.SrcPort != 1025 || ft.DstPort != 80 || ft.Proto != 6 {
		t.Errorf("eth_ip: %+v", ft)
	}
	if !p.Parse(dissect.SampleFrame(dissect.ShapeGRE), &ft) || ft.SrcPort != 1025 {
		t.Errorf("gre: %+v", ft)
	}
}
