package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
