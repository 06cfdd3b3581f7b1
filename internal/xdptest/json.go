package xdptest

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// ReadJSON decodes the JSON file at path into a T (a run's --out file into a
// runstats.RunStats, for one), failing the test if it cannot be read or
// holds a field T lacks: a field the schema does not know is a bug.
func ReadJSON[T any](tb testing.TB, path string) *T {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	return &v
}
