package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/nicrss"
	"github.com/xdphash/xdphash/runstats"
)

const msKeyHex = "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa"

// nicJSON is a NIC configuration of queues queues over a 128-entry
// round-robin table, with extra JSON fields.
func nicJSON(queues int, extra string) string {
	entries := make([]string, 128)
	for i := range entries {
		entries[i] = strconv.Itoa(i % queues)
	}
	return fmt.Sprintf(`{"hash_function":"toeplitz","key":%q,"indirection":[%s]%s}`, msKeyHex, strings.Join(entries, ","), extra)
}

// TestRunNIC: run --pcap --nic predicts per queue exactly what the run then
// receives per queue, on the whole corpus, and the per-queue frames are
// those of the NIC model frame by frame.
func TestRunNIC(t *testing.T) {
	frames := corpus.Build()
	var rs []record
	for _, f := range frames {
		rs = append(rs, record{data: f.Data})
	}
	path := tempFile(t, "corpus.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, rs...))
	nicPath := tempFile(t, "nic.json", []byte(nicJSON(4, `,"name":"eth9","fields":{"udp4":"sd"}`)))
	out := filepath.Join(t.TempDir(), "run.json")
	stdout, stderr, code := runXdphash(t, nil, "run", "--pcap", path, "--nic", nicPath, "--virtual-clock", "--hash-key", kunitKey, "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	n, err := nicrss.Load(strings.NewReader(nicJSON(4, `,"fields":{"udp4":"sd"}`)))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := n.Hasher()
	want := make([]uint64, 4)
	for _, f := range frames {
		var tu nicrss.Tuple
		hv, ok := h.Hash(&tu, f.Data)
		want[h.Queue(hv, ok)]++
	}
	st := xdptest.ReadJSON[runstats.RunStats](t, out)
	if len(st.Queues) != 4 {
		t.Fatalf("%d queues, want the NIC's 4", len(st.Queues))
	}
	for i, q := range st.Queues {
		if q.Stats.Frames != want[i] {
			t.Errorf("queue %d received %d frames, the NIC model puts %d there", i, q.Stats.Frames, want[i])
		}
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^  %d\s+(\d+)\s`, i)).FindStringSubmatch(stdout)
		if row == nil || row[1] != strconv.FormatUint(want[i], 10) {
			t.Errorf("prediction row of queue %d = %q, want %d frames\n%s", i, row, want[i], stdout)
		}
	}
	for _, s := range []string{"NIC RSS prediction: " + strconv.Itoa(len(frames)) + " frames", "balls into bins", "ethtool -X eth9 weight "} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the prediction lacks %q:\n%s", s, stdout)
		}
	}
}

func TestRunNICUsageErrors(t *testing.T) {
	good := tempFile(t, "nic.json", []byte(nicJSON(2, "")))
	bad := tempFile(t, "bad.json", []byte(nicJSON(2, `,"hash_function":"crc32"`)))
	pcap := tempFile(t, "c.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, record{data: corpus.Bases()[0].Data}))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pcap", pcap, "--nic", bad}, "crc32"},
		{[]string{"--pcap", pcap, "--nic", good, "--virtual-queues", "3"}, "has 2 queues"},
		{[]string{"--pcap", "-", "--nic", good}, "not stdin"},
		{[]string{"--pcap", pcap, "--nic", good, "--rss-key", msKeyHex}, "leave out --rss-key"},
		{[]string{"--pcap", pcap, "--rss-level", "2"}, "want outer or inner"},
		{[]string{"--pcap", pcap, "--rss-level", "inner"}, "--virtual-queues 2 or more"},
		{[]string{"--pcap", pcap, "--rss-quirks", "qemu-9", "--virtual-queues", "2"}, `quirk "qemu-9": want qemu-7.2`},
		{[]string{"--pcap", pcap, "--rss-quirks", "qemu-7.2"}, "--virtual-queues 2 or more"},
		{[]string{"--pcap", pcap, "--nic", good, "--rss-quirks", "x"}, `quirk "x"`},
		{[]string{"--pcap", pcap, "--nic", filepath.Join(t.TempDir(), "none.json")}, "--nic"},
	} {
		_, stderr, code := runXdphash(t, nil, append([]string{"run"}, c.args...)...)
		if code == exitOK || !strings.Contains(stderr, c.want) {
			t.Errorf("run %q: exit %d, stderr %q; want a refusal naming %q", c.args, code, stderr, c.want)
		}
	}
}
