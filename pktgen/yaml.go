package pktgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// profileFile is a profile as YAML writes it; see the package documentation.
type profileFile struct {
	Name       string    `yaml:"name"`
	Flows      int       `yaml:"flows"`
	Cycle      int       `yaml:"cycle"`
	Seed       uint64    `yaml:"seed"`
	ReplyShare float64   `yaml:"reply_share"`
	FlowSizes  yaml.Node `yaml:"flow_sizes"`
	FrameSizes yaml.Node `yaml:"frame_sizes"`
	Mix        yaml.Node `yaml:"mix"`
	HotSet     yaml.Node `yaml:"hot_set"`
}

// flowSizesFile is the mapping form of flow_sizes.
type flowSizesFile struct {
	Dist     string  `yaml:"dist"`
	Exponent float64 `yaml:"exponent"`
	Flows    float64 `yaml:"flows"` // elephants' share of the flows
	Share    float64 `yaml:"share"` // elephants' share of the frames
}

// ParseProfile reads a YAML profile (see the package documentation). name is
// the profile's name when the file gives none, and names it in errors.
// Unknown fields are errors. The profile is validated; its errors wrap
// ErrInvalidProfile and give the line of the field at fault where they can.
func ParseProfile(data []byte, name string) (Profile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f profileFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Profile{}, fmt.Errorf("parse profile %s: %w: the file is empty", name, ErrInvalidProfile)
		}
		return Profile{}, fmt.Errorf("parse profile %s: %w: %s", name, ErrInvalidProfile, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return Profile{}, fmt.Errorf("parse profile %s: %w: line %d: a second YAML document (after ---); a profile file holds one", name, ErrInvalidProfile, next.Line)
	}
	if f.Name != "" {
		name = f.Name
	}
	p := Profile{Name: name, Flows: f.Flows, Cycle: f.Cycle, Seed: f.Seed, ReplyShare: f.ReplyShare}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("parse profile %s: %w: line %d: %s", name, ErrInvalidProfile, n.Line, fmt.Sprintf(format, args...))
	}
	var err error
	if p.Mix, err = parseMix(&f.Mix, bad); err != nil {
		return Profile{}, err
	}
	if p.FlowSizes, err = parseFlowSizes(&f.FlowSizes, bad); err != nil {
		return Profile{}, err
	}
	if p.FrameSizes, err = parseFrameSizes(&f.FrameSizes, bad); err != nil {
		return Profile{}, err
	}
	if p.HotSet, err = parseHotSet(&f.HotSet, bad); err != nil {
		return Profile{}, err
	}
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

type nodeError func(n *yaml.Node, format string, args ...any) error

// parseMix reads mix: a mapping of shape names to weights, in file order.
func parseMix(n *yaml.Node, bad nodeError) ([]ShapeWeight, error) {
	if n.Kind == 0 {
		return nil, nil // Validate reports the missing mix
	}
	if n.Kind != yaml.MappingNode {
		return nil, bad(n, "mix: want a mapping of shapes to weights, like \"ipv4/tcp: 3\"")
	}
	var out []ShapeWeight
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		s, err := ParseShape(k.Value)
		if err != nil {
			return nil, bad(k, "mix: %v", err)
		}
		w, err := strconv.ParseFloat(v.Value, 64)
		if err != nil || v.Kind != yaml.ScalarNode {
			return nil, bad(v, "mix: weight of %s is %q, want a number", k.Value, v.Value)
		}
		out = append(out, ShapeWeight{s, w})
	}
	return out, nil
}

