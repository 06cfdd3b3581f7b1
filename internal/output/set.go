package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Set is a command's files, inputs and outputs, as they are named: it
// refuses an output that is one of them. The zero Set is empty.
type Set struct {
	files []named
}

type named struct {
	flag, path string
	input      bool
	info       fs.FileInfo // nil when the file does not exist
	abs        string      // the absolute path, its directory's links resolved
}

// Input adds an input, named by flag in messages; "-" (stdin) and "" are
// no file.
func (s *Set) Input(flag, path string) {
	if path == "" || path == "-" {
		return
	}
	s.files = append(s.files, s.name(flag, path, true))
}

// Output adds an output, named by flag in messages, unless it is an input
// or an earlier output: then it returns an error that says which. Two
// outputs may be the same character device (two reports to /dev/null).
func (s *Set) Output(flag, path string) error {
	if path == "" {
		return nil
	}
	n := s.name(flag, path, false)
	for _, f := range s.files {
		if !f.same(n) {
			continue
		}
		if !f.input && n.info != nil && n.info.Mode()&fs.ModeCharDevice != 0 {
			continue
		}
		kind := "the output"
		if f.input {
			kind = "the input"
		}
		return fmt.Errorf("%s %s: %w as %s %s %s (hint: another file name)", flag, path, ErrSameFile, kind, f.flag, f.path)
	}
	s.files = append(s.files, n)
	return nil
}

func (s *Set) name(flag, path string, input bool) named {
	n := named{flag: flag, path: path, input: input}
	if fi, err := os.Stat(path); err == nil {
		n.info = fi
	}
	n.abs = resolvedPath(path)
	return n
}

// same reports whether a and b are one file: by device and inode when both
// exist, else by path.
func (a named) same(b named) bool {
	if a.info != nil && b.info != nil {
		return os.SameFile(a.info, b.info)
	}
	return a.abs != "" && a.abs == b.abs
}

// resolvedPath is path made absolute with the links of its directory
// resolved, and of its last element when it is a link: the name a file
// that does not exist yet will have.
func resolvedPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	} else if !errors.Is(err, fs.ErrNotExist) {
		return ""
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(dir, filepath.Base(path))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	return abs
}
