package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/runstats"
)

// TestNoFlowCountsNotZero: a run whose consumer counts no flows (fifo) says
// n/a where a figure needs flow counts, in the text and the HTML, never
// "0 flows" or an expectation of 0.
func TestNoFlowCountsNotZero(t *testing.T) {
	st := summaryRun()
	for i := range st.Workers {
		st.Workers[i].Consumer.Flows = runstats.FlowReport{}
	}
	st.Config.Consumer = "fifo"
	m := Compute(st)
	if m.Flows != 0 {
		t.Fatalf("%d flows in a run that counted none", m.Flows)
	}
	var text, html bytes.Buffer
	if err := m.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "html": html.String()} {
		for _, bad := range []string{"for 0 flows", "flows: 0;", "0 flows;", "hashing 0 equal flows", "expected 0.0000"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s report says %q", name, bad)
			}
		}
		if !strings.Contains(out, "n/a") {
			t.Errorf("%s report has no n/a", name)
		}
	}
}
