package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/fairness"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// fmix32 is MurmurHash3's finaliser, the flows' stand-in hash.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// simulatedRun is a run of fq_codel consumers without the engine, in virtual
// time: flows hashed, put on receive queues by the hash's low bits (RSS) and
// steered to workers by its high bits (RPS); flow 0 is an elephant sending
// ten 1500-byte packets per millisecond, the others a packet of 100 to 1387
// bytes every 1 to 8 ms; each worker serves 45 packets per millisecond, which
// overloads the elephant's worker; windows of 100 ms. It returns the run
// statistics as `xdphash run --out` writes them.
func simulatedRun(tb testing.TB, flows, workers, nqueues int, duration time.Duration) *runstats.RunStats {
	tb.Helper()
	const window = 100 * time.Millisecond
	mk, err := queues.ConsumerConfig{}.New("fq_codel")
	if err != nil {
		tb.Fatal(err)
	}
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion,
		Started:       time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		DurationNs:    int64(duration),
		Config: runstats.RunConfig{
			Source: "synthetic:test", Hash: "kernel", Steer: "rps", Consumer: "fq_codel",
			Workers: workers, WindowNs: int64(window), Flows: queues.DefaultFlows,
		},
		Accounting: runstats.Accounting{Dropped: map[runstats.DropReason]uint64{}, KernelDrops: map[string]uint64{}},
	}
	cons := make([]queues.Consumer, workers)
	for w := range cons {
		cons[w] = mk()
	}
	st.Queues = make([]runstats.QueueReport, nqueues)
	for q := range st.Queues {
		st.Queues[q] = runstats.QueueReport{Queue: q, Steered: make([]uint64, workers)}
	}
	st.Workers = make([]runstats.WorkerReport, workers)
	newWindow := func(start int64) runstats.WindowReport {
		return runstats.WindowReport{
			StartNs:      start,
			QueuePackets: make([]uint64, nqueues), QueueBytes: make([]uint64, nqueues),
			WorkerPackets: make([]uint64, workers), WorkerBytes: make([]uint64, workers),
			WorkerBacklog: make([]int, workers), WorkerDrops: make([]uint64, workers),
			QueueKernelDrops: make([]uint64, nqueues),
		}
	}
	consumerDrops := func(w int) uint64 {
		var n uint64
		for _, d := range cons[w].Stats().Drops {
			n += d
		}
		return n
	}
	win := newWindow(0)
	lastDrops := make([]uint64, workers)
	batch := make([][]queues.Record, workers)
	out := make([]queues.Record, 0, 64)
	for ms := int64(0); ms < duration.Milliseconds(); ms++ {
		now := ms * int64(time.Millisecond)
		if now >= win.StartNs+int64(window) {
			for w := range workers {
				win.WorkerBacklog[w] = cons[w].Backlog()
				d := consumerDrops(w)
				win.WorkerDrops[w], lastDrops[w] = d-lastDrops[w], d
			}
			st.Windows = append(st.Windows, win)
			win = newWindow(now)
		}
		for f := range flows {
			n := 0
			switch {
			case f == 0:
				n = 10
			case ms%int64(f%8+1) == 0:
				n = 1
			}
			for range n {
				size := uint32(100 + 13*(f%100))
				if f == 0 {
					size = 1500
				}
				r := queues.Record{Hash: fmix32(uint32(f)), Len: size, Arrival: now,
					SPort: uint16(20000 + f), DPort: 443, IPProto: 17, AddrType: uint8(dissect.AddrIPv4)}
				copy(r.Src[:], []byte{198, 18, byte(f >> 8), byte(f)})
				copy(r.Dst[:], []byte{198, 19, 0, 1})
				q := int(r.Hash % uint32(nqueues))
				w := int(hash.ReciprocalScale(r.Hash, uint32(workers)))
				r.Queue = uint16(q)
				st.Queues[q].Stats.Frames++
				st.Queues[q].Stats.Bytes += uint64(r.Len)
				st.Queues[q].Steered[w]++
				win.QueuePackets[q]++
				win.QueueBytes[q] += uint64(r.Len)
				st.Workers[w].Packets++
				st.Workers[w].Bytes += uint64(r.Len)
				batch[w] = append(batch[w], r)
			}
		}
		for w := range workers {
			cons[w].Enqueue(batch[w], now)
			batch[w] = batch[w][:0]
			out = cons[w].Dequeue(now, queues.Budget{Packets: 45}, out[:0])
			for _, r := range out {
				win.WorkerPackets[w]++
				win.WorkerBytes[w] += uint64(r.Len)
			}
		}
	}
	for w := range workers {
		win.WorkerBacklog[w] = cons[w].Backlog()
		win.WorkerDrops[w] = consumerDrops(w) - lastDrops[w]
	}
	st.Windows = append(st.Windows, win)
	for w := range workers {
		st.Workers[w].Worker, st.Workers[w].CPU = w, -1
		st.Workers[w].Drops = map[runstats.DropReason]uint64{runstats.DropRingFull: 0, runstats.DropFlowLimit: 0}
		st.Workers[w].Consumer = cons[w].Report()
	}
	st.Account()
	if !st.Accounting.Balanced {
		tb.Fatalf("the simulated run does not balance: %+v", st.Accounting)
	}
	return st
}

