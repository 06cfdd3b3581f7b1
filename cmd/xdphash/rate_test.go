package main

import (
	"testing"
)

// TestRateFlagsSpellings: every flag that takes a rate reads the same
// spellings, packet generators' (100000, 1.5M, 500k) and the units' (500kpps,
// 1.5Mpps), through the one parser.
func TestRateFlagsSpellings(t *testing.T) {
	spellings := map[string]float64{"100000": 1e5, "1.5M": 1.5e6, "500k": 5e5, "500kpps": 5e5, "1.5Mpps": 1.5e6}
	root := newRootCmd()
	for _, name := range []string{"pktgen", "soak"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd.Name() != name {
			t.Fatalf("find %s: %v", name, err)
		}
		for in, want := range spellings {
			f := cmd.Flags().Lookup("rate")
			if err := f.Value.Set(in); err != nil {
				t.Errorf("%s --rate %s: %v", name, in, err)
				continue
			}
			if got := f.Value.(*rateFlag).pps; got != want {
				t.Errorf("%s --rate %s = %g pps, want %g", name, in, got, want)
			}
		}
	}
	// run's rates: a short synthetic run at each spelling succeeds.
	for in := range spellings {
		for _, flag := range []string{"--replay", "--service-rate"} {
			_, stderr, code := runXdphash(t, nil, "run", "--synthetic", "simple", "--count", "64", "--virtual-clock", flag, in)
			if code != exitOK {
				t.Errorf("run %s %s: exit %d, %s", flag, in, code, stderr)
			}
		}
	}
}
