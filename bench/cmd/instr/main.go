// Command instr counts the instructions per packet of the dissector's slow
// path, its fast paths (a Dissector with every gate open) and the kernel flow
// hash, under valgrind's callgrind: counts, unlike times, do not depend on what
// else the machine runs, so a committed table can guard the fast paths against
// regressions. It also counts each gate's decline: a Dissector with only that
// gate open on dissect.NearMissFrame of its class (the declining fast path, then
// the slow path from where it stopped), beside the slow path alone and a
// Dissector with every gate closed on the same frame; decline − slow is what
// an open gate adds to a frame it declines. And what auto mode chooses
// between: a Dissector under auto mode (EnableAuto, with a window the run never
// ends) with the gate open and with it closed, on the gate's sample frame and
// on its near miss, which give auto mode's S and C in instructions.
//
// It runs itself twice under callgrind, with N and 2N iterations of each loop,
// collecting only inside the loop function and dumping the counts after each
// call; the difference of the two runs divided by N is the cost of one
// iteration, whatever the set-up costs. The loop takes 64 copies of the frame
// in turn and reads a byte of the keys after each call; an empty loop that does
// the same with a call that only zeroes the keys is subtracted. The hash's set-up is Kernel.Hash
// less dchest/siphash.Hash over the same region, on the keys as dissected and
// on the keys of the reverse direction (which Kernel.Hash reorders). The
// batch rows put Kernel.HashBatch over 64 keys beside Kernel.Hash one key at
// a time, per key, for the IPv4, IPv6 and no-address regions and a batch that
// mixes IPv4 and IPv6; the check guards the batch column where the CPU has
// AVX2 (elsewhere HashBatch is Hash one key at a time).
//
//	instr                # print the table
//	instr -check FILE    # and fail when a fast path, a decline or a closed gate rose above FILE's
//	instr -closed-margin N  # and fail when a closed gate counts more than N above the slow path
//	instr -write FILE    # and write the table to FILE
//
// Build it with go build: go run strips the symbol table callgrind needs.
// bench/instructions.sh builds it and checks against the committed table.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dchest/siphash"
	"golang.org/x/sys/cpu"

	"github.com/xdphash/xdphash/bench"
	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

func main() {
	var (
		n         = flag.Int("n", 256, "iterations of the shorter measurement (the longer runs twice as many); a multiple of 64")
		check     = flag.String("check", "", "compare the fast paths and the declines with this table; exit 1 when one rose by more than -tolerance")
		write     = flag.String("write", "", "write the table to this file")
		tolerance = flag.Float64("tolerance", 0.02, "allowed rise of a fast path's, a decline's or a closed gate's count, as a fraction")
		margin    = flag.Float64("closed-margin", -1, "fail when a Dissector with every gate closed counts more than this many instructions above the slow path on any row (negative: no check)")
		valgrind  = flag.String("valgrind", "valgrind", "the valgrind binary")
		child     = flag.Bool("measure", false, "run the loops (what the callgrind runs execute)")
	)
	flag.Parse()
	if *n <= 0 || *n%64 != 0 || *n > 1<<24 {
		fmt.Fprintln(os.Stderr, "instr: -n must be a positive multiple of 64, at most 2^24")
		os.Exit(2)
	}
	if *child {
		runLoops(os.Stdout, *n)
		return
	}
	if *nicChild {
		runNICLoops(os.Stdout, *n)
		return
	}
	if *nicMode {
		os.Exit(nicMain(*valgrind, *n, *check, *write, *tolerance))
	}
	rows, err := count(*valgrind, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "instr:", err)
		os.Exit(1)
	}
	var table bytes.Buffer
	writeTable(&table, rows, *n)
	os.Stdout.Write(table.Bytes())
	if *write != "" {
		if err := os.WriteFile(*write, table.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "instr: write table:", err)
			os.Exit(1)
		}
	}
	if *check != "" {
		b, err := os.ReadFile(*check)
		if err != nil {
			fmt.Fprintln(os.Stderr, "instr: read committed table:", err)
			os.Exit(1)
		}
		want, err := parseTable(b)
		if err != nil {
			fmt.Fprintf(os.Stderr, "instr: %s: %v\n", *check, err)
			os.Exit(1)
		}
		if bad := regressions(want, rows, *tolerance); len(bad) > 0 {
			fmt.Fprintf(os.Stderr, "\ninstr: fast paths, declines or closed gates above %s by more than %.0f%%:\n", *check, 100**tolerance)
			for _, b := range bad {
				fmt.Fprintln(os.Stderr, "  "+b)
			}
			os.Exit(1)
		}
		fmt.Printf("\nno fast path, decline or closed gate above %s by more than %.0f%%\n", *check, 100**tolerance)
	}
	if *margin >= 0 {
		if bad := closedOverSlow(rows, *margin); len(bad) > 0 {
			fmt.Fprintf(os.Stderr, "\ninstr: a closed gate costs more than %.0f instructions above the slow path:\n", *margin)
			for _, b := range bad {
				fmt.Fprintln(os.Stderr, "  "+b)
			}
			os.Exit(1)
		}
		fmt.Printf("every closed gate within %.0f instructions of the slow path\n", *margin)
	}
}

