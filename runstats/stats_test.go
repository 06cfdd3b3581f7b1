package runstats

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
)

// filledRun is a RunStats with every field set to a value other than its
// zero value, so that a field the JSON loses or mangles shows in a round
// trip. static is its --compare static run, filled the same way but for its
// own comparison.
func filledRun(static *RunStats) *RunStats {
	var shapes dissect.Counters
	for i := range shapes.Shape {
		shapes.Shape[i] = dissect.ShapeCounters{Fast: uint64(10 + i), Declined: uint64(20 + i), Slow: uint64(30 + i)}
	}
	shapes.Other, shapes.Flips = 7, 3
	shapes.Descended = dissect.TunnelCounts{dissect.TunnelGTPU: 5, dissect.TunnelVXLAN: 2}
	flows := FlowReport{
		Active: 40, Buckets: 30, Collisions: 2, Jain: 0.875, Shares: []float64{0.5, 0.25},
		Top: []TopFlow{{
			Hash: 0xdeadbeef, Src: "198.18.0.1", Dst: "198.18.0.2", SPort: 1234, DPort: 80, Proto: 6,
			Packets: 100, Bytes: 6400, ErrorBytes: 64, ErrorPackets: 1,
		}},
		Slots: 1024, Served: 29,
	}
	sample := DeviceHashFrame{DeviceHash: 0x1234, DeviceType: "L4_IPV4", Hash: 0x5678, Keys: "00ff", VLANTag: "0x8100:0x0064"}
	var compare *Comparison
	if static != nil {
		compare = &Comparison{Static: static}
	}
	return &RunStats{
		SchemaVersion: SchemaVersion,
		Started:       time.Date(2026, 12, 1, 23, 0, 0, 123456789, time.UTC),
		Host:          Host{Kernel: "6.18.0", CPUModel: "AMD EPYC", CPUs: 2, Go: "go1.26"},
		DurationNs:    5e9,
		Config: RunConfig{
			Source: "synthetic:datacenter", Hash: "toeplitz", Symmetric: "xor", Steer: "reta", Consumer: "fq_codel",
			Gates: "all", Descent: "gtpu,vxlan", CPUs: []int{2, 3}, RingSize: 1024, FlowLimit: 8192, ServiceRate: "1Mpps", RxMode: "poll",
			Flows: 1024, Workers: 2, HashKey: "00112233445566778899aabbccddeeff", Clock: "virtual", Replay: "max",
			WindowNs: 1e8, CPUPlan: "workers on 2-3", QueueSpread: "rss", XDPProgram: "metadata",
		},
		Queues: []QueueReport{{
			Queue: 1,
			Stats: QueueStats{
				Frames: 1000, Bytes: 64000, RxDropped: 1, RxInvalidDescs: 2, RxRingFull: 3, FillRingEmpty: 4,
				TxInvalidDescs: 5, TxRingEmpty: 6, ReplayRingFull: 8, Unreceived: 7, RxLeftOnRing: 9,
			},
			Steered: []uint64{600, 400},
			Drops:   map[DropReason]uint64{DropRingFull: 5, DropFlowLimit: 6},
		}},
		Workers: []WorkerReport{{
			Worker: 1, CPU: 3, Packets: 600, Bytes: 38400,
			Drops: map[DropReason]uint64{DropRingFull: 5, DropFlowLimit: 6},
			Consumer: ConsumerReport{
				ConsumerStats: ConsumerStats{
					Enqueued: 590, Dequeued: 580, CEMarks: 9, Backlog: 3,
					Drops: map[DropReason]uint64{DropCodel: 4, DropOverlimit: 3},
				},
				Flows: flows, SojournNs: map[string]int64{"p50": 1000, "max": 9000}, MaxBacklog: 77,
			},
		}},
		Shapes: shapes,
		Windows: []WindowReport{{
			StartNs: 1e8, QueuePackets: []uint64{10}, QueueBytes: []uint64{640}, WorkerPackets: []uint64{6, 4},
			WorkerBytes: []uint64{384, 256}, WorkerBacklog: []int{1, 2}, WorkerDrops: []uint64{3, 4},
			QueueKernelDrops: []uint64{5},
		}},
		Steering: &SteeringReport{
			RETASize: 4, Initial: []uint16{0, 1, 0, 1}, Final: []uint16{1, 1, 0, 0}, BucketWindowNs: 2e8,
			BucketPackets: [][]uint64{{1, 2, 3, 4}}, BucketBytes: [][]uint64{{64, 128, 192, 256}},
			Balance: Balance{MaxMean: 1.25, Bound: 1.0625, Table: []uint16{0, 1, 1, 0}, BalancedMaxMean: 1.125, BalancedMoves: 2},
			Reorder: ReorderReport{Served: 500, Dropped: 10, Reordered: 12, Untracked: 1, Merged: 2, Exact: true},
			Rebalance: &RebalanceReport{
				IntervalNs: 1e8, Threshold: 1.05, Dwell: 1, Moves: 3, Tables: 2, FlowsMoved: 4,
				Intervals: []IntervalReport{{StartNs: 1e8, Packets: 100, Before: 1.5, After: 1.25, Bound: 1.125, Moves: 2, MovedPackets: 30, Pinned: 1}},
				Hold:      &HoldReport{Buckets: 3, Held: 40, MaxHeld: 20, Overflow: 1, AtEnd: 2, WaitNs: 5000, MaxWaitNs: 900},
			},
			Compare: compare,
		},
		Accounting: Accounting{
			Received: 1000, Processed: 978, Unserved: 2, Dropped: map[DropReason]uint64{DropRingFull: 11, DropCodel: 9},
			KernelDrops: map[string]uint64{"rx_ring_full": 3}, ReplayDrops: map[string]uint64{"ring_full": 8}, Balanced: true,
		},
		HashSources: HashSources{None: 1, Kernel: 2, Toeplitz: 3, Device: 4},
		DeviceHash: &DeviceHashCheck{
			Method: "equality", Frames: 100, WithHash: 90, Checked: 80, Conflicts: 1, Collisions: 4,
			Samples:      []DeviceHashConflict{{Queue: 1, Frame: "0aff", DeviceHashFrame: sample, Other: &sample}},
			Classes:      []DeviceHashClass{{Class: "addresses-only", Frames: 1, Explain: "the device hashed addresses only"}},
			FieldsDiffer: 2, NotHashedByDevice: 3,
		},
		DeviceQueue: &DeviceQueueCheck{
			TableLen: 128, Frames: 100, Checked: 90, Mismatches: 1,
			Samples: []DeviceQueueMismatch{{Queue: 2, Want: 1, DeviceHash: 0x1234, DeviceType: "L4_IPV4"}},
		},
		Search: &SearchReport{
			SchemaVersion: SearchSchemaVersion, Lab: "veth", Profile: "datacenter", Floor: 1000, Max: 9e5, Width: 0.02,
			TrialNs: 1e9, BudgetNs: 6e10, SpentNs: 5e10, Interrupted: true, Error: "interrupted",
			Goals: []SearchGoal{{Name: "PDR(0.5%)", LossRatio: 0.005, Status: "found", Lower: 48000, LowerTrial: 1, Upper: 49000, UpperTrial: 2}},
			Trials: []SearchTrial{{Rate: 48000, Max: true, DurationNs: 1e9, ElapsedNs: 1e9, Sent: 48000, Bytes: 48000 * 400, Achieved: 48000,
				Sustained: true, Lost: 10, LossRatio: 10.0 / 48000, Pass: []bool{true}, Drops: map[string]uint64{"ring/full": 10},
				CPU:         SearchCPU{GeneratorNs: 1, PipelineNs: 2, SoftirqNs: 3, Pipeline: "process", Valid: true},
				Interrupted: true}},
			StatsTrial: 1,
		},
	}
}

