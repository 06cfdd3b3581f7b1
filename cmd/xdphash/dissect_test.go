package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// kunitKey is the key of the kernel's SipHash KUnit test and of the worked
// examples in the kernel-fidelity (§7): k0 = 0x0706050403020100, k1 = 0x0f0e0d0c0b0a0908.
const kunitKey = "000102030405060708090a0b0c0d0e0f"

// tcpOut is a SYN from 198.18.0.1:1025 to 198.18.0.2:80.
var tcpOut = []byte{
	// Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type IPv4
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	// IPv4: IHL 5, total length 40, id 1, DF, TTL 64, protocol TCP, checksum
	0x45, 0x00, 0x00, 0x28, 0x00, 0x01, 0x40, 0x00, 0x40, 0x06, 0xae, 0xa7,
	198, 18, 0, 1, // src
	198, 18, 0, 2, // dst
	// TCP: sport 1025, dport 80, seq 1, ack 0, data offset 5, SYN, window 65535,
	// checksum 0 (the dissector does not check it), urgent pointer 0
	0x04, 0x01, 0x00, 0x50,
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00,
	0x50, 0x02, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x00,
}

// tcpBack is the SYN-ACK of tcpOut, from 198.18.0.2:80 to 198.18.0.1:1025.
var tcpBack = []byte{
	// Ethernet: dst 02:00:00:00:00:01, src 02:00:00:00:00:02, type IPv4
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x08, 0x00,
	// IPv4: IHL 5, total length 40, id 1, DF, TTL 64, protocol TCP, checksum
	0x45, 0x00, 0x00, 0x28, 0x00, 0x01, 0x40, 0x00, 0x40, 0x06, 0xae, 0xa7,
	198, 18, 0, 2, // src
	198, 18, 0, 1, // dst
	// TCP: sport 80, dport 1025, seq 1, ack 2, data offset 5, SYN+ACK, window 65535
	0x00, 0x50, 0x04, 0x01,
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x02,
	0x50, 0x12, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x00,
}

// udp6 is IPv6/UDP from [2001:db8::1]:1025 to [2001:db8::2]:53, flow label 0,
// so the dissector goes on to the ports.
var udp6 = []byte{
	// Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type IPv6
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd,
	// IPv6: version 6, traffic class 0, flow label 0, payload length 8,
	// next header UDP, hop limit 64
	0x60, 0x00, 0x00, 0x00, 0x00, 0x08, 0x11, 0x40,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // src 2001:db8::1
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // dst 2001:db8::2
	// UDP: sport 1025, dport 53, length 8, checksum 0
	0x04, 0x01, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00,
}

// specA is worked example (a) of kernel-fidelity §7, IPv4/TCP 192.168.1.10:12345 →
// 10.0.0.1:80, in an Ethernet frame. thoff is not hashed, so the hash with
// kunitKey is the example's aa09f22d although thoff counts from the frame.
var specA = []byte{
	// Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type IPv4
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	// IPv4: IHL 5, total length 40, id 1, DF, TTL 64, protocol TCP, checksum
	0x45, 0x00, 0x00, 0x28, 0x00, 0x01, 0x40, 0x00, 0x40, 0x06, 0x6f, 0x1c,
	192, 168, 1, 10, // src
	10, 0, 0, 1, // dst
	// TCP: sport 12345, dport 80, seq 1, ack 0, data offset 5, SYN, window 65535
	0x30, 0x39, 0x00, 0x50,
	0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00,
	0x50, 0x02, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x00,
}

