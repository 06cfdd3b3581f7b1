package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// pendingOutput is an output file checked before the long work it records:
// a temporary file beside path, renamed onto path when the work is done, so
// that a missing directory or a read-only file system fails the command at
// once instead of after the run, and a failed run leaves no half-written
// file.
type pendingOutput struct {
	path string
	tmp  *os.File
}

// createOutput checks that path can be written by creating its temporary
// file; Abort removes it, Commit writes data and renames it onto path.
func createOutput(path string) (*pendingOutput, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("check output %s: %w (hint: an existing, writable directory)", path, err)
	}
	return &pendingOutput{path: path, tmp: tmp}, nil
}

// Commit writes data to the temporary file and renames it onto path.
func (o *pendingOutput) Commit(data []byte) error {
	if _, err := o.tmp.Write(data); err != nil {
		o.Abort()
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	if err := o.tmp.Chmod(0o644); err != nil {
		o.Abort()
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	if err := o.tmp.Close(); err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	if err := os.Rename(o.tmp.Name(), o.path); err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	return nil
}

// Abort removes the temporary file; it is safe after Commit.
func (o *pendingOutput) Abort() {
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
	}
}

// checkOutputDir makes sure dir exists and takes files, before the long work
// that fills it, and returns the function that removes dir again if it made
// it and nothing was written there.
func checkOutputDir(dir string) (undo func(), err error) {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("check output directory %s: %w", dir, err)
	}
	undo = func() {}
	if os.IsNotExist(statErr) {
		undo = func() { os.Remove(dir) } // fails, as it should, once dir holds files
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		undo()
		return nil, fmt.Errorf("check output directory %s: %w (hint: a writable directory)", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return undo, nil
}