// parseFlowSizes reads flow_sizes: "uniform", or a mapping with dist and its
// parameters.
func parseFlowSizes(n *yaml.Node, bad nodeError) (FlowSizes, error) {
	var f flowSizesFile
	switch n.Kind {
	case 0:
		return FlowSizes{Dist: Uniform}, nil
	case yaml.ScalarNode:
		f.Dist = n.Value
	case yaml.MappingNode:
		// Node.Decode does not know the decoder's KnownFields.
		for i := 0; i < len(n.Content); i += 2 {
			switch k := n.Content[i]; k.Value {
			case "dist", "exponent", "flows", "share":
			default:
				return FlowSizes{}, bad(k, "flow_sizes: unknown field %q (want dist, exponent, flows, share)", k.Value)
			}
		}
		if err := n.Decode(&f); err != nil {
			return FlowSizes{}, bad(n, "flow_sizes: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
	default:
		return FlowSizes{}, bad(n, "flow_sizes: want uniform or a mapping such as {dist: zipf, exponent: 1.1}")
	}
	switch f.Dist {
	case "uniform":
		return FlowSizes{Dist: Uniform}, nil
	case "zipf":
		return FlowSizes{Dist: Zipf, Exponent: f.Exponent}, nil
	case "elephants":
		return FlowSizes{Dist: Elephants, ElephantFlows: f.Flows, ElephantShare: f.Share}, nil
	}
	return FlowSizes{}, bad(n, "flow_sizes: unknown distribution %q (want uniform, zipf or elephants)", f.Dist)
}

// parseHotSet reads hot_set: a mapping of flows, share, phases and step,
// such as {flows: 16, share: 0.5, phases: 8, step: 4}. Counts must be
// integers: YAML would cut 8.5 to 8 without a word.
func parseHotSet(n *yaml.Node, bad nodeError) (HotSet, error) {
	switch n.Kind {
	case 0:
		return HotSet{}, nil
	case yaml.MappingNode:
	default:
		return HotSet{}, bad(n, "hot_set: want a mapping such as {flows: 16, share: 0.5, phases: 8, step: 4}")
	}
	var h HotSet
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return HotSet{}, bad(k, "hot_set: %s given twice", k.Value)
		}
		seen[k.Value] = true
		if v.Kind != yaml.ScalarNode {
			return HotSet{}, bad(v, "hot_set: %s: want a number", k.Value)
		}
		var count *int
		switch k.Value {
		case "share":
			x, err := strconv.ParseFloat(v.Value, 64)
			if err != nil {
				return HotSet{}, bad(v, "hot_set: share %q, want a number", v.Value)
			}
			h.Share = x
			continue
		case "flows":
			count = &h.Flows
		case "phases":
			count = &h.Phases
		case "step":
			count = &h.Step
		default:
			return HotSet{}, bad(k, "hot_set: unknown field %q (want flows, share, phases, step)", k.Value)
		}
		x, err := strconv.Atoi(v.Value)
		if err != nil {
			return HotSet{}, bad(v, "hot_set: %s %q, want a whole number", k.Value, v.Value)
		}
		*count = x
	}
	if h.Phases == 0 {
		// The zero HotSet is no hot set: a hot_set without phases must not
		// vanish silently.
		return HotSet{}, bad(n, "hot_set: 0 phases, want 1 or more (or no hot_set)")
	}
	return h, nil
}

// parseFrameSizes reads frame_sizes: "imix", a length, "MIN-MAX", or a
// mapping of lengths to weights.
func parseFrameSizes(n *yaml.Node, bad nodeError) (FrameSizes, error) {
	switch n.Kind {
	case 0:
		return FixedSize(64), nil
	case yaml.ScalarNode:
		v := strings.TrimSpace(n.Value)
		if v == "imix" {
			return IMIX(), nil
		}
		if lo, hi, ok := strings.Cut(v, "-"); ok {
			min, err1 := strconv.Atoi(strings.TrimSpace(lo))
			max, err2 := strconv.Atoi(strings.TrimSpace(hi))
			if err1 != nil || err2 != nil {
				return FrameSizes{}, bad(n, "frame_sizes: range %q, want MIN-MAX such as 64-1500", v)
			}
			return SizeRange(min, max), nil
		}
		l, err := strconv.Atoi(v)
		if err != nil {
			return FrameSizes{}, bad(n, "frame_sizes: %q, want imix, a length, MIN-MAX or a mapping of lengths to weights", v)
		}
		return FixedSize(l), nil
	case yaml.MappingNode:
		var out FrameSizes
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			l, err := strconv.Atoi(k.Value)
			if err != nil {
				return FrameSizes{}, bad(k, "frame_sizes: length %q, want a number of bytes", k.Value)
			}
			w, err := strconv.ParseFloat(v.Value, 64)
			if err != nil || v.Kind != yaml.ScalarNode {
				return FrameSizes{}, bad(v, "frame_sizes: weight of %d bytes is %q, want a number", l, v.Value)
			}
			out.Sizes = append(out.Sizes, SizeWeight{l, w})
		}
		if len(out.Sizes) == 0 {
			return FrameSizes{}, bad(n, "frame_sizes: empty mapping")
		}
		return out, nil
	}
	return FrameSizes{}, bad(n, "frame_sizes: want imix, a length, MIN-MAX or a mapping of lengths to weights")
}

// MaxProfileBytes bounds a profile file: a profile is a few lines, and a
// path such as /dev/zero must not be read until memory runs out.
const MaxProfileBytes = 1 << 20

// LoadProfile returns the built-in profile nameOrPath or, when no built-in
// has that name, the profile in the file at that path (at most
// MaxProfileBytes).
func LoadProfile(nameOrPath string) (Profile, error) {
	if b, ok := builtins[nameOrPath]; ok {
		return b(), nil
	}
	f, err := os.Open(nameOrPath)
	if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(nameOrPath, "/.") {
		_, err := Builtin(nameOrPath)
		return Profile{}, err
	}
	if err != nil {
		return Profile{}, fmt.Errorf("load profile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileBytes+1))
	if err != nil {
		return Profile{}, fmt.Errorf("load profile %s: %w", nameOrPath, err)
	}
	if len(data) > MaxProfileBytes {
		return Profile{}, fmt.Errorf("load profile %s: %w: larger than %d bytes (a profile is a few lines of YAML)", nameOrPath, ErrInvalidProfile, MaxProfileBytes)
	}
	return ParseProfile(data, nameOrPath)
}