// zeroFields lists the fields of v, by path, that hold their zero value or
// an empty slice or map, looking into structs, pointers and the structs in
// slices, arrays and maps (a zero number in a table is a value like any
// other); paths in skip are not looked into.
func zeroFields(v reflect.Value, path string, skip map[string]bool) []string {
	if skip[path] {
		return nil
	}
	if v.IsZero() || (v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0 {
		return []string{path}
	}
	var out []string
	switch v.Kind() {
	case reflect.Pointer:
		out = zeroFields(v.Elem(), path, skip)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return nil
		}
		for i := range v.NumField() {
			out = append(out, zeroFields(v.Field(i), path+"."+v.Type().Field(i).Name, skip)...)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if e := v.Index(i); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer {
				out = append(out, zeroFields(e, path+"["+strconv.Itoa(i)+"]", skip)...)
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if e := it.Value(); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer {
				out = append(out, zeroFields(e, path+"["+it.Key().String()+"]", skip)...)
			}
		}
	}
	return out
}

// TestRunStatsRoundTrip writes a RunStats with every field set as JSON and
// reads it back: what `xdphash report` reads is what `xdphash run --out`
// wrote, to the last field.
func TestRunStatsRoundTrip(t *testing.T) {
	want := filledRun(filledRun(nil))
	// The static run is filled too, but for its own comparison.
	skip := map[string]bool{"RunStats.Steering.Compare.Static.Steering.Compare": true}
	if zero := zeroFields(reflect.ValueOf(want), "RunStats", skip); len(zero) > 0 {
		t.Fatalf("the fixture leaves fields at their zero value, which a round trip cannot check: %s", strings.Join(zero, ", "))
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got RunStats
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("read back: %v\n%s", err, b)
	}
	if !reflect.DeepEqual(&got, want) {
		again, _ := json.Marshal(&got)
		t.Errorf("the round trip changed the statistics:\nwrote %s\nread  %s", b, again)
	}
}

// TestRunStatsJSONNames: every field of the schema has a snake_case JSON
// name of its own (docs/report-schema.md names them), and none is left to
// Go's field name.
func TestRunStatsJSONNames(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string) []string
	walk = func(typ reflect.Type, path string) []string {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ == reflect.TypeFor[time.Time]() || typ.PkgPath() != reflect.TypeFor[RunStats]().PkgPath() {
			return nil
		}
		seen[typ] = true
		var bad []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				bad = append(bad, walk(f.Type, path+"."+f.Name)...)
				continue
			}
			if !snake.MatchString(name) {
				bad = append(bad, path+"."+f.Name+" ("+strconv.Quote(name)+")")
			}
			bad = append(bad, walk(f.Type, path+"."+f.Name)...)
		}
		return bad
	}
	if bad := walk(reflect.TypeFor[RunStats](), "RunStats"); len(bad) > 0 {
		t.Errorf("fields without a snake_case JSON name: %s", strings.Join(bad, ", "))
	}
}

