package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// callgrind runs this binary with childFlag and -n n under callgrind,
// collecting only inside the function fn and dumping the counts after each
// of its calls, and returns what the child printed (two words per loop) and
// each call's instruction total, in order. The child calls fn
// callsPerLoop times per loop.
func callgrind(valgrind, fn, childFlag string, n int) (labels []string, totals []uint64, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("find own binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "xdphash-instr-")
	if err != nil {
		return nil, nil, fmt.Errorf("create dump directory: %w", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "callgrind.out")
	cmd := exec.Command(valgrind, "--tool=callgrind", "--callgrind-out-file="+out,
		"--toggle-collect="+fn, "--dump-after="+fn, "--dump-instr=no",
		exe, childFlag, "-n", strconv.Itoa(n))
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1", "GOMAXPROCS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, nil, fmt.Errorf("run %s: %w (install the valgrind package)", valgrind, err)
		}
		return nil, nil, fmt.Errorf("run %s: %w\n%s", valgrind, err, lastLines(stderr.String(), 10))
	}
	labels = strings.Fields(strings.ReplaceAll(stdout.String(), "\n", " "))
	dumps, err := filepath.Glob(out + ".*")
	if err != nil {
		return nil, nil, err
	}
	calls := len(labels) / 2 * callsPerLoop
	if len(dumps) == 0 {
		return nil, nil, fmt.Errorf("callgrind found no function %s in %s: build it with go build (go run strips the symbol table)", fn, exe)
	}
	if len(dumps) != calls {
		return nil, nil, fmt.Errorf("callgrind dumped %d times, want %d (the Go runtime switched stacks inside a measurement)", len(dumps), calls)
	}
	for d := 1; d <= calls; d++ {
		t, err := dumpTotal(fmt.Sprintf("%s.%d", out, d))
		if err != nil {
			return nil, nil, err
		}
		totals = append(totals, t)
	}
	return labels, totals, nil
}
