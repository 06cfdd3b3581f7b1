package queues

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/runstats"
)

// fairRec is a packet of flow f (0 to 1023) of n bytes: its hash puts it in
// slot f of both a 1024-flow fq_codel (reciprocal_scale: the high 10 bits)
// and a 1024-flow fq (the low 10 bits). Addresses are 198.18.0.0/15.
func fairRec(f int, n uint32) Record {
	r := Record{
		Hash: uint32(f)<<22 | uint32(f), Len: n,
		SPort: uint16(10000 + f), DPort: 80, IPProto: 6, AddrType: uint8(dissect.AddrIPv4),
	}
	copy(r.Src[:], []byte{198, 18, byte(f >> 8), byte(f)})
	copy(r.Dst[:], []byte{198, 19, 0, 1})
	return r
}

// fairRecs is n packets of flow f.
func fairRecs(f, n int, size uint32) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = fairRec(f, size)
	}
	return recs
}

// fairConsumer is what the tests need of fq and fq_codel.
type fairConsumer interface {
	Consumer
}

// fairConsumers are the consumers the shared tests run against, with the
// kernel defaults but for cfg.
func fairConsumers(tb testing.TB, cfg ConsumerConfig) map[string]fairConsumer {
	tb.Helper()
	fqc, err := newFQCodelFrom(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	fq, err := newFQFrom(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]fairConsumer{"fq_codel": fqc, "fq": fq}
}

// servedBy counts the packets in recs by flow (the slot of fairRec).
func servedBy(recs []Record) map[int]int {
	n := map[int]int{}
	for _, r := range recs {
		n[int(r.Hash&1023)]++
	}
	return n
}

// checkAccounting checks that a consumer's counters account for every
// record offered, as the engine requires.
func checkConsumerAccounting(tb testing.TB, c Consumer, offered uint64) {
	tb.Helper()
	s := c.Stats()
	held := s.Dequeued + uint64(s.Backlog)
	for _, n := range s.Drops {
		held += n
	}
	if held != offered || s.Backlog != c.Backlog() {
		tb.Errorf("offered %d, accounted %d: %+v (Backlog() %d)", offered, held, s, c.Backlog())
	}
}

// TestEqualFlowsShareEqually backlogs 8 flows equally (96 packets each,
// within fq's flow limit) and serves half of what they queued: deficit round
// robin gives each the same bytes, within a quantum.
func TestEqualFlowsShareEqually(t *testing.T) {
	for name, c := range fairConsumers(t, ConsumerConfig{}) {
		t.Run(name, func(t *testing.T) {
			const flows, each = 8, 96
			for f := range flows {
				c.Enqueue(fairRecs(f, each, 1000), 0)
			}
			out := c.Dequeue(0, Budget{Packets: flows * each / 2}, make([]Record, 0, flows*each))
			for f, n := range servedBy(out) {
				want := each / 2
				if name == "fq" && f == 0 {
					// fq's first 8 packets, all of flow 0, skip the flows
					// through its fast-path FIFO.
					want += fqInternalMax
				}
				if n < want-2 || n > want+2 {
					t.Errorf("flow %d served %d packets, want %d ± 2", f, n, want)
				}
			}
			rep := c.Report()
			if rep.Flows.Jain < 0.99 || rep.Flows.Served != flows || rep.Flows.Active != flows || rep.Flows.Collisions != 0 {
				t.Errorf("flows %+v, want Jain ≈ 1 over %d flows without collisions", rep.Flows, flows)
			}
			checkConsumerAccounting(t, c, flows*each)
		})
	}
}

// TestSparseFlowFirst checks that a flow that was empty jumps the queue: a
// backlogged flow has been served long enough to be an old flow, then one
// packet of another flow arrives and is served next.
func TestSparseFlowFirst(t *testing.T) {
	for name, c := range fairConsumers(t, ConsumerConfig{}) {
		t.Run(name, func(t *testing.T) {
			c.Enqueue(fairRecs(1, 200, 1500), 0)
			out := c.Dequeue(0, Budget{Packets: 30}, nil)
			c.Enqueue(fairRecs(2, 1, 100), 0)
			out = c.Dequeue(0, Budget{Packets: 1}, out[:0])
			if len(out) != 1 || out[0].Hash&1023 != 2 {
				t.Errorf("served %v after the sparse packet, want flow 2 first", servedBy(out))
			}
			checkConsumerAccounting(t, c, 201)
		})
	}
}

// TestElephantLeavesMiceTheirShare runs one flow that offers twice what the
// worker serves beside ten sparse flows, in virtual time, and checks that
// the sparse flows lose nothing and wait little.
func TestElephantLeavesMiceTheirShare(t *testing.T) {
	for name, c := range fairConsumers(t, ConsumerConfig{}) {
		t.Run(name, func(t *testing.T) {
			const mice = 10
			var offered uint64
			miceOffered := 0
			served := map[int]int{}
			out := make([]Record, 0, 64)
			for ms := range int64(2000) {
				now := ms * int64(time.Millisecond)
				c.Enqueue(fairRecs(0, 20, 1500), now) // the elephant: 240 Mbit/s
				offered += 20
				for m := 1; m <= mice; m++ {
					if (ms+int64(m))%10 == 0 { // each mouse: a 100-byte packet every 10 ms
						c.Enqueue(fairRecs(m, 1, 100), now)
						offered++
						miceOffered++
					}
				}
				out = c.Dequeue(now, Budget{Bytes: 15000}, out[:0]) // 120 Mbit/s
				for f, n := range servedBy(out) {
					served[f] += n
				}
			}
			miceServed := 0
			for m := 1; m <= mice; m++ {
				miceServed += served[m]
			}
			if miceServed != miceOffered {
				t.Errorf("mice served %d of %d packets", miceServed, miceOffered)
			}
			if served[0] < 19000 {
				t.Errorf("elephant served %d packets, want most of the link (≈ 20000)", served[0])
			}
			rep := c.Report()
			var drops uint64
			for _, n := range rep.Drops {
				drops += n
			}
			if drops == 0 {
				t.Errorf("no drops of an elephant offering twice the link: %+v", rep.ConsumerStats)
			}
			if len(rep.Flows.Top) == 0 || rep.Flows.Top[0].Hash != fairRec(0, 0).Hash {
				t.Errorf("top flows %+v, want the elephant first", rep.Flows.Top)
			}
			checkConsumerAccounting(t, c, offered)
		})
	}
}

// TestCoDelDropsAfterInterval queues 400 packets of one flow at time 0 and
// serves one per millisecond: the sojourn time reaches the 5 ms target at
// 5 ms, CoDel drops first when it has stayed above for a whole 100 ms
// interval, at 105 ms, then at 205 ms (interval/sqrt(1)), then sooner; with
// ECN it marks at the same times.
func TestCoDelDropsAfterInterval(t *testing.T) {
	for _, ecn := range []bool{false, true} {
		q, err := newFQCodelFrom(ConsumerConfig{ECN: ecn})
		if err != nil {
			t.Fatal(err)
		}
		q.Enqueue(fairRecs(3, 400, 1000), 0)
		var signals []int64 // when a packet was dropped or marked, ms
		var last uint64
		for ms := int64(1); ms <= 300; ms++ {
			q.Dequeue(ms*int64(time.Millisecond), Budget{Packets: 1}, nil)
			s := q.Stats()
			if n := s.Drops[runstats.DropCodel] + s.CEMarks; n != last {
				signals = append(signals, ms)
				last = n
			}
		}
		// Codel time is ns >> 10: 5 ms is 4882 units, 100 ms 97656. At 5 ms
		// first_above_time = 4882 + 97656; the first dequeue after it is at
		// 105 ms (105e6 >> 10 = 102539). Dropping starts with count 1:
		// drop_next = 102539 + 97656·0xffff/65536 = 200193, reached at 205 ms.
		// Then count 2, and one Newton step from 1/sqrt(1) gives 1/2, not
		// 1/sqrt(2) (the kernel refines it over the next drops): 200193 +
		// 48828 = 249021, reached at 255 ms.
		want := []int64{105, 205, 255}
		if len(signals) != len(want) || signals[0] != want[0] || signals[1] != want[1] || signals[2] != want[2] {
			t.Errorf("ecn %v: drops or marks at %v ms, want %v", ecn, signals, want)
		}
		s := q.Stats()
		if ecn && (s.Drops[runstats.DropCodel] != 0 || s.CEMarks != 3) || !ecn && (s.Drops[runstats.DropCodel] != 3 || s.CEMarks != 0) {
			t.Errorf("ecn %v: %+v", ecn, s)
		}
		checkConsumerAccounting(t, q, 400)
	}
}

// TestCoDelNotBefore keeps the sojourn time above target for just under an
// interval, lets it fall below once, and keeps it above again for just under
// an interval: CoDel must not drop.
func TestCoDelNotBefore(t *testing.T) {
	q, err := newFQCodelFrom(ConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	// Packets enqueued at 0 and served from 6 ms to 104 ms: above target for
	// 98 ms (first_above_time is set at 6 ms, a drop may come after 106 ms).
	q.Enqueue(fairRecs(4, 100, 1000), 0)
	for t := int64(6); t <= 104; t++ {
		q.Dequeue(t*ms, Budget{Packets: 1}, nil)
	}
	// Packets enqueued at 104 ms and served at once: below target, which
	// resets first_above_time; then above again from 110 ms to 200 ms.
	q.Enqueue(fairRecs(4, 100, 1000), 104*ms)
	q.Dequeue(105*ms, Budget{Packets: 1}, nil)
	for t := int64(110); t <= 200; t++ {
		q.Dequeue(t*ms, Budget{Packets: 1}, nil)
	}
	if s := q.Stats(); s.Drops[runstats.DropCodel] != 0 {
		t.Errorf("CoDel dropped %d packets: %+v", s.Drops[runstats.DropCodel], s)
	}
	checkConsumerAccounting(t, q, 200)
}

// TestFattestFlowDrop checks fq_codel's behaviour over a limit: drop from the
// head of the flow with the most bytes until half of them are gone, at most
// drop_batch_size packets, and tell that flow's CoDel.
func TestFattestFlowDrop(t *testing.T) {
	type flowLoad struct{ flow, packets, size int }
	tests := []struct {
		name     string
		cfg      ConsumerConfig
		load     []flowLoad // enqueued in order
		fat      int        // the flow dropped from
		drops    uint64
		reason   runstats.DropReason
		backlogs map[int]int // packets left per flow
	}{
		{
			// 101 packets over a limit of 100: A holds 80000 bytes, so 40 of
			// its packets go (40000 >= 80000/2).
			name: "half the backlog",
			cfg:  ConsumerConfig{Limit: 100},
			load: []flowLoad{{1, 80, 1000}, {2, 21, 100}},
			fat:  1, drops: 40, reason: runstats.DropOverlimit,
			backlogs: map[int]int{1: 40, 2: 21},
		},
		{
			// Half of 200 small packets would be 100: the batch stops at 64.
			name: "drop batch",
			cfg:  ConsumerConfig{Limit: 200},
			load: []flowLoad{{1, 150, 100}, {2, 51, 60}},
			fat:  1, drops: 64, reason: runstats.DropOverlimit,
			backlogs: map[int]int{1: 86, 2: 51},
		},
		{
			// Equal backlogs: the lowest flow index loses.
			name: "tie",
			cfg:  ConsumerConfig{Limit: 20, DropBatch: 3},
			load: []flowLoad{{7, 10, 500}, {5, 10, 500}, {9, 1, 100}},
			fat:  5, drops: 3, reason: runstats.DropOverlimit,
			backlogs: map[int]int{5: 7, 7: 10, 9: 1},
		},
		{
			// Truesize is length + 576: the 64th 1000-byte packet takes
			// memory to 64·1576 = 100864 > 100000; half of 64000 bytes is
			// 32 packets.
			name: "memory limit",
			cfg:  ConsumerConfig{MemoryLimit: 100000},
			load: []flowLoad{{1, 64, 1000}},
			fat:  1, drops: 32, reason: runstats.DropOvermemory,
			backlogs: map[int]int{1: 32},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := newFQCodelFrom(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			offered := 0
			for _, l := range tt.load {
				q.Enqueue(fairRecs(l.flow, l.packets, uint32(l.size)), 0)
				offered += l.packets
			}
			s := q.Stats()
			var drops uint64
			for _, n := range s.Drops {
				drops += n
			}
			if drops != tt.drops || s.Drops[tt.reason] != tt.drops {
				t.Errorf("drops %v, want %d %s", s.Drops, tt.drops, tt.reason)
			}
			if got := q.flows[tt.fat].cvars.count; got != uint32(tt.drops) {
				t.Errorf("CoDel count of flow %d is %d, want %d", tt.fat, got, tt.drops)
			}
			// The oldest packets went: what is left is served as queued.
			left := servedBy(q.Dequeue(0, Budget{}, nil))
			for f, n := range tt.backlogs {
				if left[f] != n {
					t.Errorf("flow %d: %d packets left, want %d (all left: %v)", f, left[f], n, left)
				}
			}
			checkConsumerAccounting(t, q, uint64(offered))
			if q.backlog != 0 || q.memory != 0 || q.qlen != 0 {
				t.Errorf("empty queue holds %d bytes, %d memory, %d packets", q.backlog, q.memory, q.qlen)
			}
		})
	}
}

// TestConsumerAllocs checks that, once warm, a worker-like round of
// Enqueue and Dequeue allocates nothing.
func TestConsumerAllocs(t *testing.T) {
	for name, c := range fairConsumers(t, ConsumerConfig{}) {
		t.Run(name, func(t *testing.T) {
			recs := make([]Record, 64)
			out := make([]Record, 0, 64)
			now := int64(0)
			round := func() {
				for i := range recs {
					recs[i] = fairRec(int(now+int64(i)*7)%1000, 64+uint32(i)*20)
				}
				now += 10_000
				c.Enqueue(recs, now)
				out = c.Dequeue(now, Budget{Packets: 64}, out[:0])
			}
			for range 1000 {
				round()
			}
			if allocs := testing.AllocsPerRun(1000, round); allocs != 0 {
				t.Errorf("a round of 64 packets allocates %v times", allocs)
			}
		})
	}
}

// TestConsumerConfig checks the factories and the limits the kernel would
// refuse.
func TestConsumerConfig(t *testing.T) {
	tests := []struct {
		name     string
		consumer string
		cfg      ConsumerConfig
		ok       bool
	}{
		{name: "fq_codel defaults", consumer: "fq_codel", ok: true},
		{name: "fq defaults", consumer: "fq", ok: true},
		{name: "fifo limit", consumer: "fifo", cfg: ConsumerConfig{Limit: 5}, ok: true},
		{name: "fq_codel 65536 flows", consumer: "fq_codel", cfg: ConsumerConfig{Flows: 65536}, ok: true},
		{name: "fq_codel too many flows", consumer: "fq_codel", cfg: ConsumerConfig{Flows: 65537}},
		{name: "fq_codel 1000 flows", consumer: "fq_codel", cfg: ConsumerConfig{Flows: 1000}, ok: true},
		{name: "fq flows not a power of two", consumer: "fq", cfg: ConsumerConfig{Flows: 1000}},
		{name: "negative limit", consumer: "fq", cfg: ConsumerConfig{Limit: -1}},
		{name: "quantum too large", consumer: "fq_codel", cfg: ConsumerConfig{Quantum: 1<<20 + 1}},
		{name: "MTU too small", consumer: "fq", cfg: ConsumerConfig{MTU: 40}},
		{name: "unknown consumer", consumer: "red"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mk, err := tt.cfg.New(tt.consumer)
			if (err == nil) != tt.ok {
				t.Fatalf("New(%q): error %v, want ok %v", tt.consumer, err, tt.ok)
			}
			if err == nil && mk() == nil {
				t.Errorf("New made no consumer")
			}
		})
	}
	// Defaults, and fq_codel's floor on the quantum.
	p, _ := ConsumerConfig{}.fqCodel()
	if p.quantum != 1514 || p.limit != 10240 || p.memoryLimit != 32<<20 || p.codel.target != 4882 || p.codel.interval != 97656 || p.dropBatch != 64 {
		t.Errorf("fq_codel defaults %+v", p)
	}
	if p, _ := (ConsumerConfig{Quantum: 100}).fqCodel(); p.quantum != 256 {
		t.Errorf("fq_codel quantum 100 became %d, want 256", p.quantum)
	}
	fp, _ := ConsumerConfig{}.fq()
	if fp.quantum != 3028 || fp.initialQuantum != 15140 || fp.limit != 10000 || fp.flowLimit != 100 || fp.orphanMask != 1023 {
		t.Errorf("fq defaults %+v", fp)
	}
	for _, name := range ConsumerNames {
		if mk, err := (ConsumerConfig{}).New(name); err != nil || mk() == nil {
			t.Errorf("%s: New: %v", name, err)
		}
	}
}

// BenchmarkFQCodelWorker is a worker's loop around fq_codel: batches of 64
// records from 1,000 flows enqueued, then as many served. It reports the
// consumer's cost per packet, both calls together.
func BenchmarkFQCodelWorker(b *testing.B) {
	for _, name := range []string{"fq_codel", "fq"} {
		b.Run(name, func(b *testing.B) { benchmarkWorker(b, name) })
	}
}

func benchmarkWorker(b *testing.B, name string) {
	mk, err := ConsumerConfig{}.New(name)
	if err != nil {
		b.Fatal(err)
	}
	c := mk()
	const batch = 64
	recs := benchRecords(64 * batch)
	out := make([]Record, 0, batch)
	// Warm up to a standing queue of a few hundred packets.
	c.Enqueue(recs[:512], 0)
	b.ReportAllocs()
	b.ResetTimer()
	now := int64(0)
	for i := 0; i < b.N; i++ {
		chunk := recs[(i%64)*batch : (i%64+1)*batch]
		now += 5_000
		c.Enqueue(chunk, now)
		out = c.Dequeue(now, Budget{Packets: batch}, out[:0])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/packet")
}

// benchRecords is a fixed pseudo-random sequence of n packets over 1,000
// flows, 64 to 1463 bytes long.
func benchRecords(n int) []Record {
	recs := make([]Record, n)
	x := uint32(1)
	for i := range recs {
		x = x*1664525 + 1013904223
		flow := int(x>>8) % 1000
		recs[i] = fairRec(flow%1024, 64+uint32(x>>20)%1400)
		recs[i].Hash = fmix32(uint32(flow)) // spread over the buckets like a real hash
	}
	return recs
}

// fmix32 is MurmurHash3's finaliser: a stand-in for a flow hash.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