// TestComputeByHand checks the measures of a run small enough to work out.
func TestComputeByHand(t *testing.T) {
	st := &runstats.RunStats{
		SchemaVersion: runstats.SchemaVersion,
		Queues: []runstats.QueueReport{
			{Queue: 0, Stats: statsOf(3, 300)},
			{Queue: 1, Stats: statsOf(1, 100)},
		},
		Workers: []runstats.WorkerReport{
			{Worker: 0, Packets: 2, Bytes: 200, Consumer: runstats.ConsumerReport{Flows: runstats.FlowReport{Active: 1}}},
			{Worker: 1, Packets: 2, Bytes: 200, Consumer: runstats.ConsumerReport{Flows: runstats.FlowReport{Active: 1}}},
		},
		Accounting: runstats.Accounting{KernelDrops: map[string]uint64{"rx_ring_full": 5}},
	}
	m := Compute(st)
	// Queues: bytes 300 and 100: Jain 400²/(2·(300²+100²)) = 0.8, max/mean
	// 300/200. Two flows into two bins: E[max/mean] = 1.5, E[Jain] = 2/3.
	if m.Flows != 2 || !near(m.Queues.Jain, 0.8) || !near(m.Queues.MaxMean, 1.5) ||
		!near(m.Queues.ExpectedMaxMean, 1.5) || !near(m.Queues.ExpectedJain, 2.0/3) {
		t.Errorf("queues %+v", m.Queues)
	}
	if !near(m.Workers.Jain, 1) || !near(m.Workers.MaxMean, 1) || !strings.HasPrefix(m.Workers.Verdict, "as expected") {
		t.Errorf("workers %+v", m.Workers)
	}
	if m.Drops["kernel/rx_ring_full"] != 5 {
		t.Errorf("drops %v", m.Drops)
	}
}

func statsOf(frames, bytes uint64) runstats.QueueStats {
	return runstats.QueueStats{Frames: frames, Bytes: bytes}
}

// TestVerdict checks whose fault the report says an imbalance is.
func TestVerdict(t *testing.T) {
	const flows = 1000
	exp := fairness.ExpectedMaxMean(flows, 4) // about 1.1
	tests := []struct {
		name             string
		bytes, flowCount []uint64
		want             string
	}{
		{name: "even", bytes: []uint64{100, 101, 99, 100}, flowCount: []uint64{250, 250, 250, 250}, want: "as expected"},
		{name: "uneven flows", bytes: []uint64{400, 100, 100, 100}, flowCount: []uint64{550, 150, 150, 150}, want: "the hash"},
		{name: "one elephant", bytes: []uint64{400, 100, 100, 100}, flowCount: []uint64{250, 251, 249, 250}, want: "the traffic"},
		{name: "one bin", bytes: []uint64{7}, flowCount: []uint64{1000}, want: "one bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spread(tt.bytes, tt.bytes, flows)
			f := spread(tt.flowCount, nil, flows)
			if got := verdict(&s, &f, "workers"); !strings.HasPrefix(got, tt.want) {
				t.Errorf("verdict %q, want %q… (expected max/mean %.3f)", got, tt.want, exp)
			}
		})
	}
}

