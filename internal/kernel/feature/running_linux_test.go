package feature

import "testing"

func TestRunning(t *testing.T) {
	v, err := Running()
	if err != nil {
		t.Fatal(err)
	}
	if v.Less(Version{2, 6, 0}) {
		t.Errorf("Running() = %v, older than any kernel with BPF", v)
	}
}