// specD is worked example (d) of kernel-fidelity §7: 802.1Q id 100 priority 3,
// IPv4/UDP 10.1.1.1:53 → 10.1.1.2:33000; with kunitKey it hashes to 3a836210.
var specD = []byte{
	// Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 802.1Q
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x81, 0x00,
	// 802.1Q: PCP 3, DEI 0, VID 100; type IPv4
	0x60, 0x64, 0x08, 0x00,
	// IPv4: IHL 5, total length 28, id 1, DF, TTL 64, protocol UDP, checksum
	0x45, 0x00, 0x00, 0x1c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x24, 0xcc,
	10, 1, 1, 1, // src
	10, 1, 1, 2, // dst
	// UDP: sport 53, dport 33000, length 8, checksum 0
	0x00, 0x35, 0x80, 0xe8, 0x00, 0x08, 0x00, 0x00,
}

// record is one capture record: data as captured from a frame of wire bytes
// (len(data) when 0).
type record struct {
	data []byte
	wire int
}

func records(frames ...[]byte) []record {
	rs := make([]record, len(frames))
	for i, f := range frames {
		rs[i] = record{data: f}
	}
	return rs
}

// recordTime is the capture time of record i.
func recordTime(i int) time.Time {
	return time.Unix(1700000000, int64(i)*int64(time.Millisecond)).UTC()
}

// captureFormats are the file formats dissect reads.
var captureFormats = []string{xdptest.CapturePcap, xdptest.CapturePcapng}

// captureFile returns a pcap or pcapng file of link type lt holding rs,
// record i at recordTime(i).
func captureFile(tb testing.TB, format string, lt layers.LinkType, rs ...record) []byte {
	tb.Helper()
	crs := make([]xdptest.CaptureRecord, len(rs))
	for i, r := range rs {
		crs[i] = xdptest.CaptureRecord{Data: r.data, WireLen: r.wire, Time: recordTime(i)}
	}
	return xdptest.WriteCapture(tb, format, lt, crs...)
}

