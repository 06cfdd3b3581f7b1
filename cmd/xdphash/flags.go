package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

// outputFormat is --format: how a command writes one result per frame.
type outputFormat string

const (
	formatText  outputFormat = "text"  // one readable line per frame
	formatJSONL outputFormat = "jsonl" // one JSON object per line (frameRecord)
)

// dissectPath is --path: which dissector implementation runs.
type dissectPath string

// The dissector implementations.
const (
	// pathSlow is the reference dissector, a port of the kernel's state machine
	// that bounds every header read.
	pathSlow dissectPath = "slow"
	// pathFast tries the per-shape fast paths whose gates are open (--gates),
	// falling back to the slow path; the keys are byte-identical.
	pathFast dissectPath = "fast"
	// pathAuto is pathFast with the gates chosen from the traffic (auto mode).
	pathAuto dissectPath = "auto"
)

// gatesFlag is --gates: a list of shapes, all, none, or auto.
type gatesFlag struct {
	gates dissect.Gates
	auto  bool
	set   bool
}

func (f *gatesFlag) Set(s string) error {
	f.set = true
	if s == "auto" {
		f.auto, f.gates = true, dissect.AllGates
		return nil
	}
	g, err := dissect.ParseGates(s)
	if err != nil {
		return err
	}
	f.gates, f.auto = g, false
	return nil
}

func (f *gatesFlag) String() string {
	if f.auto {
		return "auto"
	}
	return f.gates.String()
}

func (f *gatesFlag) Type() string { return "LIST|all|none|auto" }

// choiceFlag is a flag whose value is one of a fixed list of names.
type choiceFlag[T ~string] struct {
	value   *T
	choices []T
}

func newChoiceFlag[T ~string](value *T, choices ...T) *choiceFlag[T] {
	return &choiceFlag[T]{value: value, choices: choices}
}

func (f *choiceFlag[T]) Set(s string) error {
	if slices.Contains(f.choices, T(s)) {
		*f.value = T(s)
		return nil
	}
	if len(f.choices) == 1 {
		return fmt.Errorf("only %s is available", f.choices[0])
	}
	return fmt.Errorf("want %s, not %q", f.Type(), s)
}

func (f *choiceFlag[T]) String() string { return string(*f.value) }

// Type names the choices in the usage text: "--format text|jsonl".
func (f *choiceFlag[T]) Type() string {
	names := make([]string, len(f.choices))
	for i, c := range f.choices {
		names[i] = string(c)
	}
	return strings.Join(names, "|")
}

// parsedFlag is a flag whose names the package of its type parses
// (hash.ParseKind): the flag only hands them over.
type parsedFlag[T fmt.Stringer] struct {
	value *T
	parse func(string) (T, error)
	names []string
}

func newParsedFlag[T fmt.Stringer](value *T, parse func(string) (T, error), names []string) *parsedFlag[T] {
	return &parsedFlag[T]{value: value, parse: parse, names: names}
}

func (f *parsedFlag[T]) Set(s string) error {
	v, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.value = v
	return nil
}

func (f *parsedFlag[T]) String() string { return (*f.value).String() }

// Type names the choices in the usage text: "--hash auto|kernel|...".
func (f *parsedFlag[T]) Type() string { return strings.Join(f.names, "|") }

// hashKeyFlag is --hash-key: the 128-bit SipHash key, the kernel's hashrnd.
// set tells a given key from none, for which a command draws a random one.
type hashKeyFlag struct {
	key hash.Key
	set bool
}

func (f *hashKeyFlag) Set(s string) error {
	k, err := hash.ParseKey(s)
	if err != nil {
		return err
	}
	f.key, f.set = k, true
	return nil
}

func (f *hashKeyFlag) String() string {
	if !f.set {
		return ""
	}
	return f.key.String()
}

func (f *hashKeyFlag) Type() string { return "hex" }

// dissectorFlags is --flags: the FLOW_DISSECTOR_F_* bits, in any base
// strconv.ParseUint accepts with base 0 ("2", "0x3").
type dissectorFlags struct {
	value *dissect.Flags
}

func (f dissectorFlags) Set(s string) error {
	n, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return errors.New("want a 32-bit number such as 2 or 0x3")
	}
	*f.value = dissect.Flags(n)
	return nil
}

func (f dissectorFlags) String() string { return "0x" + strconv.FormatUint(uint64(*f.value), 16) }

func (f dissectorFlags) Type() string { return "bits" }
