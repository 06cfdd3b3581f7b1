package hash

import (
	"errors"
	"slices"
	"testing"
)

func TestRPSMapCPU(t *testing.T) {
	tests := []struct {
		name string
		cpus []int
		hash uint32
		want int
	}{
		{"lowest hash, first CPU", []int{0, 2, 4, 6}, 1, 0},
		{"quarter boundary, second CPU", []int{0, 2, 4, 6}, 0x40000000, 2},
		{"just below the quarter", []int{0, 2, 4, 6}, 0x3fffffff, 0},
		{"half, third CPU", []int{0, 2, 4, 6}, 0x80000000, 4},
		{"max hash, last CPU", []int{0, 2, 4, 6}, 0xffffffff, 6},
		{"spec 7a hash: top bits 10", []int{0, 2, 4, 6}, 0xaa09f22d, 4},
		{"high bits, not modulo: low bits ignored", []int{0, 2, 4, 6}, 0x00000003, 0},
		{"given unsorted with duplicates: kernel order", []int{6, 2, 2, 0, 4}, 0x80000000, 4},
		{"three CPUs, last hash of the first third", []int{1, 3, 5}, 0x55555555, 1},
		{"three CPUs, first hash of the second third", []int{1, 3, 5}, 0x55555556, 3},
		{"one CPU", []int{5}, 0x12345678, 5},
		{"hash 0 is no hash: no steering", []int{0, 1}, 0, -1},
		{"empty map: no steering", nil, 0x12345678, -1},
	}
	for _, tt := range tests {
		m, err := NewRPSMap(tt.cpus)
		if err != nil {
			t.Fatalf("%s: NewRPSMap(%v): %v", tt.name, tt.cpus, err)
		}
		if got := m.CPU(tt.hash); got != tt.want {
			t.Errorf("%s: map %v CPU(%#08x) = %d, want %d", tt.name, tt.cpus, tt.hash, got, tt.want)
		}
	}
	if got := (RPSMap{}).CPU(1); got != -1 {
		t.Errorf("zero RPSMap CPU(1) = %d, want -1", got)
	}
}

