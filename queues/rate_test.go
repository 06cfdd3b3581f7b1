package queues

import (
	"math"
	"testing"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    Rate
		str     string
		wantErr bool
	}{
		{in: "max", want: Rate{}, str: "max"},
		{in: "", want: Rate{}, str: "max"},
		{in: "10Mbit", want: Rate{BitsPerSec: 10e6}, str: "10Mbit"},
		{in: "1gbit", want: Rate{BitsPerSec: 1e9}, str: "1Gbit"},
		{in: "2.5Gbit", want: Rate{BitsPerSec: 2.5e9}, str: "2.5Gbit"},
		{in: "100kbit", want: Rate{BitsPerSec: 1e5}, str: "100kbit"},
		{in: "999bit", want: Rate{BitsPerSec: 999}, str: "999bit"},
		{in: "500kpps", want: Rate{PacketsPerSec: 5e5}, str: "500kpps"},
		{in: "1Mpps", want: Rate{PacketsPerSec: 1e6}, str: "1Mpps"},
		{in: "1500pps", want: Rate{PacketsPerSec: 1500}, str: "1.5kpps"},
		// Packet rates as packet generators write them: no unit, or only
		// the prefix.
		{in: "100000", want: Rate{PacketsPerSec: 1e5}, str: "100kpps"},
		{in: "10", want: Rate{PacketsPerSec: 10}, str: "10pps"},
		{in: "500k", want: Rate{PacketsPerSec: 5e5}, str: "500kpps"},
		{in: "1.5M", want: Rate{PacketsPerSec: 1.5e6}, str: "1.5Mpps"},
		{in: "1.5Mpps", want: Rate{PacketsPerSec: 1.5e6}, str: "1.5Mpps"},
		{in: "2G", want: Rate{PacketsPerSec: 2e9}, str: "2Gpps"},
		{in: " 7 pps ", want: Rate{PacketsPerSec: 7}, str: "7pps"},
		{in: "2e12", wantErr: true},
		{in: "1e16bit", wantErr: true},
		{in: "0", wantErr: true},
		{in: "k", wantErr: true},
		{in: "NaN", wantErr: true},
		{in: "Inf", wantErr: true},
		{in: "0Mbit", wantErr: true},
		{in: "-1pps", wantErr: true},
		{in: "fastMbit", wantErr: true},
		{in: "10MB", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseRate(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			continue
		}
		if err == nil && got.String() != tt.str {
			t.Errorf("ParseRate(%q).String() = %q, want %q", tt.in, got.String(), tt.str)
		}
	}
}

func TestParsePacketRate(t *testing.T) {
	for in, want := range map[string]float64{"max": 0, "100000": 1e5, "1.5M": 1.5e6, "500k": 5e5, "500kpps": 5e5, "1.5Mpps": 1.5e6} {
		if got, err := ParsePacketRate(in); err != nil || got != want {
			t.Errorf("ParsePacketRate(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"10Mbit", "fast", "-5k"} {
		if got, err := ParsePacketRate(in); err == nil {
			t.Errorf("ParsePacketRate(%q) = %g, want an error", in, got)
		}
	}
}

func TestTokenBucket(t *testing.T) {
	// 8 Mbit/s is 1 byte per µs; the bucket holds 2 ms: 2000 bytes.
	tb := NewTokenBucket(Rate{BitsPerSec: 8e6})
	b, ok := tb.Budget(0, 10)
	if !ok || b != (Budget{Packets: 10, Bytes: 2000}) {
		t.Fatalf("full bucket: %+v %v", b, ok)
	}
	tb.Spend(2, 2500) // overdraw by 500
	if _, ok := tb.Budget(0, 10); ok {
		t.Error("budget while overdrawn")
	}
	if w := tb.Wait(); w != 2014000 { // 500 to pay back + 1514 for a full frame, 1 byte/µs
		t.Errorf("wait %d ns, want 2014000", w)
	}
	if b, ok = tb.Budget(1000000, 10); !ok || b.Bytes != 500 {
		t.Errorf("after 1 ms: %+v %v, want 500 bytes", b, ok)
	}
	// Idle for a second: the bucket holds its depth, not a second's worth.
	if b, _ = tb.Budget(1001000000, 10); b.Bytes != 2000 {
		t.Errorf("after 1 s: %d bytes, want 2000", b.Bytes)
	}

	pps := NewTokenBucket(Rate{PacketsPerSec: 1e6}) // 1 per µs, depth 2000
	if b, _ := pps.Budget(0, 64); b != (Budget{Packets: 64}) {
		t.Errorf("pps budget %+v, want 64 packets", b)
	}
	pps.Spend(2000, 0)
	if b, ok := pps.Budget(5000, 64); !ok || b.Packets != 5 {
		t.Errorf("after 5 µs: %+v, want 5 packets", b)
	}

	maxRate := NewTokenBucket(Rate{})
	if b, ok := maxRate.Budget(0, 64); !ok || b != (Budget{Packets: 64}) || maxRate.Wait() != 0 {
		t.Errorf("max budget %+v", b)
	}
}

// FuzzParseRate: a rate either fails with an error or is finite and reads
// back from its String as itself.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"max", "10Mbit", "1gbit", "500kpps", "1e-6pps", "0.5bit", "1e308Gbit", "-1pps", "NaNbit", " 7 pps ", "100000", "1.5M", "500k", "1e12", "2G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if math.IsInf(r.BitsPerSec, 0) || math.IsInf(r.PacketsPerSec, 0) || math.IsNaN(r.BitsPerSec) || math.IsNaN(r.PacketsPerSec) {
			t.Fatalf("ParseRate(%q) = %+v: not finite", s, r)
		}
		back, err := ParseRate(r.String())
		if err != nil || back != r {
			t.Fatalf("ParseRate(%q) = %+v, whose String %q reads back as %+v, %v", s, r, r.String(), back, err)
		}
	})
}