// run is a one-queue, two-worker run for the accounting's cases.
type run struct {
	received   uint64
	kernel     QueueStats // the queue's kernel drops
	ringFull   [2]uint64  // per worker: before the consumer
	flowLimit  [2]uint64
	packets    [2]uint64 // records each worker gave its consumer
	dequeued   [2]uint64
	backlog    [2]int
	codel      [2]uint64
	overlimits [2]uint64
}

func (r run) stats() *RunStats {
	k := r.kernel
	k.Frames = r.received
	st := &RunStats{Queues: []QueueReport{{Stats: k}}}
	for w := range 2 {
		st.Workers = append(st.Workers, WorkerReport{
			Worker:  w,
			Packets: r.packets[w],
			Drops:   map[DropReason]uint64{DropRingFull: r.ringFull[w], DropFlowLimit: r.flowLimit[w]},
			Consumer: ConsumerReport{ConsumerStats: ConsumerStats{
				Dequeued: r.dequeued[w], Backlog: r.backlog[w],
				Drops: map[DropReason]uint64{DropCodel: r.codel[w], DropOverlimit: r.overlimits[w]},
			}},
		})
	}
	return st
}

// TestAccount: the accounting balances exactly when every frame the
// receive loops took was served, is still held, or was dropped once, and
// each consumer accounts for every record its worker gave it; the kernel's
// drops are reported apart and never balance the rest.
func TestAccount(t *testing.T) {
	// 100 frames: worker 0 took 60 (2 ring drops, 1 flow limit before it),
	// served 50, holds 5, CoDel dropped 3, overlimit 2; worker 1 took 37
	// (nothing dropped before it), served 30, holds 7.
	balanced := run{
		received: 100, kernel: QueueStats{RxRingFull: 4, RxDropped: 5, RxInvalidDescs: 6},
		ringFull: [2]uint64{2, 0}, flowLimit: [2]uint64{1, 0},
		packets: [2]uint64{60, 37}, dequeued: [2]uint64{50, 30}, backlog: [2]int{5, 7},
		codel: [2]uint64{3, 0}, overlimits: [2]uint64{2, 0},
	}
	tests := []struct {
		name     string
		run      func(r *run)
		balanced bool
	}{
		{"every frame served, held or dropped once", func(*run) {}, true},
		{"nothing received, nothing anywhere", func(r *run) { *r = run{} }, true},
		{"one more frame received and dropped at its ring", func(r *run) { r.received++; r.ringFull[1]++ }, true},
		{"a record still held instead of served", func(r *run) { r.dequeued[1]--; r.backlog[1]++ }, true},
		{"a frame lost between the loop and the worker", func(r *run) { r.received++ }, false},
		{"a consumer drop counted twice", func(r *run) { r.codel[0]++ }, false},
		{"the consumers' counts swap a record while the totals add up", func(r *run) { r.dequeued[0]--; r.dequeued[1]++ }, false},
		{"kernel drops do not make up for a lost frame", func(r *run) { r.received++; r.kernel.RxRingFull-- }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := balanced
			tt.run(&r)
			st := r.stats()
			st.Account()
			a := st.Accounting
			if a.Balanced != tt.balanced {
				t.Errorf("balanced %v, want %v: %+v", a.Balanced, tt.balanced, a)
			}
			if a.Received != r.received {
				t.Errorf("received %d, want the queue's frames, %d", a.Received, r.received)
			}
			// Processed are the frames served; what consumers still hold is
			// unserved, counted apart.
			wantProcessed := r.dequeued[0] + r.dequeued[1]
			if wantUnserved := uint64(r.backlog[0] + r.backlog[1]); a.Unserved != wantUnserved {
				t.Errorf("unserved %d, want the consumers' backlog, %d", a.Unserved, wantUnserved)
			}
			wantDrops := map[DropReason]uint64{
				DropRingFull: r.ringFull[0] + r.ringFull[1], DropFlowLimit: r.flowLimit[0] + r.flowLimit[1],
				DropCodel: r.codel[0] + r.codel[1], DropOverlimit: r.overlimits[0] + r.overlimits[1],
			}
			var total uint64
			for _, n := range wantDrops {
				total += n
			}
			if a.Processed != wantProcessed || !reflect.DeepEqual(a.Dropped, wantDrops) || a.Total() != total {
				t.Errorf("processed %d, dropped %v (total %d); want %d, %v (%d)", a.Processed, a.Dropped, a.Total(), wantProcessed, wantDrops, total)
			}
			wantKernel := map[string]uint64{"rx_ring_full": r.kernel.RxRingFull, "rx_dropped": r.kernel.RxDropped, "rx_invalid_descs": r.kernel.RxInvalidDescs,
				"rx_left_on_ring": r.kernel.RxLeftOnRing}
			if !reflect.DeepEqual(a.KernelDrops, wantKernel) || st.Queues[0].Stats.KernelDrops() != r.kernel.RxRingFull+r.kernel.RxDropped+r.kernel.RxInvalidDescs+r.kernel.RxLeftOnRing {
				t.Errorf("kernel drops %v (queue: %d), want %v", a.KernelDrops, st.Queues[0].Stats.KernelDrops(), wantKernel)
			}
		})
	}
}