// loopKind is what one measured loop calls per iteration.
type loopKind int

const (
	loopEmpty    loopKind = iota // the baseline: zeroes the keys (see measure)
	loopSlow                     // dissect.DissectFrame
	loopFast                     // Dissector.DissectFrame, every gate open (a decline row: only its gate)
	loopHash                     // hash.Kernel.Hash on the keys as dissected
	loopSip                      // siphash.Hash over the same region
	loopHashRev                  // hash.Kernel.Hash on the reverse direction's keys
	loopSipRev                   // siphash.Hash over the reverse direction's region
	loopClosed                   // loopFast's code on a Dissector with every gate closed
	loopBatch                    // hash.Kernel.HashBatch on the keys as dissected, 64 at a time
	loopBatchRev                 // hash.Kernel.HashBatch on the reverse direction's keys
	loopDescend                  // dissect.DissectFrameDescend under the input's descent policy
	numLoops
)

var loopNames = [numLoops]string{"empty", "slow", "fast", "hash", "sip", "hash-rev", "sip-rev", "closed", "batch", "batch-rev", "descend"}

// rowKind is what a row of the table measures.
type rowKind int

const (
	rowCase     rowKind = iota // a frame: slow, fast (every gate open), closed and the hash
	rowDecline                 // a gate's near miss: fast runs only that gate
	rowAutoHit                 // a gate's sample frame under auto mode: fast with the gate open, closed without
	rowAutoMiss                // its near miss, the same
	rowBatch                   // a region's keys: Kernel.Hash one at a time against Kernel.HashBatch
	rowDescend                 // a UDP tunnel frame: outer-only slow, descended slow, Dissectors descending
)

// loops are the loops each kind of row runs.
var loops = [...][]loopKind{
	rowCase:     {loopEmpty, loopSlow, loopFast, loopHash, loopSip, loopHashRev, loopSipRev, loopClosed},
	rowDecline:  {loopEmpty, loopSlow, loopFast, loopClosed},
	rowAutoHit:  {loopEmpty, loopFast, loopClosed},
	rowAutoMiss: {loopEmpty, loopFast, loopClosed},
	rowBatch:    {loopEmpty, loopHash, loopBatch, loopHashRev, loopBatchRev},
	rowDescend:  {loopEmpty, loopSlow, loopDescend, loopFast, loopClosed},
}

// descendRow is a row of the descent's table: a tunnel frame (inner
// IPv4/TCP) and the policy entering its tunnel.
type descendRow struct {
	name  string
	t     dissect.Tunnel
	frame []byte
}

