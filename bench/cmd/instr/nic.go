package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/xdphash/xdphash/bench"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/nicrss"
)

// The NIC rows (issue 23) are a table of their own, in their own file, so
// that the dissector's table and the NIC's are rewritten apart:
//
//	instr -nic                      # print the NIC table
//	instr -nic -check FILE          # and fail when a row rose above FILE's
//	instr -nic -write FILE          # and write it to FILE
//
// Each row is a kernel-counted shape (bench.KernelShapes): parse is
// nicrss.ParseConfig.Parse alone, nic the parse and the Toeplitz hash
// (nicrss.Hasher.Hash) at the outer level, nic-inner the same at the inner
// level; the empty loop (zeroing the tuple) is subtracted. The check guards
// the nic column.
var (
	nicMode  = flag.Bool("nic", false, "count the NIC parse and hash per shape instead of the dissector (a table of its own)")
	nicChild = flag.Bool("measure-nic", false, "run the NIC loops (what the callgrind runs of -nic execute)")
)

// nicLoop is what one NIC loop calls per iteration.
type nicLoop int

const (
	nicEmpty nicLoop = iota
	nicParse
	nicHash
	nicHashInner
	numNICLoops
)

var nicLoopNames = [numNICLoops]string{"empty", "parse", "nic", "nic-inner"}

// nicInput is what the loops of one shape go round: 64 copies of its frame.
type nicInput struct {
	frames       [64][]byte
	outer, inner *nicrss.Hasher
}

func newNICInput(frame []byte) *nicInput {
	in := &nicInput{}
	in.outer, _ = nicrss.NewHasher(nil, hash.SymmetricNone, nicrss.ParseConfig{Types: nicrss.TypesDefault})
	in.inner, _ = nicrss.NewHasher(nil, hash.SymmetricNone, nicrss.ParseConfig{Types: nicrss.TypesDefault, Level: nicrss.LevelInner})
	for i := range in.frames {
		in.frames[i] = append([]byte(nil), frame...)
	}
	return in
}

// emptyTuple is the baseline's call: a parse that only zeroes the tuple.
//
//go:noinline
func emptyTuple(t *nicrss.Tuple, frame []byte) bool {
	*t = nicrss.Tuple{}
	return len(frame) > 0
}

// measureNIC is the function callgrind collects in for the NIC rows: n
// iterations of loop l.
//
//go:noinline
func measureNIC(l nicLoop, in *nicInput, n int) {
	var (
		t nicrss.Tuple
		s uint64
	)
	pc := &in.outer.Parse
	switch l {
	case nicEmpty:
		for i := range n {
			if emptyTuple(&t, in.frames[i&63]) {
				s++
			}
			s += uint64(t.Report)
		}
	case nicParse:
		for i := range n {
			if pc.Parse(&t, in.frames[i&63]) {
				s++
			}
			s += uint64(t.Report)
		}
	case nicHash:
		for i := range n {
			h, _ := in.outer.Hash(&t, in.frames[i&63])
			s += uint64(h)
		}
	case nicHashInner:
		for i := range n {
			h, _ := in.inner.Hash(&t, in.frames[i&63])
			s += uint64(h)
		}
	}
	runtime.KeepAlive(s)
}

// runNICLoops runs every NIC loop of every shape with n, n and 2n
// iterations, as runLoops does, printing "shape loop" per loop.
func runNICLoops(w io.Writer, n int) {
	debug.SetGCPercent(-1)
	growStack(64)
	for _, c := range bench.KernelShapes() {
		in := newNICInput(c.Frame)
		for l := range numNICLoops {
			for _, iters := range []int{n, n, 2 * n} {
				runtime.Gosched()
				measureNIC(l, in, iters)
			}
			fmt.Fprintf(w, "%s %s\n", strings.ReplaceAll(c.Name, " ", "_"), nicLoopNames[l])
		}
	}
}

// nicRow is one shape's instructions per iteration, baseline not subtracted.
type nicRow struct {
	name, report string
	per          [numNICLoops]float64
}

