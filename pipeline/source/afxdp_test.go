package source

import (
	"slices"
	"strings"
	"testing"
)

func TestParseQueues(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string // "" when it parses
	}{
		{"all", nil, ""},
		{" all ", nil, ""},
		{"0", []int{0}, ""},
		{"0,2-3", []int{0, 2, 3}, ""},
		{"3,0-1", []int{0, 1, 3}, ""},
		{" 1 , 4 - 5 ", []int{1, 4, 5}, ""},
		{"7-7", []int{7}, ""},
		{"65535", []int{65535}, ""},
		{"", nil, "empty"},
		{"0,", nil, "empty or negative"},
		{"-1", nil, "empty or negative"},
		{"a", nil, `queue "a"`},
		{"65536", nil, `queue "65536"`},
		{"3-1", nil, "runs backwards"},
		{"0-2,2", nil, "queue 2 listed twice"},
		{"1-", nil, "empty or negative"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseQueues(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseQueues(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("ParseQueues(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			}
			if back, err := ParseQueues(FormatQueues(got)); err != nil || !slices.Equal(back, got) {
				t.Errorf("ParseQueues(FormatQueues(%v) = %q) = %v, %v", got, FormatQueues(got), back, err)
			}
		})
	}
}

func TestFormatQueues(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, "all"},
		{[]int{}, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2}, "0-2"},
		{[]int{0, 2, 3, 5}, "0,2-3,5"},
	}
	for _, tt := range tests {
		if got := FormatQueues(tt.in); got != tt.want {
			t.Errorf("FormatQueues(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParseQueues: a queue list either fails with an error or is sorted,
// without repeats, within the bound, and reads back from FormatQueues as
// itself.
func FuzzParseQueues(f *testing.F) {
	for _, s := range []string{"all", "0", "0,2-3", "3,0-1", "0-65535", "-1", "1-", "0,,1", "65536", "2-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 256 {
			return // a flag value, not a file
		}
		qs, err := ParseQueues(s)
		if err != nil || qs == nil {
			return
		}
		for i, q := range qs {
			if q < 0 || q >= maxQueue || i > 0 && q <= qs[i-1] {
				t.Fatalf("ParseQueues(%q) = %v: not sorted unique queues below %d", s, qs, maxQueue)
			}
		}
		back, err := ParseQueues(FormatQueues(qs))
		if err != nil || !slices.Equal(back, qs) {
			t.Fatalf("ParseQueues(%q) = %v, formatted %q, read back %v, %v", s, qs, FormatQueues(qs), back, err)
		}
	})
}
