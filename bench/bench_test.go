package bench

import (
	"slices"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// BenchmarkDissect runs every case through each contender: compare them with
// benchstat, or use `xdphash bench dissect` for an interleaved table.
func BenchmarkDissect(b *testing.B) {
	for _, c := range Cases() {
		for name, fn := range contenders([][]byte{c.Frame}, dissect.Descent{}) {
			b.Run(c.Name+"/"+string(name), func(b *testing.B) {
				b.ReportAllocs()
				fn(b.N)
			})
		}
	}
	for name, fn := range contenders(Mix(), dissect.Descent{}) {
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

// TestHarnessDescent: under a descent policy entering VXLAN and GTP-U, the
// harness measures their shapes' sample frames, which the Dissector takes by
// their fast paths without allocating, and their near misses' declines, and
// records the policy.
func TestHarnessDescent(t *testing.T) {
	p, err := dissect.NewDescent(dissect.Tunnels(0).With(dissect.TunnelVXLAN).With(dissect.TunnelGTPU))
	if err != nil {
		t.Fatal(err)
	}
	rep := Dissect(Options{Rounds: 5, PerTime: 200_000, Descent: p})
	if rep.Descent != "vxlan,gtpu" {
		t.Errorf("report's descent %q, want vxlan,gtpu", rep.Descent)
	}
	for _, s := range []dissect.Shape{dissect.ShapeVXLAN, dissect.ShapeGTPU} {
		i := slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Case == s.String() })
		if i < 0 {
			t.Errorf("no %v row", s)
			continue
		}
		if r := rep.Rows[i]; r.Path != dissect.FastPath(s).String() || r.Allocs[Fast] != 0 || r.Allocs[Slow] != 0 || r.Ns[Fast] <= 0 {
			t.Errorf("%v row: path %s, allocs %v, ns %v; want fast:%v, no allocations", s, r.Path, r.Allocs, r.Ns, s)
		}
		if !slices.ContainsFunc(rep.Declines, func(d DeclineRow) bool { return d.Shape == s.String() }) {
			t.Errorf("no %v decline row", s)
		}
	}
	var b strings.Builder
	if err := WriteTable(&b, rep); err != nil || !strings.Contains(b.String(), "descend vxlan,gtpu") {
		t.Errorf("the table does not name the descent (%v):\n%s", err, b.String())
	}
}
