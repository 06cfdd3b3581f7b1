package hash

import (
	"errors"
	"slices"
	"testing"
)

func TestParseKindRoundTrip(t *testing.T) {
	names := KindNames()
	if want := []string{"auto", "kernel", "toeplitz", "device"}; !slices.Equal(names, want) {
		t.Errorf("KindNames() = %q, want %q", names, want)
	}
	seen := map[Kind]bool{}
	for _, name := range names {
		k, err := ParseKind(name)
		if err != nil {
			t.Fatalf("ParseKind(%q): %v", name, err)
		}
		if k.String() != name {
			t.Errorf("ParseKind(%q).String() = %q", name, k.String())
		}
		if seen[k] {
			t.Errorf("ParseKind(%q) = %v, which another name gave too", name, k)
		}
		seen[k] = true
	}
	for _, k := range []Kind{KindKernel, KindToeplitz, KindAuto, KindDevice} {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%v.String()) = %v, %v", k, got, err)
		}
	}
}

func TestParseSymmetryRoundTrip(t *testing.T) {
	if got, want := SymmetryNames(), []string{"none", "xor", "sort"}; !slices.Equal(got, want) {
		t.Errorf("SymmetryNames() = %q, want %q", got, want)
	}
	for _, s := range []Symmetry{SymmetricNone, SymmetricXOR, SymmetricSort} {
		if got, err := ParseSymmetry(s.String()); err != nil || got != s {
			t.Errorf("ParseSymmetry(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	for name, want := range map[string]Symmetry{"none": SymmetricNone, "xor": SymmetricXOR, "sort": SymmetricSort} {
		if got, err := ParseSymmetry(name); err != nil || got != want {
			t.Errorf("ParseSymmetry(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
}

func TestParseNamesRefuse(t *testing.T) {
	for _, name := range []string{"", "Kernel", "rss", "toeplitz "} {
		if k, err := ParseKind(name); !errors.Is(err, ErrName) {
			t.Errorf("ParseKind(%q) = %v, %v; want ErrName", name, k, err)
		}
	}
	if _, err := ParseKind("rss"); err == nil || err.Error() != `parse hash kind "rss": unknown name, want auto, kernel, toeplitz or device` {
		t.Errorf("ParseKind(rss) error = %v", err)
	}
	for _, name := range []string{"", "XOR", "or-xor", "symmetric-sort"} {
		if s, err := ParseSymmetry(name); !errors.Is(err, ErrName) {
			t.Errorf("ParseSymmetry(%q) = %v, %v; want ErrName", name, s, err)
		}
	}
}