// tempFile writes data to a new file in tb's temporary directory.
func tempFile(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// runXdphash runs the xdphash command in-process.
func runXdphash(tb testing.TB, stdin []byte, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(bytes.NewReader(stdin))
	code = run(root, args)
	return out.String(), errOut.String(), code
}

// parseJSONL decodes the lines of dissect --format jsonl.
func parseJSONL(tb testing.TB, out string) []frameRecord {
	tb.Helper()
	var recs []frameRecord
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var rec frameRecord
		if err := dec.Decode(&rec); err != nil {
			tb.Fatalf("decode %q: %v", sc.Text(), err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// frameWant is what a test checks of a frameRecord; Hash "" is not checked.
type frameWant struct {
	OK               bool
	NProto           string
	IPProto          uint8
	THoff            uint16
	AddrType         string
	Src, Dst         string
	SPort, DPort     uint16
	VLANID           uint16
	VLANPrio         uint8
	VLANTPID         string
	Len, CapLen      int
	Hash             string
	L4Hash           bool
	VLANEthType      string
	FlowLabel, Flags uint32
}

func wantOf(rec *frameRecord, checkHash bool) frameWant {
	w := frameWant{
		OK: rec.OK, NProto: rec.NProto, IPProto: rec.IPProto, THoff: rec.THoff, AddrType: rec.AddrType,
		Src: rec.Src, Dst: rec.Dst, SPort: rec.SPort, DPort: rec.DPort,
		VLANID: rec.VLANID, VLANPrio: rec.VLANPrio, VLANTPID: rec.VLANTPID, VLANEthType: rec.VLANEthType,
		Len: rec.Len, CapLen: rec.CapLen, L4Hash: rec.L4Hash, FlowLabel: rec.FlowLabel, Flags: rec.Flags,
	}
	if checkHash {
		w.Hash = rec.Hash
	}
	return w
}

func TestDissectJSONL(t *testing.T) {
	// specA cut after 36 bytes: the transport offset is inside the capture,
	// the ports are not.
	snapped := record{data: specA[:36], wire: len(specA)}
	rs := append(records(tcpOut, tcpBack, udp6, specA, specD), snapped)
	want := []frameWant{
		{OK: true, NProto: "0x0800", IPProto: 6, THoff: 34, AddrType: "ipv4", Src: "198.18.0.1", Dst: "198.18.0.2",
			SPort: 1025, DPort: 80, VLANTPID: "0x0000", VLANEthType: "0x0000", Len: 54, CapLen: 54, L4Hash: true},
		{OK: true, NProto: "0x0800", IPProto: 6, THoff: 34, AddrType: "ipv4", Src: "198.18.0.2", Dst: "198.18.0.1",
			SPort: 80, DPort: 1025, VLANTPID: "0x0000", VLANEthType: "0x0000", Len: 54, CapLen: 54, L4Hash: true},
		{OK: true, NProto: "0x86dd", IPProto: 17, THoff: 54, AddrType: "ipv6", Src: "2001:db8::1", Dst: "2001:db8::2",
			SPort: 1025, DPort: 53, VLANTPID: "0x0000", VLANEthType: "0x0000", Len: 62, CapLen: 62, L4Hash: true},
		{OK: true, NProto: "0x0800", IPProto: 6, THoff: 34, AddrType: "ipv4", Src: "192.168.1.10", Dst: "10.0.0.1",
			SPort: 12345, DPort: 80, VLANTPID: "0x0000", VLANEthType: "0x0000", Len: 54, CapLen: 54,
			Hash: "aa09f22d", L4Hash: true},
		{OK: true, NProto: "0x0800", IPProto: 17, THoff: 38, AddrType: "ipv4", Src: "10.1.1.1", Dst: "10.1.1.2",
			SPort: 53, DPort: 33000, VLANID: 100, VLANPrio: 3, VLANTPID: "0x8100", VLANEthType: "0x0800",
			Len: 46, CapLen: 46, Hash: "3a836210", L4Hash: true},
		// Ports unreadable: zero, and the hash is not an L4 hash.
		{OK: true, NProto: "0x0800", IPProto: 6, THoff: 34, AddrType: "ipv4", Src: "192.168.1.10", Dst: "10.0.0.1",
			VLANTPID: "0x0000", VLANEthType: "0x0000", Len: 54, CapLen: 36},
	}

	for _, format := range captureFormats {
		t.Run(format, func(t *testing.T) {
			path := tempFile(t, "frames."+format, captureFile(t, format, layers.LinkTypeEthernet, rs...))
			stdout, stderr, code := runXdphash(t, nil, "dissect", "--format", "jsonl", "--hash-key", kunitKey, path)
			if code != exitOK {
				t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, "shorter than they were on the wire") {
				t.Errorf("stderr does not warn about the snapped frame:\n%s", stderr)
			}
			got := parseJSONL(t, stdout)
			if len(got) != len(want) {
				t.Fatalf("got %d records, want %d:\n%s", len(got), len(want), stdout)
			}
			for i := range got {
				rec := &got[i]
				if rec.Index != i || rec.Path != "slow" || len(rec.Keys) != 160 || len(rec.Hash) != 8 {
					t.Errorf("record %d: index %d, path %q, keys %q, hash %q", i, rec.Index, rec.Path, rec.Keys, rec.Hash)
				}
				if ts := recordTime(i).Format(time.RFC3339Nano); rec.TS != ts {
					t.Errorf("record %d: ts %q, want %q", i, rec.TS, ts)
				}
				if g := wantOf(rec, want[i].Hash != ""); g != want[i] {
					t.Errorf("record %d: (-want +got)\n-%+v\n+%+v", i, want[i], g)
				}
			}
			if got[0].Hash != got[1].Hash {
				t.Errorf("hash of tcpOut %s, of its reply tcpBack %s: want them equal", got[0].Hash, got[1].Hash)
			}
		})
	}
}

// TestDissectJSONLSchema pins the field names of --format jsonl.
func TestDissectJSONLSchema(t *testing.T) {
	path := tempFile(t, "one.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, records(tcpOut)...))
	stdout, stderr, code := runXdphash(t, nil, "dissect", "--format=jsonl", "--hash-key="+kunitKey, path)
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &fields); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"addr_type", "caplen", "dport", "dst", "flags", "flow_label", "hash", "index", "ip_proto", "keyid",
		"keys", "l4_hash", "len", "metadata_vlan_tag", "n_proto", "ok", "path", "sport", "src", "thoff", "ts",
		"vlan_eth_type", "vlan_id", "vlan_priority", "vlan_tpid",
	}
	if got := slices.Sorted(maps.Keys(fields)); !slices.Equal(got, want) {
		t.Errorf("fields (-want +got)\n-%v\n+%v", want, got)
	}
}

func TestDissectText(t *testing.T) {
	// tcpOut cut inside its IPv4 header: a failed dissection, hashed all the same.
	shortIPv4 := tcpOut[:24]
	capture := captureFile(t, "pcapng", layers.LinkTypeEthernet, records(specA, specD, udp6, shortIPv4)...)
	path := tempFile(t, "frames.pcapng", capture)
	want := "# xdphash dissect " + path + ": hash key " + kunitKey + " (--hash-key), path slow, flags 0x2\n" +
		"0 ok ipv4 192.168.1.10:12345 > 10.0.0.1:80 proto 6 thoff 34 hash aa09f22d l4\n" +
		"1 ok ipv4 10.1.1.1:53 > 10.1.1.2:33000 proto 17 thoff 38 vlan 100 prio 3 tpid 0x8100 type 0x0800 hash 3a836210 l4\n"

	stdout, stderr, code := runXdphash(t, nil, "dissect", "--hash-key", kunitKey, path)
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, want) {
		t.Errorf("output (-want +got)\n-%s\n+%s", want, stdout)
	}
	for _, line := range []string{
		"\n2 ok ipv6 [2001:db8::1]:1025 > [2001:db8::2]:53 proto 17 thoff 54 hash ",
		"\n3 bad none n_proto 0x0800 proto 0 thoff 14 hash ",
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("output lacks %q:\n%s", line, stdout)
		}
	}

	// Without --hash-key the random key is logged and printed, and taking it
	// back reproduces the output.
	stdout, stderr, code = runXdphash(t, capture, "dissect", "-")
	if code != exitOK {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	header, _, _ := strings.Cut(stdout, "\n")
	key, ok := strings.CutPrefix(header, "# xdphash dissect stdin: hash key ")
	key, ok2 := strings.CutSuffix(key, " (random), path slow, flags 0x2")
	if !ok || !ok2 || !strings.Contains(stderr, "hash_key="+key) {
		t.Fatalf("random key not in both the header %q and the log:\n%s", header, stderr)
	}
	again, stderr, code := runXdphash(t, capture, "dissect", "--hash-key", key, "-")
	_, frames, _ := strings.Cut(stdout, "\n")
	if code != exitOK || again != strings.Replace(header, "(random)", "(--hash-key)", 1)+"\n"+frames {
		t.Errorf("rerun with --hash-key %s: exit status %d, output (-first +rerun)\n-%s\n+%s\nstderr:\n%s",
			key, code, stdout, again, stderr)
	}
}

func TestDissectErrors(t *testing.T) {
	frames := records(tcpOut, tcpBack, udp6, specA)
	good := captureFile(t, "pcap", layers.LinkTypeEthernet, frames...)
	// cut returns the capture of frames in format cut at n bytes into the
	// record of frame 2 (its header and data), or at its middle for n < 0.
	cut := func(format string, n int) []byte {
		start := len(captureFile(t, format, layers.LinkTypeEthernet, frames[:2]...))
		end := len(captureFile(t, format, layers.LinkTypeEthernet, frames[:3]...))
		if n < 0 {
			n = (end - start) / 2
		}
		return captureFile(t, format, layers.LinkTypeEthernet, frames...)[:start+n]
	}

	tests := []struct {
		name      string
		file      []byte // written to a temporary file that is the last argument
		args      []string
		wantErr   string // in stderr after "xdphash: "
		wantLines int    // lines on stdout
		wantUsage bool   // the usage is printed
	}{
		{
			name:    "pcap link type raw",
			file:    captureFile(t, "pcap", layers.LinkTypeRaw, records(tcpOut[14:])...),
			wantErr: "read FILE: link type Raw (101) is not supported: xdphash reads Ethernet frames (link type 1) only",
		},
		{
			name:    "pcapng link type null",
			file:    captureFile(t, "pcapng", layers.LinkTypeNull, records([]byte{2, 0, 0, 0})...),
			wantErr: "read FILE: link type Null (0) is not supported",
		},
		{
			name:      "pcap cut in record 2",
			file:      cut("pcap", -1),
			wantErr:   "read frame 2 of FILE: unexpected EOF",
			wantLines: 2,
		},
		{
			// pcapgo returns a bare io.EOF when none of a record's data follows its header.
			name:      "pcap cut after the header of record 2",
			file:      cut("pcap", 16),
			wantErr:   "read frame 2 of FILE: unexpected EOF",
			wantLines: 2,
		},
		{
			name:      "pcapng cut in record 2",
			file:      cut("pcapng", -1),
			wantErr:   "read frame 2 of FILE: unexpected EOF",
			wantLines: 2,
		},
		{
			name:    "empty file",
			file:    []byte{},
			wantErr: "read FILE: empty file: want pcap or pcapng",
		},
		{
			name:    "not a capture",
			file:    []byte("hello, world\n"),
			wantErr: "read FILE: unknown file format (magic 68656c6c): want pcap or pcapng",
		},
		{
			name:    "pcap file header cut",
			file:    good[:20],
			wantErr: "read FILE: read pcap header: unexpected EOF",
		},
		{
			name:      "hash key too short",
			file:      good,
			args:      []string{"--hash-key", "0001"},
			wantErr:   `--hash-key: parse hash key "0001"`,
			wantUsage: true,
		},
		{
			name:      "hash key not hex",
			file:      good,
			args:      []string{"--hash-key", strings.Repeat("x", 32)},
			wantErr:   "--hash-key: parse hash key",
			wantUsage: true,
		},
		{
			name:      "format xml",
			file:      good,
			args:      []string{"--format", "xml"},
			wantErr:   `--format: want text|jsonl, not "xml"`,
			wantUsage: true,
		},
		{
			name:      "path unknown",
			file:      good,
			args:      []string{"--path", "turbo"},
			wantErr:   `--path: want slow|fast|auto, not "turbo"`,
			wantUsage: true,
		},
		{
			name:      "flags not a number",
			file:      good,
			args:      []string{"--flags", "stop"},
			wantErr:   "--flags: want a 32-bit number",
			wantUsage: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tempFile(t, "capture", tt.file)
			args := append([]string{"dissect", "--format", "jsonl", "--hash-key", kunitKey}, tt.args...)
			stdout, stderr, code := runXdphash(t, nil, append(args, path)...)
			if code != exitFailure {
				t.Errorf("exit status %d, want %d", code, exitFailure)
			}
			wantErr := "xdphash: " + strings.ReplaceAll(tt.wantErr, "FILE", path)
			if !strings.Contains(stderr, wantErr) {
				t.Errorf("stderr lacks %q:\n%s", wantErr, stderr)
			}
			if usage := strings.Contains(stderr, "Usage:"); usage != tt.wantUsage {
				t.Errorf("usage printed: %v, want %v; stderr:\n%s", usage, tt.wantUsage, stderr)
			}
			recs := parseJSONL(t, stdout)
			if len(recs) != tt.wantLines {
				t.Errorf("%d lines on stdout, want %d:\n%s", len(recs), tt.wantLines, stdout)
			}
		})
	}
}

func TestDissectMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.pcap")
	_, stderr, code := runXdphash(t, nil, "dissect", path)
	if want := "xdphash: open " + path + ": no such file or directory"; code != exitFailure || !strings.Contains(stderr, want) {
		t.Errorf("exit status %d, stderr %q; want %d and %q", code, stderr, exitFailure, want)
	}
}