// TestReportOfSimulatedRun renders a simulated run in every form.
func TestReportOfSimulatedRun(t *testing.T) {
	st := simulatedRun(t, 300, 2, 4, time.Second)
	m := Compute(st)
	if m.Flows != 300 {
		t.Errorf("%d flows, want 300", m.Flows)
	}
	if len(m.Consumers) != 2 || len(m.Timeline) != 10 {
		t.Fatalf("%d consumers, %d windows", len(m.Consumers), len(m.Timeline))
	}
	for _, c := range m.Consumers {
		if c.Slots != 1024 || c.Served == 0 || c.Jain <= 0 || c.Jain > 1 || len(c.Top) == 0 {
			t.Errorf("consumer %+v", c)
		}
	}
	// The elephant is the top flow of its worker.
	elephant := fmix32(0)
	w := hash.ReciprocalScale(elephant, 2)
	if top := m.Consumers[w].Top[0]; top.Hash != elephant || top.Src != "198.18.0.0" || top.DPort != 443 {
		t.Errorf("top flow of worker %d: %+v, want the elephant", w, top)
	}

	var text bytes.Buffer
	if err := WriteText(&text, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"receive queues", "workers", "flows inside each worker's consumer (fq_codel)", "top flows of worker", "198.18.0.0:20000", "consumer/codel"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, st); err != nil {
		t.Fatal(err)
	}
	var back Measures
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.SchemaVersion != SchemaVersion || back.Flows != m.Flows || len(back.Consumers) != 2 {
		t.Errorf("JSON measures read back as %+v", back)
	}

	var html bytes.Buffer
	if err := WriteHTML(&html, st); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html.String(), "<svg"); n != numCharts {
		t.Errorf("%d <svg> elements, want %d", n, numCharts)
	}
	if strings.Contains(html.String(), "<?xml") || strings.Contains(html.String(), "http://") && strings.Contains(html.String(), "src=") {
		t.Errorf("the page carries an XML prolog or loads something")
	}
}

// numCharts is the charts of a run with traffic and windows.
const numCharts = 9

