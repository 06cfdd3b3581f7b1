package bench

import (
	"runtime"
	"slices"
	"time"

	"github.com/xdphash/xdphash/dissect"
)

// Contender is one implementation measured on a frame.
type Contender string

// The contenders.
const (
	Slow     Contender = "slow"     // the generic dissector
	Fast     Contender = "fast"     // a Dissector with every gate open
	Gopacket Contender = "gopacket" // DecodingLayerParser with a 5-tuple
)

// Row is the result for one case: the median time per frame of each contender.
type Row struct {
	Case   string                `json:"case"`
	Path   string                `json:"path"` // what the Dissector with all gates open took
	Ns     map[Contender]float64 `json:"ns_per_frame"`
	Allocs map[Contender]float64 `json:"allocs_per_frame"`
}

// Change is (fast − slow) / slow: −0.5 is half the time.
func (r Row) Change() float64 { return (r.Ns[Fast] - r.Ns[Slow]) / r.Ns[Slow] }

// DeclineRow is the cost of one shape's open gate on a frame of its class that its
// fast path does not cover (dissect.NearMissFrame).
type DeclineRow struct {
	Shape    string  `json:"shape"`
	ClosedNs float64 `json:"gate_closed_ns"` // a Dissector with no gate open
	OpenNs   float64 `json:"gate_open_ns"`   // the same with only this shape's gate open
}

// Cost is the decline cost: OpenNs − ClosedNs.
func (d DeclineRow) Cost() float64 { return d.OpenNs - d.ClosedNs }

// Report is one run of the harness.
type Report struct {
	Rounds int `json:"rounds"`
	// Descent is the opt-in UDP tunnel descent the slow path and the
	// Dissectors ran under (dissect.Descent's String, "none" when off).
	Descent  string       `json:"descent"`
	Rows     []Row        `json:"rows"`
	Declines []DeclineRow `json:"declines"`
	// Whole names the shapes whose fast path covers their whole class, so
	// that no frame of it is declined: they have no decline row.
	Whole []string `json:"declines_none,omitempty"`
}

// Options tune a run.
type Options struct {
	Rounds  int           // interleaved rounds, at least 5; medians are reported
	PerTime time.Duration // target duration of one measurement
	// Descent is the opt-in UDP tunnel descent (the zero value: none) that
	// the slow path and every Dissector run under. With one that enters
	// VXLAN or GTP-U, their shapes' sample frames are cases too, and their
	// near misses decline rows.
	Descent dissect.Descent
}

// loop runs its contender n times over its frames. The loop is inside the
// function, so a measurement does not include an indirect call per frame.
type loop func(n int)

// timeLoop measures fn's time per frame: it grows the iteration count until one
// measurement takes at least d, as testing.B does, without its flags.
func timeLoop(d time.Duration, fn loop) float64 {
	n := 1000
	for {
		start := time.Now()
		fn(n)
		el := time.Since(start)
		if el >= d || n >= 1<<30 {
			return float64(el.Nanoseconds()) / float64(n)
		}
		grow := int(float64(n) * 1.2 * float64(d) / float64(max(el, time.Microsecond)))
		n = min(max(grow, n*2), 1<<30)
	}
}

// allocsPerRun is the number of heap allocations of one call of fn over
// runs calls, after one call that warms it up, rounded down as package
// testing's AllocsPerRun counts them: the xdphash binary does not link
// testing.
// The count is the process's: other goroutines must not allocate meanwhile.
func allocsPerRun(runs int, fn func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fn()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&after)
	return float64((after.Mallocs - before.Mallocs) / uint64(runs))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// cycle returns the i-th frame and the next index, going round frames.
func cycle(frames [][]byte, i int) ([]byte, int) {
	f := frames[i]
	if i++; i == len(frames) {
		i = 0
	}
	return f, i
}

// contenders returns each contender's loop over frames, taken in turn,
// the slow path and the Dissector under the descent policy desc.
func contenders(frames [][]byte, desc dissect.Descent) map[Contender]loop {
	var k dissect.FlowKeys
	var t FiveTuple
	fast := descending(dissect.AllGates, desc)
	gp := NewGopacketParser()
	slow := func(n int) {
		var f []byte
		for i, j := 0, 0; i < n; i++ {
			f, j = cycle(frames, j)
			dissect.DissectFrame(&k, f, dissect.DefaultFlags)
		}
	}
	if !desc.IsZero() {
		slow = func(n int) {
			var f []byte
			for i, j := 0, 0; i < n; i++ {
				f, j = cycle(frames, j)
				dissect.DissectFrameDescend(&k, f, dissect.DefaultFlags, desc)
			}
		}
	}
	return map[Contender]loop{
		Slow: slow,
		Fast: func(n int) {
			var f []byte
			for i, j := 0, 0; i < n; i++ {
				f, j = cycle(frames, j)
				fast.DissectFrame(&k, f)
			}
		},
		Gopacket: func(n int) {
			var f []byte
			for i, j := 0, 0; i < n; i++ {
				f, j = cycle(frames, j)
				gp.Parse(f, &t)
			}
		},
	}
}