// TestAdd: the counters that add up over queues, receive loops and
// workers lose nothing, and the device-hash samples stay bounded.
func TestAdd(t *testing.T) {
	q := QueueStats{Frames: 1, Bytes: 2, RxDropped: 3, RxInvalidDescs: 4, RxRingFull: 5, FillRingEmpty: 6, TxInvalidDescs: 7, TxRingEmpty: 8, ReplayRingFull: 9, Unreceived: 10, RxLeftOnRing: 11}
	sum := q
	sum.Add(q)
	if want := (QueueStats{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}); sum != want {
		t.Errorf("QueueStats.Add: %+v, want %+v", sum, want)
	}
	h := HashSources{None: 1, Kernel: 2, Toeplitz: 3, Device: 4}
	hs := h
	hs.Add(h)
	if want := (HashSources{2, 4, 6, 8}); hs != want {
		t.Errorf("HashSources.Add: %+v, want %+v", hs, want)
	}
	var c DeviceHashCheck
	one := &DeviceHashCheck{Method: "partition", Frames: 10, WithHash: 9, Checked: 8, Conflicts: 5, Collisions: 2}
	for i := range 5 {
		one.Samples = append(one.Samples, DeviceHashConflict{Queue: i})
	}
	for range 3 {
		c.Add(one)
	}
	if c.Method != "partition" || c.Frames != 30 || c.WithHash != 27 || c.Checked != 24 || c.Conflicts != 15 || c.Collisions != 6 {
		t.Errorf("DeviceHashCheck.Add: %+v, want three times %+v", c, *one)
	}
	if len(c.Samples) != MaxDeviceHashSamples || c.Samples[5].Queue != 0 {
		t.Errorf("%d samples, the sixth from queue %d; want the first %d in order", len(c.Samples), c.Samples[5].Queue, MaxDeviceHashSamples)
	}
}