func TestRead(t *testing.T) {
	st := simulatedRun(t, 10, 1, 1, 50*time.Millisecond)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(bytes.NewReader(b))
	if err != nil || got.Config.Consumer != "fq_codel" {
		t.Errorf("Read: %v, %+v", err, got)
	}
	st.SchemaVersion = 99
	b, _ = json.Marshal(st)
	if _, err := Read(bytes.NewReader(b)); !errors.Is(err, ErrSchema) {
		t.Errorf("Read of version 99: %v, want ErrSchema", err)
	}
	if _, err := Read(strings.NewReader("{")); err == nil {
		t.Errorf("Read of broken JSON: no error")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestReachableSlots checks which steering and consumer pairs share hash
// bits, and what the report then expects of collisions.
func TestReachableSlots(t *testing.T) {
	tests := []struct {
		steer, consumer string
		workers, slots  int
		want            int
	}{
		{"rps", "fq_codel", 2, 1024, 512}, // both take the high bits
		{"rps", "fq_codel", 3, 1024, 342},
		{"rps", "fq_codel", 1, 1024, 1024},
		{"rps", "fq", 2, 1024, 1024}, // high bits, low bits: independent
		{"reta", "fq", 4, 1024, 256}, // both take the low bits
		{"reta", "fq_codel", 4, 1024, 1024},
		{"rps", "fifo", 2, 0, 0},
	}
	for _, tt := range tests {
		if got := reachableSlots(tt.steer, tt.consumer, tt.workers, tt.slots); got != tt.want {
			t.Errorf("%s + %s, %d workers, %d slots: %d reachable, want %d", tt.steer, tt.consumer, tt.workers, tt.slots, got, tt.want)
		}
	}
	// In a simulated RPS + fq_codel run, every worker's flows use half the
	// slots, as the report expects.
	m := Compute(simulatedRun(t, 2000, 2, 1, 200*time.Millisecond))
	for _, c := range m.Consumers {
		if c.ReachableSlots != 512 || c.Buckets > 512 || math.Abs(float64(c.Collisions)-c.ExpectedCollisions) > 0.1*c.ExpectedCollisions {
			t.Errorf("worker %d: %d slots used of %d reachable, %d collisions, expected %.1f", c.Worker, c.Buckets, c.ReachableSlots, c.Collisions, c.ExpectedCollisions)
		}
	}
	if len(m.Notes) != 1 {
		t.Errorf("notes %q, want one on the shared hash bits", m.Notes)
	}
}

// TestWritePage checks what a page says beyond the statistics: the machine
// line, the command's facts and checks, the kernel's drops on the drops
// chart, why the depth chart is empty at "max", what ± bytes means, and a
// queue verdict that blames the senders, not a hash, when they chose.
func TestWritePage(t *testing.T) {
	st := simulatedRun(t, 300, 2, 4, time.Second)
	st.Host = runstats.Host{Kernel: "6.18.0-test", CPUModel: "Test CPU", CPUs: 2, Go: "go1.26"}
	st.Config.QueueSpread = "sender"
	st.Config.ServiceRate = "max"
	for k := range st.Windows {
		st.Windows[k].QueueKernelDrops = make([]uint64, len(st.Queues))
		st.Windows[k].QueueKernelDrops[0] = 7
		for w := range st.Windows[k].WorkerBacklog {
			st.Windows[k].WorkerBacklog[w] = 0
		}
	}
	var b strings.Builder
	err := WritePage(&b, st, Page{
		Title:  "xdphash soak",
		Facts:  []string{"Generator: profile datacenter"},
		Checks: []Check{{Verdict: "PASS", Name: "accounting", Detail: "ok"}, {Verdict: "SKIP", Name: "memory", Detail: "too few"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<title>xdphash soak</title>",
		"on Test CPU (2 CPUs), Linux 6.18.0-test, go1.26",
		"Generator: profile datacenter",
		`<td class="SKIP">SKIP</td><td class="l">memory</td>`,
		"Kernel drops per receive queue, before the receive loops",
		"Every consumer was empty at every window&#39;s end",
		"± bytes: how much the heavy-hitter sketch",
		"the senders chose the queues",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "non-uniform hash") {
		t.Error("the page blames the hash for the queues the senders chose")
	}
}

// TestMeasuresRecordDescent: the measures JSON names the run's descent
// setting (run.json's config.descent, "none" when off) and the frames
// descended into each tunnel, and reads back as written.
func TestMeasuresRecordDescent(t *testing.T) {
	for _, tc := range []struct {
		descent   string
		descended dissect.TunnelCounts
		want      []string
	}{
		{"", dissect.TunnelCounts{}, []string{`"descent": "none"`, `"descended": {}`}},
		{"gtpu,vxlan", dissect.TunnelCounts{dissect.TunnelGTPU: 5, dissect.TunnelVXLAN: 2}, []string{`"descent": "gtpu,vxlan"`, `"gtpu": 5`, `"vxlan": 2`}},
	} {
		st := simulatedRun(t, 300, 2, 4, time.Second)
		st.Config.Descent = tc.descent
		st.Shapes.Descended = tc.descended
		m := Compute(st)
		var b bytes.Buffer
		if err := m.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("descent %q: the measures JSON has no %s:\n%s", tc.descent, w, b.String()[:min(b.Len(), 600)])
			}
		}
		var back Measures
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		if err := m.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if named := strings.Contains(text.String(), ", descend "+tc.descent+","); named != (tc.descent != "") {
			t.Errorf("descent %q: the text report names it %v, want %v", tc.descent, named, tc.descent != "")
		}
		if back.Run.Descent != m.Run.Descent || back.Run.Descended != tc.descended {
			t.Errorf("descent %q: read back %q %v, want %q %v", tc.descent, back.Run.Descent, back.Run.Descended, m.Run.Descent, tc.descended)
		}
	}
}
