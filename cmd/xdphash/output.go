package main

import (
	"fmt"
	"io"
	"os"

	"github.com/xdphash/xdphash/internal/output"
)

// pendingOutput is an output file checked before the long work it records
// (output.File): a missing directory, a directory named as the file or a
// read-only file system fails the command at once instead of after the run,
// and a failed run leaves what was there as it was.
type pendingOutput struct {
	path string
	tmp  io.Writer // what the output is written to as the work goes
	f    *output.File
}

// createOutput checks that path can be written; Abort gives it up, Commit
// writes data and makes it final.
func createOutput(path string) (*pendingOutput, error) {
	f, err := output.Create(path)
	if err != nil {
		return nil, err
	}
	if f.Stale != "" {
		fmt.Fprintf(os.Stderr, "xdphash: %s: removed %s, the partial output of an earlier run that was killed\n", path, f.Stale)
	}
	return &pendingOutput{path: path, tmp: f, f: f}, nil
}

// Commit writes data after what was written to tmp and makes the output
// final.
func (o *pendingOutput) Commit(data []byte) error { return o.f.Commit(data) }

// Abort gives the output up; it is safe after Commit.
func (o *pendingOutput) Abort() { o.f.Abort() }

// checkFiles refuses outputs that are an input or another output; inputs
// and outputs alternate flag and path.
func checkFiles(inputs, outputs []string) error {
	var s output.Set
	for i := 0; i+1 < len(inputs); i += 2 {
		s.Input(inputs[i], inputs[i+1])
	}
	for i := 0; i+1 < len(outputs); i += 2 {
		if err := s.Output(outputs[i], outputs[i+1]); err != nil {
			return err
		}
	}
	return nil
}
