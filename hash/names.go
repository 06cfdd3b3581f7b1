package hash

import (
	"fmt"
	"strings"
)

// kindOrder is the order KindNames lists the kinds in: the default of a
// live run first.
var kindOrder = [...]Kind{KindAuto, KindKernel, KindToeplitz, KindDevice}

// KindNames lists the names ParseKind takes, one per kind.
func KindNames() []string {
	names := make([]string, len(kindOrder))
	for i, k := range kindOrder {
		names[i] = k.String()
	}
	return names
}

// ParseKind is the Kind that String names.
func ParseKind(name string) (Kind, error) {
	for _, k := range kindOrder {
		if name == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("parse hash kind %q: %w, want %s", name, ErrName, orList(KindNames()))
}

// symmetryNames are the names ParseSymmetry takes: each Symmetry's short
// name first, then the spellings of String that differ from it.
var symmetryNames = []struct {
	name string
	sym  Symmetry
}{
	{"none", SymmetricNone},
	{"xor", SymmetricXOR},
	{"sort", SymmetricSort},
	{"symmetric-xor", SymmetricXOR}, // String's, ethtool's "symmetric-xor"
}

// SymmetryNames lists the short name of each Symmetry: "none", "xor",
// "sort". ParseSymmetry also takes what String returns.
func SymmetryNames() []string {
	var names []string
	seen := map[Symmetry]bool{}
	for _, n := range symmetryNames {
		if !seen[n.sym] {
			seen[n.sym] = true
			names = append(names, n.name)
		}
	}
	return names
}

// ParseSymmetry is the Symmetry a name of SymmetryNames, or String's
// spelling, names.
func ParseSymmetry(name string) (Symmetry, error) {
	for _, n := range symmetryNames {
		if name == n.name {
			return n.sym, nil
		}
	}
	return 0, fmt.Errorf("parse symmetry %q: %w, want %s", name, ErrName, orList(SymmetryNames()))
}

// orList is "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
