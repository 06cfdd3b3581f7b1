package pktgen

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseShape(t *testing.T) {
	valid := []string{
		"ipv4/tcp", "ipv6/udp", "vlan/ipv4/tcp", "qinq/ipv6/udp", "pppoe/ipv4/tcp",
		"vlan/pppoe/ipv6/udp", "mpls/ipv4/tcp", "mpls/mpls/ipv6/udp", "ipv4/ipv4/tcp", "ipv6/ipv4/udp",
		"ipv4/gre/ipv4/tcp", "ipv6/gre/eth/ipv4/udp", "ipv4+opts/tcp", "ipv4+frag/udp",
		"ipv6+hbh+frag/tcp", "ipv6+label/tcp", "ipv4/ipv6+label/udp",
	}
	for _, name := range valid {
		s, err := ParseShape(name)
		if err != nil {
			t.Errorf("ParseShape(%q): %v", name, err)
			continue
		}
		if s.String() != name {
			t.Errorf("ParseShape(%q).String() = %q", name, s)
		}
	}
	invalid := []struct {
		name, want string
	}{
		{"", "unknown layer"},
		{"ipv4", "want an IP header and tcp or udp at the end"},
		{"tcp", "tcp or udp only right after an IP header"},
		{"ipv4/geneve/tcp", `unknown layer "geneve"`},
		{"ipv4/tcp/udp", "tcp or udp only right after an IP header"},
		{"ipv4/tcp/ipv4", "nothing after the L4 header"},
		{"ipv4/vlan/tcp", "a link layer only before the first IP header"},
		{"gre/ipv4/tcp", "gre only after an IP header"},
		{"ipv4/eth/ipv4/tcp", "eth only right after gre"},
		{"ipv4/gre/tcp", "tcp or udp only right after an IP header"},
		{"ipv4/vxlan/ipv4/tcp", "eth after vxlan"},
		{"ipv4/gtpu/eth/ipv4/tcp", "eth only right after gre or vxlan"},
		{"vxlan/eth/ipv4/tcp", "vxlan only after an IP header"},
		{"ipv4+label/tcp", `unknown modifier "label"`},
		{"ipv6+opts/tcp", `unknown modifier "opts"`},
		{"vlan+frag/ipv4/tcp", "only ipv4 and ipv6 take modifiers"},
	}
	for _, tt := range invalid {
		_, err := ParseShape(tt.name)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseShape(%q) = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestBuiltinsValid(t *testing.T) {
	for _, name := range BuiltinNames() {
		p, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Builtin("nosuch"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("Builtin(nosuch) = %v, want ErrUnknownProfile", err)
	}
}

// campusYAML is the example of the package documentation.
const campusYAML = `name: campus
flows: 4096
cycle: 16384            # frames before the traffic repeats
seed: 7
reply_share: 0.3
flow_sizes: {dist: zipf, exponent: 1.2}
frame_sizes: imix
mix:
  ipv4/tcp: 60
  vlan/ipv6/udp: 30
  ipv6+frag/udp: 10
`

func TestParseProfile(t *testing.T) {
	got, err := ParseProfile([]byte(campusYAML), "campus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Profile{
		Name: "campus", Flows: 4096, Cycle: 16384, Seed: 7, ReplyShare: 0.3,
		FlowSizes:  FlowSizes{Dist: Zipf, Exponent: 1.2},
		FrameSizes: IMIX(),
		Mix:        mix("ipv4/tcp", 60, "vlan/ipv6/udp", 30, "ipv6+frag/udp", 10),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseProfile:\n-%+v\n+%+v", want, got)
	}
}

func TestParseProfileForms(t *testing.T) {
	base := "flows: 8\nmix: {ipv4/udp: 1}\n"
	tests := []struct {
		yaml string
		want func(p *Profile) bool
	}{
		{"", func(p *Profile) bool {
			return p.FlowSizes.Dist == Uniform && reflect.DeepEqual(p.FrameSizes, FixedSize(64)) && p.Name == "f"
		}},
		{"flow_sizes: uniform\n", func(p *Profile) bool { return p.FlowSizes.Dist == Uniform }},
		{"flow_sizes: {dist: elephants, flows: 0.1, share: 0.9}\n", func(p *Profile) bool {
			return p.FlowSizes == FlowSizes{Dist: Elephants, ElephantFlows: 0.1, ElephantShare: 0.9}
		}},
		{"frame_sizes: 1500\n", func(p *Profile) bool { return reflect.DeepEqual(p.FrameSizes, FixedSize(1500)) }},
		{"frame_sizes: 64-1500\n", func(p *Profile) bool { return reflect.DeepEqual(p.FrameSizes, SizeRange(64, 1500)) }},
		{"frame_sizes: {64: 7, 576: 4, 1500: 1}\n", func(p *Profile) bool { return reflect.DeepEqual(p.FrameSizes, IMIX()) }},
	}
	for _, tt := range tests {
		p, err := ParseProfile([]byte(base+tt.yaml), "f")
		if err != nil {
			t.Errorf("%q: %v", tt.yaml, err)
			continue
		}
		if !tt.want(&p) {
			t.Errorf("%q: got %+v", tt.yaml, p)
		}
	}
}

func TestParseProfileErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"empty file", "", "the file is empty"},
		{"not a mapping", "- a\n", "cannot unmarshal"},
		{"unknown field", "flows: 8\nflowz: 3\nmix: {ipv4/tcp: 1}\n", "line 2: field flowz not found"},
		{"no mix", "flows: 8\n", "mix: no shapes"},
		{"mix a list", "flows: 8\nmix: [ipv4/tcp]\n", "line 2: mix: want a mapping"},
		{"unknown shape", "flows: 8\nmix:\n  ipv4/tcp: 1\n  ipv4/sctp: 1\n", `line 4: mix: parse shape "ipv4/sctp": unknown layer "sctp"`},
		{"weight not a number", "flows: 8\nmix: {ipv4/tcp: lots}\n", `mix: weight of ipv4/tcp is "lots", want a number`},
		{"weight zero", "flows: 8\nmix: {ipv4/tcp: 0}\n", "mix: weight of ipv4/tcp is 0, want a number > 0"},
		{"duplicate shape", "flows: 8\nmix: {ipv4/tcp: 1, ipv4/tcp: 2}\n", "shape ipv4/tcp appears twice"},
		{"too few flows", "flows: 1\nmix: {ipv4/tcp: 1, ipv6/tcp: 1}\n", "flows: 1, want 2 (one per shape)"},
		{"too many flows", "flows: 99999999\nmix: {ipv4/tcp: 1}\n", "flows: 99999999, want 1 (one per shape) to"},
		{"cycle too long", "flows: 8\ncycle: 99999999\nmix: {ipv4/tcp: 1}\n", "cycle: 99999999 frames"},
		{"cycle negative", "flows: 8\ncycle: -1\nmix: {ipv4/tcp: 1}\n", "cycle: -1 frames, want 1 (one per shape) to"},
		{"second document", "flows: 8\nmix: {ipv4/tcp: 1}\n---\nflows: 9\n", "line 3: a second YAML document"},
		{"second empty document", "flows: 8\nmix: {ipv4/tcp: 1}\n---\n", "a second YAML document"},
		{"unknown distribution", "flows: 8\nmix: {ipv4/tcp: 1}\nflow_sizes: pareto\n", `line 3: flow_sizes: unknown distribution "pareto"`},
		{"zipf without exponent", "flows: 8\nmix: {ipv4/tcp: 1}\nflow_sizes: {dist: zipf}\n", "zipf exponent 0, want a number > 0"},
		{"elephants share 1", "flows: 8\nmix: {ipv4/tcp: 1}\nflow_sizes: {dist: elephants, flows: 0.1, share: 1}\n", "want both strictly between 0 and 1"},
		{"flow_sizes unknown key", "flows: 8\nmix: {ipv4/tcp: 1}\nflow_sizes: {dist: zipf, exp: 1}\n", `line 3: flow_sizes: unknown field "exp" (want dist, exponent, flows, share)`},
		{"frame too short", "flows: 8\nmix: {ipv4/tcp: 1}\nframe_sizes: 40\n", "frame_sizes: 40 bytes, want 60 to"},
		{"frame too long", "flows: 8\nmix: {ipv4/tcp: 1}\nframe_sizes: 9000\n", "frame_sizes: 9000 bytes, want 60 to"},
		{"range reversed", "flows: 8\nmix: {ipv4/tcp: 1}\nframe_sizes: 1500-64\n", "range 1500-64, want"},
		{"range garbage", "flows: 8\nmix: {ipv4/tcp: 1}\nframe_sizes: 64-big\n", `line 3: frame_sizes: range "64-big"`},
		{"size word", "flows: 8\nmix: {ipv4/tcp: 1}\nframe_sizes: jumbo\n", `frame_sizes: "jumbo", want imix`},
		{"size weight", "flows: 8\nmix: {ipv4/tcp: 1}\nframe_sizes: {64: x}\n", `weight of 64 bytes is "x"`},
		{"reply share", "flows: 8\nmix: {ipv4/tcp: 1}\nreply_share: 1.5\n", "reply_share: 1.5, want 0 to 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProfile([]byte(tt.yaml), "test.yaml")
			if err == nil {
				t.Fatalf("no error, want one containing %q", tt.want)
			}
			if !errors.Is(err, ErrInvalidProfile) {
				t.Errorf("error %q does not wrap ErrInvalidProfile", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadProfile(t *testing.T) {
	p, err := LoadProfile("isp")
	if err != nil || p.Name != "isp" {
		t.Fatalf("LoadProfile(isp) = %v, %v", p.Name, err)
	}
	path := filepath.Join(t.TempDir(), "campus.yaml")
	if err := os.WriteFile(path, []byte(campusYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadProfile(path); err != nil || p.Name != "campus" {
		t.Errorf("LoadProfile(%s) = %v, %v", path, p.Name, err)
	}
	if _, err := LoadProfile("nosuch"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("LoadProfile(nosuch) = %v, want ErrUnknownProfile", err)
	}
	if _, err := LoadProfile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("LoadProfile(missing file) = %v, want a not-found error", err)
	}
}

// TestLoadProfileEndless loads a file that never ends: the loader stops at
// MaxProfileBytes with an error instead of reading until memory runs out.
func TestLoadProfileEndless(t *testing.T) {
	_, err := LoadProfile("/dev/zero")
	if !errors.Is(err, ErrInvalidProfile) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadProfile(/dev/zero) = %v, want a size error", err)
	}
}