// descending is a Dissector with gates g under the descent policy desc.
func descending(g dissect.Gates, desc dissect.Descent) *dissect.Dissector {
	d := dissect.NewDissector(dissect.DefaultFlags, g)
	d.SetDescent(desc)
	return d
}

// entered reports whether the policy desc enters tunnel shape s's tunnel:
// its frames are of its class then.
func entered(s dissect.Shape, desc dissect.Descent) bool {
	t, ok := s.Tunnel()
	return ok && desc.Tunnels().Has(t)
}

// dissectorLoop runs d over frames.
func dissectorLoop(d *dissect.Dissector, frames [][]byte) loop {
	var k dissect.FlowKeys
	return func(n int) {
		var f []byte
		for i, j := 0, 0; i < n; i++ {
			f, j = cycle(frames, j)
			d.DissectFrame(&k, f)
		}
	}
}

// measurement is one cell of the table: a loop and its times over rounds.
type measurement struct {
	fn    loop
	times []float64
}

// Dissect runs every case, the all-shapes mix and the decline costs, interleaved
// round by round (each round measures every cell once), and reports medians.
func Dissect(opt Options) Report {
	opt.Rounds = max(opt.Rounds, 5)
	if opt.PerTime <= 0 {
		opt.PerTime = 20 * time.Millisecond
	}
	var cells []*measurement
	add := func(fn loop) *measurement {
		m := &measurement{fn: fn}
		cells = append(cells, m)
		return m
	}

	type caseCells struct {
		name, path string
		by         map[Contender]*measurement
	}
	var cases []caseCells
	addCase := func(name, path string, frames [][]byte) {
		cc := caseCells{name: name, path: path, by: map[Contender]*measurement{}}
		for c, fn := range contenders(frames, opt.Descent) {
			cc.by[c] = add(fn)
		}
		cases = append(cases, cc)
	}
	cs := Cases()
	for s := range dissect.NumShapes {
		if entered(s, opt.Descent) {
			cs = append(cs, Case{Name: s.String(), Shape: s, Frame: dissect.SampleFrame(s)})
		}
	}
	for _, c := range cs {
		var k dissect.FlowKeys
		_, p := descending(dissect.AllGates, opt.Descent).DissectFrame(&k, c.Frame)
		addCase(c.Name, p.String(), [][]byte{c.Frame})
	}
	addCase("mix", "all", Mix())

	rep := Report{Descent: opt.Descent.String()}
	type declineCells struct {
		shape          dissect.Shape
		closed, opened *measurement
	}
	var declines []declineCells
	for s := range dissect.NumShapes {
		if _, tunnel := s.Tunnel(); tunnel && !entered(s, opt.Descent) {
			continue // declines only under a descent policy entering its tunnel
		}
		miss, ok := dissect.NearMissFrame(s)
		if !ok {
			rep.Whole = append(rep.Whole, s.String())
			continue
		}
		other := [][]byte{miss}
		closed := descending(dissect.NoGates, opt.Descent)
		opened := descending(dissect.NoGates.With(s), opt.Descent)
		declines = append(declines, declineCells{
			shape:  s,
			closed: add(dissectorLoop(closed, other)),
			opened: add(dissectorLoop(opened, other)),
		})
	}

	for range opt.Rounds {
		for _, m := range cells {
			m.times = append(m.times, timeLoop(opt.PerTime, m.fn))
		}
	}

	rep.Rounds = opt.Rounds
	for _, cc := range cases {
		r := Row{Case: cc.name, Path: cc.path, Ns: map[Contender]float64{}, Allocs: map[Contender]float64{}}
		for c, m := range cc.by {
			r.Ns[c] = median(m.times)
			r.Allocs[c] = allocsPerRun(100, func() { m.fn(1) })
		}
		rep.Rows = append(rep.Rows, r)
	}
	for _, d := range declines {
		rep.Declines = append(rep.Declines, DeclineRow{Shape: d.shape.String(), ClosedNs: median(d.closed.times), OpenNs: median(d.opened.times)})
	}
	return rep
}