// specDStripped is specD as a device with rx-vlan-offload delivers it: the
// 802.1Q tag (PCP 3, VID 100: TCI 0x6064) moved into the skb's metadata.
var specDStripped = append(append([]byte(nil), specD[:12]...), specD[16:]...)

// TestDissectVLANTag checks --vlan-tag against worked example (d) of kernel-fidelity §7:
// the frame with its tag in the metadata has the keys and the hash of the
// frame with the tag in line, but thoff, which no longer counts the tag.
func TestDissectVLANTag(t *testing.T) {
	path := tempFile(t, "stripped.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, records(specDStripped)...))
	want := "# xdphash dissect " + path + ": hash key " + kunitKey + " (--hash-key), path slow, flags 0x2, metadata VLAN tag 0x8100:0x6064\n" +
		"0 ok ipv4 10.1.1.1:53 > 10.1.1.2:33000 proto 17 thoff 34 vlan 100 prio 3 tpid 0x8100 type 0x0800 hash 3a836210 l4\n"
	for _, tag := range []string{"0x8100:0x6064", "802.1q:24676", "8100:0x6064"} {
		stdout, stderr, code := runXdphash(t, nil, "dissect", "--hash-key", kunitKey, "--vlan-tag", tag, path)
		if code != exitOK || stdout != want {
			t.Errorf("--vlan-tag %s: exit %d\n got: %q\nwant: %q\nstderr: %s", tag, code, stdout, want, stderr)
		}
	}
	stdout, stderr, code := runXdphash(t, nil, "dissect", "--format", "jsonl", "--path", "fast", "--hash-key", kunitKey, "--vlan-tag", "0x8100:0x6064", path)
	recs := parseJSONL(t, stdout)
	if code != exitOK || len(recs) != 1 || recs[0].Hash != "3a836210" || recs[0].MetaVLANTag != "0x8100:0x6064" || recs[0].Path != "fast:vlan" {
		t.Errorf("jsonl, --path fast: exit %d, records %+v, stderr %s", code, recs, stderr)
	}
	// Without the tag, the bytes alone: another flow.
	stdout, _, _ = runXdphash(t, nil, "dissect", "--format", "jsonl", "--hash-key", kunitKey, path)
	if recs := parseJSONL(t, stdout); len(recs) != 1 || recs[0].Hash == "3a836210" || recs[0].MetaVLANTag != "" {
		t.Errorf("no --vlan-tag: records %+v, want another hash and no metadata tag", recs)
	}
}

func TestDissectVLANTagErrors(t *testing.T) {
	path := tempFile(t, "stripped.pcap", captureFile(t, "pcap", layers.LinkTypeEthernet, records(specDStripped)...))
	for _, tc := range []struct{ arg, msg string }{
		{"0x9100:1", "is not 0x8100 (802.1q) or 0x88a8 (802.1ad)"},
		{"100", "want TPID:TCI"},
		{"0x8100:65536", "is not a number from 0 to 65535"},
		{"0x8100:" + strings.Repeat("1", 4096), "characters, want TPID:TCI in at most"},
	} {
		stdout, stderr, code := runXdphash(t, nil, "dissect", "--vlan-tag", tc.arg, path)
		// The error is the last line, after the usage.
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		first := lines[len(lines)-1]
		if code != exitFailure || !strings.Contains(first, tc.msg) || stdout != "" || len(first) > 200 {
			t.Errorf("--vlan-tag %.20q: exit %d, stdout %q, stderr %.300q; want exit %d and %q", tc.arg, code, stdout, stderr, exitFailure, tc.msg)
		}
	}
}
