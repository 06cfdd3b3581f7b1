package nicrss

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/hash"
)

const msKey = "6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa"

// table is a round-robin table of n entries over q queues, as JSON.
func table(n, q int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(byte('0' + i%q))
	}
	return "[" + b.String() + "]"
}

func TestLoad(t *testing.T) {
	good := `{"name":"eth0","hash_function":"toeplitz","input_transform":"none","key":"` + msKey + `","indirection":` + table(128, 4) +
		`,"fields":{"udp4":"sd","udp6":"sd"}}`
	n, err := Load(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	pc, _ := n.ParseConfig()
	if want := TypesDefault &^ (TypeUDPv4 | TypeUDPv6); pc.Types != want || n.QueueCount() != 4 {
		t.Errorf("types %#x, queues %d; want %#x, 4", pc.Types, n.QueueCount(), want)
	}
	for name, text := range map[string]string{
		"unknown field":    strings.Replace(good, `"name"`, `"nmae"`, 1),
		"two objects":      good + good,
		"short key":        strings.Replace(good, msKey, "6d:5a", 1),
		"key not hex":      strings.Replace(good, msKey, strings.Repeat("zz", 40), 1),
		"xor":              strings.Replace(good, `"toeplitz"`, `"xor"`, 1),
		"or-xor":           strings.Replace(good, `"none"`, `"symmetric-or-xor"`, 1),
		"table of 100":     strings.Replace(good, table(128, 4), table(100, 4), 1),
		"entry past queue": strings.Replace(good, `"indirection"`, `"queues":2,"indirection"`, 1),
		"fields sdf":       strings.Replace(good, `"udp4":"sd"`, `"udp4":"sdf"`, 1),
		"flow type sctp4":  strings.Replace(good, `"udp4":"sd"`, `"sctp4":"sd"`, 1),
		"level 3":          strings.Replace(good, `"name"`, `"level":"3","name"`, 1),
		"quirk":            strings.Replace(good, `"name"`, `"quirks":["e1000"],"name"`, 1),
		"too long":         good + strings.Repeat(" ", MaxFileSize),
		"not json":         "key=6d5a",
	} {
		if _, err := Load(strings.NewReader(text)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Load = %v, want an ErrConfig", name, err)
		}
	}
}

// TestFieldLetters: ethtool's letters for the RXH bits a driver returns.
func TestFieldLetters(t *testing.T) {
	for rxh, want := range map[uint64]string{0xf0: "sdfn", 0x30: "sd", 0: "", 1 << 31: "discard", 0xfe: "mvtsdfn"} {
		if got := FieldLetters(rxh); got != want {
			t.Errorf("FieldLetters(%#x) = %q, want %q", rxh, got, want)
		}
	}
}

// TestBestWeights: the weights' table is the best contiguous split of the
// per-entry load, and hash.NewRETA builds exactly those runs from them.
func TestBestWeights(t *testing.T) {
	for _, c := range []struct {
		name    string
		buckets []uint64
		queues  int
		want    []int
		max     uint64
	}{
		{"even", []uint64{1, 1, 1, 1, 1, 1, 1, 1}, 2, []int{4, 4}, 4},
		{"one heavy entry", []uint64{9, 1, 1, 1, 1, 1, 1, 1}, 2, []int{1, 7}, 9},
		{"heavy tail", []uint64{1, 1, 1, 1, 1, 1, 4, 4}, 2, []int{6, 2}, 8},
		{"more queues than load", []uint64{0, 0, 5, 0}, 4, []int{1, 1, 1, 1}, 5},
	} {
		w, m := BestWeights(c.buckets, c.queues)
		if !slices.Equal(w, c.want) || m != c.max {
			t.Errorf("%s: BestWeights = %v, %d; want %v, %d", c.name, w, m, c.want, c.max)
		}
		r, err := hash.NewRETA(len(c.buckets), c.queues, w)
		if err != nil {
			t.Fatalf("%s: NewRETA(%v): %v", c.name, w, err)
		}
		load := make([]uint64, c.queues)
		for i, q := range r.Table() {
			load[q] += c.buckets[i]
		}
		if slices.Max(load) != m {
			t.Errorf("%s: the table of %v loads the queues %v, busiest not %d", c.name, w, load, m)
		}
	}
}

// TestPredict: every corpus frame lands where the hasher says, the loads
// add up, and the non-IP frames are on queue 0 without a hash.
func TestPredict(t *testing.T) {
	n := &NIC{HashFunction: "toeplitz", Key: msKey, Indirection: make([]uint32, 128)}
	for i := range n.Indirection {
		n.Indirection[i] = uint32(i % 4)
	}
	h, err := n.Hasher()
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPredictor(h)
	if err != nil {
		t.Fatal(err)
	}
	frames := corpus.Build()
	var unhashed uint64
	var tu Tuple
	for _, f := range frames {
		p.Add(f.Data, len(f.Data))
		if _, ok := h.Hash(&tu, f.Data); !ok {
			unhashed++
		}
	}
	r := p.Result()
	var sum uint64
	for _, q := range r.Queues {
		sum += q.Frames
	}
	if r.Frames != uint64(len(frames)) || sum != r.Frames || r.Unhashed != unhashed || r.Queues[0].FramesUnhashed != unhashed {
		t.Errorf("prediction %+v: frames %d, sum %d, unhashed %d; want %d frames, %d unhashed", r, r.Frames, sum, r.Unhashed, len(frames), unhashed)
	}
	if r.Flows < 100 || r.Expected <= 1 || r.MaxMean < 1 || r.WeightsMaxMean > r.MaxMean+1e-9 || len(r.Weights) != 4 {
		t.Errorf("flows %d, max/mean %.3f (expected %.3f), weights %v at %.3f", r.Flows, r.MaxMean, r.Expected, r.Weights, r.WeightsMaxMean)
	}
	var b strings.Builder
	if err := r.WriteText(&b, "eth0"); err != nil || !strings.Contains(b.String(), "ethtool -X eth0 weight ") {
		t.Errorf("WriteText: %v\n%s", err, b.String())
	}
}
