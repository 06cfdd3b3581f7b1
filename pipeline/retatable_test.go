package pipeline

import (
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
)

// TestRETATableSteers runs RETA steering on a table given whole (a
// device's, as run --reta-table device reads it), one that differs from the
// default round robin at every entry: every record must reach the worker
// that table gives for its hash, and the run's steering report must start
// from that table.
func TestRETATableSteers(t *testing.T) {
	const workers, count = 4, 4000
	table := make([]uint32, 128)
	for i := range table {
		table[i] = uint32(workers - 1 - i%workers)
	}
	src, err := source.NewSynthetic(profileFrames(t, "datacenter"), source.SyntheticConfig{Count: count})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var rs recorders
	st := runEngine(t, EngineConfig{
		Source:   src,
		Steering: hash.SteerConfig{Workers: workers, Hash: hash.KindToeplitz, Steer: hash.SteerRETA, RETATable: table},
		Flags:    dissect.DefaultFlags, Gates: dissect.AllGates,
		NewConsumer: rs.factory(count), RingSize: count, Virtual: true,
	})
	checkAccounting(t, st, count)
	var hashed int
	for w, r := range rs.all {
		for _, rec := range r.got {
			if rec.Hash == 0 {
				continue
			}
			hashed++
			if want := int(table[rec.Hash%uint32(len(table))]); w != want {
				t.Fatalf("a record of hash %08x reached worker %d; the table gives %d", rec.Hash, w, want)
			}
		}
	}
	if hashed == 0 {
		t.Fatal("no record with a hash")
	}
	if st.Steering == nil || len(st.Steering.Initial) != len(table) {
		t.Fatalf("steering report %+v: want the table's %d entries", st.Steering, len(table))
	}
	for i, q := range st.Steering.Initial {
		if uint32(q) != table[i] {
			t.Fatalf("the report's initial table %v, want %v", st.Steering.Initial, table)
		}
	}
}