// descendRows are the descended VXLAN, Geneve and GTP-U frames.
func descendRows() []descendRow {
	outer := corpus.IPv4{TTL: 64, Src: netip.MustParseAddr("198.18.0.1"), Dst: netip.MustParseAddr("198.19.0.2")}
	inner := corpus.IPv4{TTL: 64, Src: netip.MustParseAddr("198.18.1.1"), Dst: netip.MustParseAddr("198.19.1.2")}
	tcp := corpus.TCP{Src: 1025, Dst: 80, Flags: 0x10}
	teb := corpus.Ethernet{Dst: [6]byte{2, 0, 0, 0, 0, 3}, Src: [6]byte{2, 0, 0, 0, 0, 4}}
	return []descendRow{
		{"vxlan", dissect.TunnelVXLAN, corpus.Stack(corpus.Ethernet{}, outer, corpus.UDP{Src: 49152, Dst: 4789}, corpus.VXLAN{Flags: corpus.VXLANFlagVNI, VNI: 42}, teb, inner, tcp)},
		{"geneve", dissect.TunnelGeneve, corpus.Stack(corpus.Ethernet{}, outer, corpus.UDP{Src: 49152, Dst: 6081}, corpus.Geneve{VNI: 42}, teb, inner, tcp)},
		{"gtpu", dissect.TunnelGTPU, corpus.Stack(corpus.Ethernet{}, outer, corpus.UDP{Src: 2152, Dst: 2152}, corpus.GTPU{TEID: 7}, inner, tcp)},
	}
}

// descentOf is the policy entering t alone.
func descentOf(t dissect.Tunnel) dissect.Descent {
	p, err := dissect.NewDescent(dissect.Tunnels(0).With(t))
	if err != nil {
		panic(err)
	}
	return p
}

// descending is a Dissector with gates g under the policy entering t.
func descending(g dissect.Gates, t dissect.Tunnel) *dissect.Dissector {
	d := dissect.NewDissector(dissect.DefaultFlags, g)
	d.SetDescent(descentOf(t))
	return d
}

// rowName is the name of gate s's row of kind k.
func rowName(k rowKind, s dissect.Shape) string {
	return [...]string{rowDecline: "decline:", rowAutoHit: "auto-hit:", rowAutoMiss: "auto-miss:"}[k] + s.String()
}

// batchRow is a row of the batch hash's table: the keys of the frames of
// cases, in turn, over the 64 keys of a batch.
type batchRow struct {
	name   string   // the region the keys hash: ipv4, ipv6, none or mixed
	frames []string // case names
}

// batchRows are the regions of the batch hash's table: IPv4's 48 bytes,
// IPv6's 72, the 40 of keys without addresses (MPLS), and a batch that
// alternates IPv4 and IPv6 keys.
var batchRows = []batchRow{
	{"ipv4", []string{"eth+IPv4+TCP"}},
	{"ipv6", []string{"eth+IPv6+TCP"}},
	{"none", []string{"MPLS+IPv4+UDP"}},
	{"mixed", []string{"eth+IPv4+TCP", "eth+IPv6+TCP"}},
}

// batchInput is newInput over the frames of cases named br.frames in turn.
func batchInput(br batchRow) *input {
	var ins []*input
	for _, name := range br.frames {
		for _, c := range cases() {
			if c.Name == name {
				ins = append(ins, newInput(c.Frame))
			}
		}
	}
	if len(ins) != len(br.frames) {
		panic(fmt.Sprintf("batch row %s: cases %q not all found", br.name, br.frames))
	}
	in := ins[0]
	for i := range in.keys {
		in.keys[i], in.rev[i] = ins[i%len(ins)].keys[i], ins[i%len(ins)].rev[i]
	}
	return in
}

// autoDissector is a Dissector under auto mode with gates g, whose window is
// never reached: auto mode ticks and probes, but does not decide.
func autoDissector(g dissect.Gates) *dissect.Dissector {
	d := dissect.NewDissector(dissect.DefaultFlags, g)
	d.EnableAuto(dissect.AutoConfig{Window: math.MaxInt})
	return d
}

// callsPerLoop is the number of calls of measure per loop: a warm-up, n and
// 2n iterations.
const callsPerLoop = 3

// cases are the kernel-counted shapes, then the project's samples.
func cases() []bench.Case {
	cs := bench.KernelShapes()
	for _, c := range bench.Cases() {
		c.Name = "sample:" + c.Name
		cs = append(cs, c)
	}
	return cs
}

