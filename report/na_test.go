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

// TestTopFlowsProtocolNames: the top flows name their protocol (TCP, UDP),
// not its number.
func TestTopFlowsProtocolNames(t *testing.T) {
	st := summaryRun()
	st.Workers[0].Consumer.Flows = runstats.FlowReport{Active: 2, Top: []runstats.TopFlow{
		{Hash: 1, Src: "198.18.0.1", Dst: "198.18.0.2", SPort: 1024, DPort: 443, Proto: 6, Packets: 10, Bytes: 1000},
		{Hash: 2, Src: "198.18.0.3", Dst: "198.18.0.4", SPort: 1025, DPort: 53, Proto: 17, Packets: 5, Bytes: 500},
		{Hash: 3, Src: "198.18.0.5", Dst: "198.18.0.6", Proto: 254, Packets: 1, Bytes: 100},
	}}
	m := Compute(st)
	var text, html bytes.Buffer
	if err := m.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" TCP ", " UDP ", " 254 "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"<td>TCP</td>", "<td>UDP</td>", "<td>254</td>"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
}