func (r nicRow) col(l nicLoop) float64 { return r.per[l] - r.per[nicEmpty] }

// nicMain is instr -nic; it returns the exit status.
func nicMain(valgrind string, n int, check, write string, tolerance float64) int {
	rows, err := countNIC(valgrind, n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "instr:", err)
		return 1
	}
	var table bytes.Buffer
	writeNICTable(&table, rows, n)
	os.Stdout.Write(table.Bytes())
	if write != "" {
		if err := os.WriteFile(write, table.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "instr: write NIC table:", err)
			return 1
		}
	}
	if check == "" {
		return 0
	}
	b, err := os.ReadFile(check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "instr: read committed NIC table:", err)
		return 1
	}
	want, err := parseNICTable(b)
	if err != nil {
		fmt.Fprintf(os.Stderr, "instr: %s: %v\n", check, err)
		return 1
	}
	var bad []string
	for _, r := range rows {
		if w, ok := want[r.name]; ok && r.col(nicHash) > w*(1+tolerance) {
			bad = append(bad, fmt.Sprintf("%s: %.1f instructions, committed %.1f", r.name, r.col(nicHash), w))
		}
		delete(want, r.name)
	}
	for name := range want {
		bad = append(bad, name+": in the committed table but not measured")
	}
	if len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "\ninstr: NIC rows above %s by more than %.0f%%:\n  %s\n", check, 100*tolerance, strings.Join(bad, "\n  "))
		return 1
	}
	fmt.Printf("\nno NIC row above %s by more than %.0f%%\n", check, 100*tolerance)
	return 0
}

// countNIC runs the NIC loops under callgrind and returns each shape's
// instructions per iteration.
func countNIC(valgrind string, n int) ([]nicRow, error) {
	labels, totals, err := callgrind(valgrind, "main.measureNIC", "-measure-nic", n)
	if err != nil {
		return nil, err
	}
	shapes := bench.KernelShapes()
	if len(labels) != 2*len(shapes)*int(numNICLoops) {
		return nil, fmt.Errorf("the measuring run made %d loops, want %d", len(labels)/2, len(shapes)*int(numNICLoops))
	}
	var rows []nicRow
	for s, c := range shapes {
		var tu nicrss.Tuple
		cfg := nicrss.ParseConfig{Types: nicrss.TypesDefault}
		cfg.Parse(&tu, c.Frame)
		r := nicRow{name: strings.ReplaceAll(c.Name, " ", "_"), report: tu.Report.String()}
		for l := range numNICLoops {
			j := s*int(numNICLoops) + int(l)
			if labels[2*j] != r.name || labels[2*j+1] != nicLoopNames[l] {
				return nil, fmt.Errorf("call %d measured %s %s, want %s %s", j, labels[2*j], labels[2*j+1], r.name, nicLoopNames[l])
			}
			t := totals[j*callsPerLoop:]
			r.per[l] = float64(int64(t[2])-int64(t[1])) / float64(n)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func writeNICTable(w io.Writer, rows []nicRow, n int) {
	fmt.Fprintf(w, "# NIC RSS instructions per packet under callgrind (%d and %d iterations, empty loop subtracted);\n", n, 2*n)
	fmt.Fprintf(w, "# parse = nicrss.ParseConfig.Parse, nic = parse + Toeplitz (nicrss.Hasher.Hash), nic-inner = the same at --rss-level inner.\n")
	fmt.Fprintf(w, "# written by: bench/instructions.sh -write-nic\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "shape\treport\tparse\tnic\tnic-inner\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\n", r.name, r.report, r.col(nicParse), r.col(nicHash), r.col(nicHashInner))
	}
	tw.Flush()
}

// parseNICTable reads the nic column by shape.
func parseNICTable(b []byte) (map[string]float64, error) {
	want := map[string]float64{}
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || f[0] == "shape" {
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("line %d: %d columns, want 5", i+1, len(f))
		}
		v, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: nic column: %w", i+1, err)
		}
		want[f[0]] = v
	}
	if len(want) == 0 {
		return nil, errors.New("no rows")
	}
	return want, nil
}