func TestNewRPSMap(t *testing.T) {
	in := []int{3, 1, 3, 0}
	m, err := NewRPSMap(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.CPUs(), []int{0, 1, 3}; !slices.Equal(got, want) || m.Len() != 3 {
		t.Errorf("NewRPSMap(%v).CPUs() = %v (len %d), want %v", in, got, m.Len(), want)
	}
	if !slices.Equal(in, []int{3, 1, 3, 0}) {
		t.Errorf("NewRPSMap changed its argument to %v", in)
	}
	if _, err := NewRPSMap([]int{0, -1}); !errors.Is(err, ErrCPU) {
		t.Errorf("NewRPSMap with CPU -1: error = %v, want ErrCPU", err)
	}
}

func TestNewRETA(t *testing.T) {
	tests := []struct {
		name         string
		size, queues int
		weights      []int
		want         []int
	}{
		{"round robin", 8, 3, nil, []int{0, 1, 2, 0, 1, 2, 0, 1}},
		{"one queue", 4, 1, nil, []int{0, 0, 0, 0}},
		{"equal weights: halves, not interleaved", 8, 2, []int{1, 1}, []int{0, 0, 0, 0, 1, 1, 1, 1}},
		{"weights 3:1", 8, 2, []int{3, 1}, []int{0, 0, 0, 0, 0, 0, 1, 1}},
		{"weights 1:1:1 round down", 8, 3, []int{1, 1, 1}, []int{0, 0, 1, 1, 1, 2, 2, 2}},
		{"zero weight skips a queue", 8, 3, []int{1, 0, 2}, []int{0, 0, 2, 2, 2, 2, 2, 2}},
		{"fewer weights than queues", 4, 4, []int{0, 1}, []int{1, 1, 1, 1}},
		{"weights sum to size", 4, 2, []int{3, 1}, []int{0, 0, 0, 1}},
	}
	for _, tt := range tests {
		r, err := NewRETA(tt.size, tt.queues, tt.weights)
		if err != nil {
			t.Fatalf("%s: NewRETA(%d, %d, %v): %v", tt.name, tt.size, tt.queues, tt.weights, err)
		}
		if got := r.Table(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: NewRETA(%d, %d, %v) table:\n-want %v\n+got  %v", tt.name, tt.size, tt.queues, tt.weights, tt.want, got)
		}
	}
}

func TestNewRETADefault(t *testing.T) {
	r, err := NewRETA(0, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != DefaultRETASize {
		t.Errorf("Len() = %d, want %d", r.Len(), DefaultRETASize)
	}
	for i, q := range r.Table() {
		if q != i%4 {
			t.Fatalf("entry %d = %d, want %d", i, q, i%4)
		}
	}
}

func TestNewRETAErrors(t *testing.T) {
	tests := []struct {
		name         string
		size, queues int
		weights      []int
	}{
		{"size not a power of two", 100, 4, nil},
		{"negative size", -128, 4, nil},
		{"size too large", 1 << 17, 4, nil},
		{"no queues", 128, 0, nil},
		{"weights sum to zero", 8, 2, []int{0, 0}},
		{"empty weights", 8, 2, []int{}},
		{"weights exceed size", 4, 2, []int{3, 2}},
		{"negative weight", 8, 2, []int{3, -1}},
		{"more weights than queues", 8, 2, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		if _, err := NewRETA(tt.size, tt.queues, tt.weights); !errors.Is(err, ErrRETA) {
			t.Errorf("%s: NewRETA(%d, %d, %v) error = %v, want ErrRETA", tt.name, tt.size, tt.queues, tt.weights, err)
		}
	}
}

func TestRETAQueue(t *testing.T) {
	def, err := NewRETA(0, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	weighted, err := NewRETA(8, 2, []int{3, 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		r    *RETA
		hash uint32
		want int
	}{
		{"low 7 bits 0x2d = 45, 45 % 4", def, 0xaa09f22d, 1},
		{"low 7 bits 0x77 = 119, 119 % 4", def, 0x12345677, 3},
		{"high bits ignored", def, 0xffffff80, 0},
		{"weighted, entry 6", weighted, 6, 1},
		{"weighted, entry 14 & 7 = 6", weighted, 14, 1},
		{"weighted, entry 0", weighted, 0xfffffff8, 0},
	}
	for _, tt := range tests {
		if got := tt.r.Queue(tt.hash); got != tt.want {
			t.Errorf("%s: Queue(%#08x) = %d, want %d", tt.name, tt.hash, got, tt.want)
		}
	}
}

func TestSteerAllocs(t *testing.T) {
	m, err := NewRPSMap([]int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRETA(0, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := 0
	if n := testing.AllocsPerRun(1000, func() { sink += m.CPU(0x12345678) + r.Queue(0x12345678) }); n != 0 {
		t.Errorf("CPU and Queue allocate %v times per call", n)
	}
}

func TestNewRETAFromTable(t *testing.T) {
	r, err := NewRETAFromTable([]uint32{0, 1, 1, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range []int{0, 1, 1, 0, 0, 1} {
		if got := r.Queue(uint32(h)); got != want {
			t.Errorf("Queue(%d) = %d, want %d", h, got, want)
		}
	}
	for _, tt := range []struct {
		name   string
		table  []uint32
		queues int
	}{
		{"empty", nil, 2},
		{"not a power of two", []uint32{0, 1, 0}, 2},
		{"queue out of range", []uint32{0, 2}, 2},
	} {
		if _, err := NewRETAFromTable(tt.table, tt.queues); !errors.Is(err, ErrRETA) {
			t.Errorf("%s: err %v, want ErrRETA", tt.name, err)
		}
	}
}
