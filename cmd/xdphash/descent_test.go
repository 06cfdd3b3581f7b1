package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestVerifyDescend: verify --descend over the corpus (with every tunnel
// and the corpus's FOU table) and over pktgen captures of the vxlan and
// mobile profiles agrees with the kernel's view of the inner frames, and
// counts the descents per tunnel.
func TestVerifyDescend(t *testing.T) {
	xdptest.RequireRoot(t)
	dir := t.TempDir()
	for _, prof := range []string{"vxlan", "mobile"} {
		if out, errOut, code := runXdphash(t, nil, "pktgen", "--profile", prof, "--count", "500", "--write", filepath.Join(dir, prof+".pcapng")); code != exitOK {
			t.Fatalf("pktgen %s: exit %d\n%s\n%s", prof, code, out, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--descend", "all", "--gue-port", "6080", "--fou-port", "5555:ipip", "--fou-port", "5556:ipv6", "--count", "500"}, " fou "},
		{[]string{"verify", "--descend", "vxlan", "--pcap", filepath.Join(dir, "vxlan.pcapng")}, "vxlan 500 "},
		{[]string{"verify", "--descend", "gtpu", "--pcap", filepath.Join(dir, "mobile.pcapng")}, "gtpu 500 "},
	} {
		out, errOut, code := runXdphash(t, nil, tc.args...)
		if code != exitOK || !strings.Contains(out, " 0 divergences") || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want 0 divergences and %q\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.want, out, errOut)
		}
	}
}

// TestDescendFlags: bad --descend, --fou-port and --gue-port values are
// usage errors that name the flag's problem.
func TestDescendFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--descend", "nvgre"}, `unknown tunnel: "nvgre"`},
		{[]string{"verify", "--fou-port", "5555"}, "want PORT:ipip or PORT:ipv6"},
		{[]string{"verify", "--descend", "gue", "--gue-port", "6080", "--fou-port", "6080:ipip"}, "already in the FOU table"},
		{[]string{"run", "--synthetic", "mobile", "--descend", "gtpu", "--gue-port", "0"}, "bad UDP port"},
		{[]string{"bench", "dissect", "--descend", "nvgre"}, `unknown tunnel: "nvgre"`},
		{[]string{"bench", "dissect", "--gue-port", "0"}, "bad UDP port"},
		{[]string{"pktgen", "--profile", "mobile", "--count", "10", "--write", "x.pcapng", "--descend", "gue", "--gue-port", "6080", "--fou-port", "6080:ipv6"}, "already in the FOU table"},
		{[]string{"pktgen", "--profile", "mobile", "--count", "10", "--iface", "lo", "--descend", "gtpu"}, "check the frames of --write"},
	} {
		_, errOut, code := runXdphash(t, nil, tc.args...)
		if code != exitFailure || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error containing %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestPktgenWriteDescend: pktgen --write --descend dissects the frames it
// writes under the policy: the mobile profile's GTP-U frames all descend
// and the hash sees many more flows than the few tunnels without it; a
// policy entering none of the profile's tunnels says so.
func TestPktgenWriteDescend(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		descend string
		want    *regexp.Regexp
	}{
		{"gtpu", regexp.MustCompile(`descend gtpu: 2000 of 2000 frames descended \(gtpu 2000\); the hash sees (\d+) flows, (\d+) without the descent`)},
		{"vxlan", regexp.MustCompile(`descend vxlan: no frame of the 2000 written enters the policy's tunnels; the hash sees (\d+) flows, as without it`)},
	} {
		out, errOut, code := runXdphash(t, nil, "pktgen", "--profile", "mobile", "--count", "2000", "--write", filepath.Join(dir, tc.descend+".pcapng"), "--descend", tc.descend)
		m := tc.want.FindStringSubmatch(out)
		if code != exitOK || m == nil {
			t.Fatalf("--descend %s: exit %d, stdout %q, stderr %q; want %v", tc.descend, code, out, errOut, tc.want)
		}
		if tc.descend == "gtpu" {
			on, _ := strconv.Atoi(m[1])
			off, _ := strconv.Atoi(m[2])
			if on < 10*off || off == 0 {
				t.Errorf("--descend gtpu: %d flows with the descent, %d without; want many inner flows in a few tunnels", on, off)
			}
		}
	}
}