// near is one gate's decline: its class's near-miss frame.
type near struct {
	gate  dissect.Shape
	frame []byte
}

// nearMisses are the gates that decline some frame of their class.
func nearMisses() []near {
	var ns []near
	for s := range dissect.NumShapes {
		if _, tunnel := s.Tunnel(); tunnel {
			continue // measured under its policy, in the descent's table
		}
		if f, ok := dissect.NearMissFrame(s); ok {
			ns = append(ns, near{s, f})
		}
	}
	return ns
}

// sipKey is the key both the hash and the bare SipHash loops use.
var sipKey = hash.Key{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// input is what the loops of one case go round: 64 copies of its frame, 64
// copies of its keys and of its reverse direction's keys.
type input struct {
	frames       [64][]byte
	keys, rev    [64]dissect.FlowKeys
	hashes       [64]uint32 // HashBatch's results
	l4           [64]bool
	kern         hash.Kernel
	k0, k1       uint64
	region, rreg int
	desc         dissect.Descent // the descent row's policy
}

func newInput(frame []byte) *input {
	in := &input{kern: hash.NewKernel(sipKey)}
	in.k0, in.k1 = leUint64(sipKey[0:8]), leUint64(sipKey[8:16])
	var k dissect.FlowKeys
	dissect.DissectFrame(&k, frame, dissect.DefaultFlags)
	r := reverse(k)
	for i := range in.frames {
		in.frames[i] = append([]byte(nil), frame...)
		in.keys[i], in.rev[i] = k, r
	}
	in.region, in.rreg = len(hash.Region(&k)), len(hash.Region(&r))
	return in
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// reverse is the keys of the other direction of k's flow: addresses and
// ports exchanged.
func reverse(k dissect.FlowKeys) dissect.FlowKeys {
	r := k
	var n int
	switch k.AddrType() {
	case dissect.AddrIPv4:
		n = 4
	case dissect.AddrIPv6:
		n = 16
	default:
		return r
	}
	src, dst := dissect.OffAddrs, dissect.OffAddrs+n
	copy(r[src:src+n], k[dst:dst+n])
	copy(r[dst:dst+n], k[src:src+n])
	copy(r[dissect.OffPorts:dissect.OffPorts+2], k[dissect.OffPorts+2:dissect.OffPorts+4])
	copy(r[dissect.OffPorts+2:dissect.OffPorts+4], k[dissect.OffPorts:dissect.OffPorts+2])
	return r
}

// runLoops runs every loop of every case, then of every gate's rows, three
// times, with n, n and 2n iterations (the first warms up), in a fixed order,
// and prints "case loop" per loop in that order: callgrind dumps its counts after each call of
// measure. The Go runtime must not switch stacks inside measure (callgrind
// would take the switch for a return and dump early): the garbage collector
// is off, the stack is grown beforehand, and the goroutine yields before
// each call so that sysmon does not preempt a call that runs long under
// valgrind.
func runLoops(w io.Writer, n int) {
	debug.SetGCPercent(-1)
	growStack(64)
	// The closed loop runs the fast loop's code with the closed Dissector.
	run := func(name string, k rowKind, in *input, d, closed *dissect.Dissector) {
		for _, l := range loops[k] {
			ml, md := l, d
			if l == loopClosed {
				ml, md = loopFast, closed
			}
			for _, iters := range []int{n, n, 2 * n} {
				runtime.Gosched()
				measure(ml, in, md, iters)
			}
			fmt.Fprintf(w, "%s %s\n", name, loopNames[l])
		}
	}
	all := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates)
	closed := dissect.NewDissector(dissect.DefaultFlags, dissect.NoGates)
	for _, c := range cases() {
		run(c.Name, rowCase, newInput(c.Frame), all, closed)
	}
	for _, nm := range nearMisses() {
		run(rowName(rowDecline, nm.gate), rowDecline, newInput(nm.frame), dissect.NewDissector(dissect.DefaultFlags, dissect.NoGates.With(nm.gate)), closed)
	}
	for _, nm := range nearMisses() {
		open, shut := autoDissector(dissect.NoGates.With(nm.gate)), autoDissector(dissect.NoGates)
		run(rowName(rowAutoHit, nm.gate), rowAutoHit, newInput(dissect.SampleFrame(nm.gate)), open, shut)
		run(rowName(rowAutoMiss, nm.gate), rowAutoMiss, newInput(nm.frame), open, shut)
	}
	for _, br := range batchRows {
		run("batch:"+br.name, rowBatch, batchInput(br), all, closed)
	}
	for _, dr := range descendRows() {
		in := newInput(dr.frame)
		in.desc = descentOf(dr.t)
		run("descend:"+dr.name, rowDescend, in, descending(dissect.AllGates, dr.t), descending(dissect.NoGates, dr.t))
	}
}

// growStack uses about depth KiB of stack, so that the loops never grow it.
//
//go:noinline
func growStack(depth int) byte {
	var pad [1 << 10]byte
	pad[depth&1023] = byte(depth)
	if depth > 0 {
		return growStack(depth-1) + pad[0]
	}
	return pad[0]
}

// empty is the baseline's call: what a dissection costs that only zeroes the
// keys.
//
//go:noinline
func empty(keys *dissect.FlowKeys, frame []byte) (bool, dissect.Path) {
	*keys = dissect.FlowKeys{}
	return len(frame) > 0, dissect.PathSlow
}

// measure is the function callgrind collects in: n iterations of loop l
// (the fast loop runs d; runLoops runs the closed loop as the fast loop of
// a Dissector with every gate closed, so that every loop keeps its code).
// The empty loop calls a function that zeroes the keys: the kernel's caller
// does that (__skb_get_hash's memset) and Go's Dissect does it itself, so the
// counts of both leave it out, and the call, as the C reference figures of
// issue 17 do.
//
//go:noinline
func measure(l loopKind, in *input, d *dissect.Dissector, n int) {
	var (
		k dissect.FlowKeys
		s uint64
	)
	switch l {
	case loopEmpty:
		for i := range n {
			f := in.frames[i&63]
			if ok, _ := empty(&k, f); ok {
				s++
			}
			s += uint64(k[dissect.OffNProto])
		}
	case loopSlow:
		for i := range n {
			f := in.frames[i&63]
			if dissect.DissectFrame(&k, f, dissect.DefaultFlags) {
				s++
			}
			s += uint64(k[dissect.OffNProto])
		}
	case loopFast:
		for i := range n {
			f := in.frames[i&63]
			if ok, _ := d.DissectFrame(&k, f); ok {
				s++
			}
			s += uint64(k[dissect.OffNProto])
		}
	case loopHash:
		for i := range n {
			h, _ := in.kern.Hash(&in.keys[i&63])
			s += uint64(h)
		}
	case loopSip:
		for i := range n {
			s += siphash.Hash(in.k0, in.k1, in.keys[i&63][dissect.HashOffset:dissect.HashOffset+in.region])
		}
	case loopHashRev:
		for i := range n {
			h, _ := in.kern.Hash(&in.rev[i&63])
			s += uint64(h)
		}
	case loopSipRev:
		for i := range n {
			s += siphash.Hash(in.k0, in.k1, in.rev[i&63][dissect.HashOffset:dissect.HashOffset+in.rreg])
		}
	case loopBatch:
		for i := 0; i < n; i += len(in.keys) {
			in.kern.HashBatch(in.keys[:], in.hashes[:], in.l4[:])
			s += uint64(in.hashes[i&63])
		}
	case loopDescend:
		for i := range n {
			f := in.frames[i&63]
			if dissect.DissectFrameDescend(&k, f, dissect.DefaultFlags, in.desc) {
				s++
			}
			s += uint64(k[dissect.OffNProto])
		}
	case loopBatchRev:
		for i := 0; i < n; i += len(in.keys) {
			in.kern.HashBatch(in.rev[:], in.hashes[:], in.l4[:])
			s += uint64(in.hashes[i&63])
		}
	}
	runtime.KeepAlive(s)
}

// row is one row's instructions per iteration.
type row struct {
	name, path string
	kind       rowKind
	per        [numLoops]float64 // per iteration, baseline not subtracted
}

func (r row) slow() float64     { return r.per[loopSlow] - r.per[loopEmpty] }
func (r row) fast() float64     { return r.per[loopFast] - r.per[loopEmpty] }
func (r row) closed() float64   { return r.per[loopClosed] - r.per[loopEmpty] }
func (r row) hash() float64     { return r.per[loopHash] - r.per[loopEmpty] }
func (r row) setup() float64    { return r.per[loopHash] - r.per[loopSip] }
func (r row) setupRev() float64 { return r.per[loopHashRev] - r.per[loopSipRev] }
func (r row) hashRev() float64  { return r.per[loopHashRev] - r.per[loopEmpty] }
func (r row) batch() float64    { return r.per[loopBatch] - r.per[loopEmpty] }
func (r row) batchRev() float64 { return r.per[loopBatchRev] - r.per[loopEmpty] }

// checked is the figure of r the check guards: a batch row's batch column,
// any other row's fast one.
func (r row) checked() float64 {
	if r.kind == rowBatch {
		return r.batch()
	}
	return r.fast()
}

// count runs the loops under callgrind with n and 2n iterations and returns
// each case's instructions per iteration.
func count(valgrind string, n int) ([]row, error) {
	labels, totals, err := callgrind(valgrind, "main.measure", "-measure", n)
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, c := range cases() {
		var k dissect.FlowKeys
		_, p := dissect.NewDissector(dissect.DefaultFlags, dissect.AllGates).DissectFrame(&k, c.Frame)
		rows = append(rows, row{name: c.Name, path: p.String()})
	}
	for _, nm := range nearMisses() {
		var k dissect.FlowKeys
		_, p := dissect.NewDissector(dissect.DefaultFlags, dissect.NoGates.With(nm.gate)).DissectFrame(&k, nm.frame)
		rows = append(rows, row{name: rowName(rowDecline, nm.gate), path: p.String(), kind: rowDecline})
	}
	for _, nm := range nearMisses() {
		rows = append(rows, row{name: rowName(rowAutoHit, nm.gate), kind: rowAutoHit}, row{name: rowName(rowAutoMiss, nm.gate), kind: rowAutoMiss})
	}
	for _, br := range batchRows {
		rows = append(rows, row{name: "batch:" + br.name, kind: rowBatch})
	}
	for _, dr := range descendRows() {
		var k dissect.FlowKeys
		_, p := descending(dissect.AllGates, dr.t).DissectFrame(&k, dr.frame)
		rows = append(rows, row{name: "descend:" + dr.name, path: p.String(), kind: rowDescend})
	}
	j := 0
	for i := range rows {
		for _, l := range loops[rows[i].kind] {
			if 2*j+1 >= len(labels) {
				return nil, fmt.Errorf("the measuring run made %d calls, want more", len(labels)/2)
			}
			if labels[2*j] != rows[i].name || labels[2*j+1] != loopNames[l] {
				return nil, fmt.Errorf("call %d measured %s %s, want %s %s", j, labels[2*j], labels[2*j+1], rows[i].name, loopNames[l])
			}
			t := totals[j*callsPerLoop:]
			rows[i].per[l] = float64(int64(t[2])-int64(t[1])) / float64(n)
			j++
		}
	}
	if 2*j != len(labels) {
		return nil, fmt.Errorf("the measuring run made %d calls, want %d", len(labels)/2, j)
	}
	return rows, nil
}

// dumpTotal reads the "totals:" line of a callgrind dump (the events are
// instructions only).
func dumpTotal(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("read callgrind dump: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "totals:"); ok {
			t, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("callgrind dump %s: totals %q: %w", path, v, err)
			}
			return t, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read callgrind dump %s: %w", path, err)
	}
	return 0, fmt.Errorf("callgrind dump %s has no totals line", path)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Columns of the table, as writeTable prints them and parseTable reads them:
// the cases' table, then the declines' (headed "gate"). The check guards the
// fast and closed columns of a case and the decline and closed columns of a
// gate.
const (
	colCase          = 0
	colClosed        = 3
	colFast          = 4
	numCols          = 8
	colDeclineClosed = 2
	colDecline       = 3
	numDeclineCols   = 5
	colBatch         = 2
	numBatchCols     = 7
	colDescendClosed = 5
	colDescendFast   = 4
	numDescendCols   = 7
)

// closedKey is the key parseTable files a row's closed column under.
func closedKey(name string) string { return "closed:" + name }

func writeTable(w io.Writer, rows []row, n int) {
	fmt.Fprintf(w, "# instructions per packet under callgrind (%d and %d iterations, empty loop subtracted);\n", n, 2*n)
	fmt.Fprintf(w, "# slow = DissectFrame, closed = a Dissector with every gate closed, fast = one with every gate open;\n")
	fmt.Fprintf(w, "# hash setup = Kernel.Hash - dchest/siphash.Hash over the same region; rev = the reverse direction.\n")
	fmt.Fprintf(w, "# written by: bench/instructions.sh -write\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "case\tpath\tslow\tclosed\tfast\thash\tsetup\tsetup-rev\n")
	for _, r := range rows {
		if r.kind == rowCase {
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", r.name, r.path, r.slow(), r.closed(), r.fast(), r.hash(), r.setup(), r.setupRev())
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\n# declines, on dissect.NearMissFrame of the gate's class: slow = DissectFrame alone, closed = a Dissector\n")
	fmt.Fprintf(w, "# with every gate closed, decline = one with only this gate open; C = decline - slow.\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "gate\tslow\tclosed\tdecline\tC\n")
	for _, r := range rows {
		if r.kind == rowDecline {
			gate, _ := strings.CutPrefix(r.name, "decline:")
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%+.1f\n", gate, r.slow(), r.closed(), r.fast(), r.fast()-r.slow())
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\n# auto mode (not checked): a Dissector under EnableAuto with only the gate open, and with every gate\n")
	fmt.Fprintf(w, "# closed, on the gate's sample frame (hit) and its near miss (miss); S = closed - open on the hit,\n")
	fmt.Fprintf(w, "# C = open - closed on the miss, p_be = C / (S + C).\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "auto\thit-open\thit-closed\tmiss-open\tmiss-closed\tS\tC\tp_be\n")
	for i, r := range rows {
		if r.kind != rowAutoHit || i+1 == len(rows) {
			continue
		}
		m := rows[i+1]
		gate, _ := strings.CutPrefix(r.name, "auto-hit:")
		sv, cv := r.closed()-r.fast(), m.fast()-m.closed()
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\n", gate, r.fast(), r.closed(), m.fast(), m.closed(), sv, cv, dissect.Cost{Saving: sv, Miss: cv}.BreakEven())
	}
	tw.Flush()
	fmt.Fprintf(w, "\n# the kernel flow hash per key, 64 keys a batch: single = Kernel.Hash one at a time, batch =\n")
	fmt.Fprintf(w, "# Kernel.HashBatch (checked); rev = the reverse direction's keys, which both sort; ratio = batch / single.\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "batch\tsingle\tbatch\tratio\tsingle-rev\tbatch-rev\tratio-rev\n")
	for _, r := range rows {
		if r.kind == rowBatch {
			name, _ := strings.CutPrefix(r.name, "batch:")
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f\t%.1f\t%.1f\t%.2f\n", name, r.hash(), r.batch(), r.batch()/r.hash(), r.hashRev(), r.batchRev(), r.batchRev()/r.hashRev())
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\n# the opt-in UDP tunnel descent, on a tunnel frame with inner IPv4/TCP: outer = DissectFrame (no descent),\n")
	fmt.Fprintf(w, "# descended = DissectFrameDescend entering the tunnel; fast and closed = Dissectors with every gate open\n")
	fmt.Fprintf(w, "# (taking path) and closed under that policy (checked); D = fast - descended.\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "descend\tpath\touter\tdescended\tfast\tclosed\tD\n")
	for _, r := range rows {
		if r.kind == rowDescend {
			name, _ := strings.CutPrefix(r.name, "descend:")
			d := r.per[loopDescend] - r.per[loopEmpty]
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%+.1f\n", name, r.path, r.slow(), d, r.fast(), r.closed(), r.fast()-d)
		}
	}
	tw.Flush()
}

// parseTable reads the guarded figures of a table writeTable wrote: the fast
// column by case, the decline column by decline row name ("decline:GATE"),
// the fast column of a descent row by "descend:TUNNEL", and the closed
// column of all three by closedKey of the row's name.
func parseTable(b []byte) (map[string]float64, error) {
	guarded := map[string]float64{}
	const (
		cases = iota
		declines
		auto // not checked
		batches
		descents
	)
	table := cases
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
			continue
		case f[0] == "case":
			table = cases
			continue
		case f[0] == "gate":
			table = declines
			continue
		case f[0] == "auto":
			table = auto
			continue
		case f[0] == "descend":
			table = descents
			continue
		case f[0] == "batch":
			table = batches
			continue
		}
		name, want, col, closedCol, what := f[colCase], numCols, colFast, colClosed, "fast"
		switch table {
		case auto:
			continue
		case declines:
			name, want, col, closedCol, what = "decline:"+f[colCase], numDeclineCols, colDecline, colDeclineClosed, "decline"
		case batches:
			name, want, col, closedCol, what = "batch:"+f[colCase], numBatchCols, colBatch, -1, "batch"
		case descents:
			name, want, col, closedCol, what = "descend:"+f[colCase], numDescendCols, colDescendFast, colDescendClosed, "fast"
		}
		if len(f) != want {
			return nil, fmt.Errorf("line %d: %d columns, want %d", i+1, len(f), want)
		}
		v, err := strconv.ParseFloat(f[col], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s column: %w", i+1, what, err)
		}
		guarded[name] = v
		if closedCol < 0 {
			continue
		}
		c, err := strconv.ParseFloat(f[closedCol], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: closed column: %w", i+1, err)
		}
		guarded[closedKey(name)] = c
	}
	if len(guarded) == 0 {
		return nil, errors.New("no rows")
	}
	return guarded, nil
}

// regressions lists the cases whose fast path, the gates whose decline, and
// the rows whose closed gate now counts more than the committed figure
// allows, and committed rows no longer measured.
func regressions(want map[string]float64, rows []row, tolerance float64) []string {
	var bad []string
	seen := map[string]bool{}
	for _, r := range rows {
		type guarded struct {
			name string
			got  float64
		}
		checks := []guarded{{r.name, r.checked()}}
		if r.kind != rowBatch {
			checks = append(checks, guarded{closedKey(r.name), r.closed()})
		}
		for _, g := range checks {
			seen[g.name] = true
			w, ok := want[g.name]
			if !ok {
				continue
			}
			if r.kind == rowBatch && !cpu.X86.HasAVX2 {
				// HashBatch hashes one key at a time here: the committed
				// figure is the vector hash's.
				continue
			}
			if g.got > w*(1+tolerance) {
				bad = append(bad, fmt.Sprintf("%s: %.1f instructions, committed %.1f (%+.1f%%)", g.name, g.got, w, 100*(g.got-w)/w))
			}
		}
	}
	for name := range want {
		if !seen[name] {
			bad = append(bad, name+": in the committed table but not measured")
		}
	}
	slices.Sort(bad)
	return bad
}

// closedOverSlow lists the rows (cases and declines) on which a Dissector
// with every gate closed counts more than margin instructions above the slow
// path alone: what a closed gate adds, which should be one not-taken branch
// and a counter's increment.
func closedOverSlow(rows []row, margin float64) []string {
	var bad []string
	for _, r := range rows {
		if r.kind != rowCase && r.kind != rowDecline {
			continue
		}
		if over := r.closed() - r.slow(); over > margin {
			bad = append(bad, fmt.Sprintf("%s: closed %.1f, slow %.1f (%+.1f)", r.name, r.closed(), r.slow(), over))
		}
	}
	return bad
}
