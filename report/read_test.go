package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/runstats"
)

// TestReadRefuses reads run statistics that xdphash run does not write: each
// gets an ErrRun that says what is wrong.
func TestReadRefuses(t *testing.T) {
	good := func() *runstats.RunStats { return simulatedRun(t, 10, 2, 2, 50*time.Millisecond) }
	encode := func(st *runstats.RunStats) string {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	edited := func(edit func(st *runstats.RunStats)) string {
		st := good()
		edit(st)
		return encode(st)
	}
	whole := encode(good())
	tests := []struct {
		name, file, want string
	}{
		{"empty file", "", "the file is empty"},
		{"cut short", whole[:len(whole)/2], "the file ends at byte"},
		{"two objects", whole + whole, "more data after the statistics"},
		{"steered to more workers than the run had", edited(func(st *runstats.RunStats) { st.Queues[1].Steered = make([]uint64, 100) }),
			"queue 1 steered to 100 workers, the run had 2"},
		{"no workers", edited(func(st *runstats.RunStats) { st.Workers, st.Config.Workers = nil, 0 }), "no workers"},
		{"config workers differ", edited(func(st *runstats.RunStats) { st.Config.Workers = 3 }), "config says 3 workers, the statistics list 2"},
		{"window of more queues", edited(func(st *runstats.RunStats) { st.Windows[0].QueuePackets = make([]uint64, 5) }),
			"window 0 counts 5 queues, the run had 2"},
		{"window of more workers", edited(func(st *runstats.RunStats) { st.Windows[0].WorkerBacklog = make([]int, 5) }),
			"window 0 counts 5 workers, the run had 2"},
		{"balanced flag over impossible counts", edited(func(st *runstats.RunStats) {
			st.Queues[0].Stats.Frames, st.Queues[1].Stats.Frames = 60, 40
			st.Accounting.Received, st.Accounting.Balanced = 100, true
		}), "processed of 100 received"},
		{"totals that the counters do not add up to", edited(func(st *runstats.RunStats) { st.Accounting.Received++ }),
			"the queues and workers add up to"},
		{"overflowing frame counters", edited(func(st *runstats.RunStats) { st.Queues[0].Stats.Frames = math.MaxUint64 }),
			"overflow"},
		{"overflowing flow count", edited(func(st *runstats.RunStats) { st.Workers[0].Consumer.Flows.Active = math.MaxInt64 }),
			"counts 9223372036854775807 flows"},
		{"queue drops that are not the workers'", edited(func(st *runstats.RunStats) {
			st.Queues[0].Drops = map[runstats.DropReason]uint64{runstats.DropRingFull: 3}
			st.Queues[1].Drops = map[runstats.DropReason]uint64{}
		}), "the receive queues count 3 ring/full drops, the workers 0"},
		{"negative flow count", edited(func(st *runstats.RunStats) { st.Workers[1].Consumer.Flows.Collisions = -1 }),
			"worker 1 counts -1 flows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.file))
			if !errors.Is(err, ErrRun) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: %v, want ErrRun containing %q", err, tt.want)
			}
		})
	}
	if _, err := Read(strings.NewReader(whole)); err != nil {
		t.Errorf("Read of a good run: %v", err)
	}
	// The balanced flag is recomputed, not taken from the file.
	st, err := Read(strings.NewReader(edited(func(st *runstats.RunStats) { st.Accounting.Balanced = !st.Accounting.Balanced })))
	if err != nil || st.Accounting.Balanced != good().Accounting.Balanced {
		t.Errorf("a flipped balanced flag: %v, balanced %v; want it recomputed", err, st != nil && st.Accounting.Balanced)
	}
}

// FuzzRead reads run statistics and, where Read takes them, computes and
// writes their measures (which must not panic or fail), and checks that the
// statistics encode back to what Read reads again the same.
func FuzzRead(f *testing.F) {
	b, err := json.Marshal(simulatedRun(f, 10, 2, 2, 50*time.Millisecond))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(fmt.Sprintf(`{"schema_version":%d,"workers":[{}],"config":{"workers":1}}`, runstats.SchemaVersion)))
	f.Fuzz(func(t *testing.T, file []byte) {
		st, err := Read(bytes.NewReader(file))
		if err != nil {
			return
		}
		var flows int
		for _, w := range st.Workers {
			flows += w.Consumer.Flows.Active
		}
		if flows > 1<<14 || flows < 0 {
			// fairness.ExpectedMaxMean simulates for as long as there are
			// flows: a file that claims a billion takes minutes, one that claims
			// a million half a second.
			return
		}
		m := Compute(st)
		if err := m.WriteText(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteJSON(&bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		st2, err := Read(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("Read of its own encoding: %v", err)
		}
		if again2, _ := json.Marshal(st2); !bytes.Equal(again, again2) {
			t.Errorf("encoding changed on a round trip:\n%s\n%s", again, again2)
		}
	})
}
