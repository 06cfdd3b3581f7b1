package pipeline

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
		{"0,", nil, `queue ""`},
		{"-1", nil, `queue ""`},
		{"a", nil, `queue "a"`},
		{"65536", nil, `queue "65536"`},
		{"3-1", nil, "runs backwards"},
		{"0-2,2", nil, "queue 2 listed twice"},
		{"1-", nil, `queue ""`},
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

func TestChooseRxMode(t *testing.T) {
	tests := []struct {
		name                  string
		mode                  RxMode
		queues, workers, cpus int
		want                  RxMode
	}{
		{"spin asked", RxSpin, 4, 4, 2, RxSpin},
		{"poll asked", RxPoll, 1, 0, 64, RxPoll},
		{"a queue and its softirq on 2 CPUs", RxAuto, 1, 0, 2, RxPoll},
		{"a queue and its softirq on 3 CPUs", RxAuto, 1, 0, 3, RxSpin},
		{"a queue, its softirq and a worker on 3 CPUs", RxAuto, 1, 1, 3, RxPoll},
		{"2 queues on 2 CPUs", RxAuto, 2, 0, 2, RxPoll},
		{"4 queues, 7 workers on 16 CPUs", RxAuto, 4, 7, 16, RxSpin},
		{"4 queues, 8 workers on 16 CPUs", RxAuto, 4, 8, 16, RxPoll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chooseRxMode(tt.mode, tt.queues, tt.workers, tt.cpus); got != tt.want {
				t.Errorf("chooseRxMode(%s, %d queues, %d workers, %d CPUs) = %s, want %s", tt.mode, tt.queues, tt.workers, tt.cpus, got, tt.want)
			}
		})
	}
}