// dropReasonConstants reads the package's source for every constant of
// type DropReason, so that a reason added later is checked too.
func dropReasonConstants(t *testing.T) map[string]DropReason {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]DropReason{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "DropReason" {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: DropReason %s is not a string literal", fset.Position(n.Pos()), n.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[n.Name] = DropReason(v)
				}
			}
		}
	}
	return out
}

// TestDropReasonSpelling: every DropReason constant is spelled
// "stage/reason" in snake case, no two alike; it splits into its stage and
// reason and joins back; and a map of drops by reason (as a worker's, a
// consumer's and the accounting's are) has the spelled names as its JSON
// keys and reads back to the same constants.
func TestDropReasonSpelling(t *testing.T) {
	consts := dropReasonConstants(t)
	if len(consts) < 6 {
		t.Fatalf("found %d DropReason constants in the source, want at least the 6 of drops.go: %v", len(consts), consts)
	}
	spelled := regexp.MustCompile(`^[a-z]+(_[a-z]+)*/[a-z]+(_[a-z]+)*$`)
	drops := map[DropReason]uint64{}
	byValue := map[DropReason]string{}
	for name, r := range consts {
		if !spelled.MatchString(string(r)) {
			t.Errorf("%s = %q: want stage/reason, in snake case", name, r)
		}
		if other, dup := byValue[r]; dup {
			t.Errorf("%s and %s are both %q", name, other, r)
		}
		byValue[r] = name
		stage, reason := r.Split()
		if DropReason(stage+"/"+reason) != r || stage == "other" {
			t.Errorf("%s = %q splits into %q, %q", name, r, stage, reason)
		}
		drops[r] = uint64(len(drops) + 1)
	}
	for _, r := range WorkerDropReasons {
		if _, ok := byValue[r]; !ok {
			t.Errorf("WorkerDropReasons holds %q, which is no constant", r)
		}
	}
	b, err := json.Marshal(ConsumerStats{Drops: drops})
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Drops map[string]uint64 `json:"drops"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var keys, want []string
	for k := range raw.Drops {
		keys = append(keys, k)
	}
	for r := range drops {
		want = append(want, string(r))
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("JSON keys %v, want the spelled reasons %v", keys, want)
	}
	var back ConsumerStats
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Drops, drops) {
		t.Errorf("read back %v (%v), want %v", back.Drops, err, drops)
	}
	if stage, reason := DropReason("full").Split(); stage != "other" || reason != "full" {
		t.Errorf(`DropReason("full").Split() = %q, %q; want "other", "full"`, stage, reason)
	}
}
