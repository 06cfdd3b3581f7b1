package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// maxDirTries bounds the names NewDir tries.
const maxDirTries = 1000

// NewDir creates a directory named prefix, or prefix-2, prefix-3, ... when
// that exists: a fresh directory, never one another run made, even when
// two runs start in the same second. undo removes it while it is empty.
func NewDir(prefix string) (dir string, undo func(), err error) {
	for i := 1; i <= maxDirTries; i++ {
		dir = prefix
		if i > 1 {
			dir = prefix + "-" + strconv.Itoa(i)
		}
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, func() { os.Remove(dir) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", nil, fmt.Errorf("create output directory %s: %w", dir, err)
		}
	}
	return "", nil, fmt.Errorf("create output directory %s: %d names taken", prefix, maxDirTries)
}

// ClaimDir makes sure dir exists and takes files, creating it when it does
// not, and claims it for one run: it creates the file named claim
// exclusively, so that no other run that claims dir the same way can use it,
// and refuses (ErrInUse) a directory that holds claim or any of the other
// names, the files of an earlier run. The run then writes its files there,
// claim among them. undo removes claim, and dir if ClaimDir made it, while
// the run has written nothing else.
func ClaimDir(dir, claim string, names ...string) (undo func(), err error) {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("check output directory %s: %w", dir, err)
	}
	made := errors.Is(statErr, fs.ErrNotExist)
	undoDir := func() {
		if made {
			os.Remove(dir) // fails, as it should, once dir holds files
		}
	}
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			undoDir()
			return nil, fmt.Errorf("output directory %s: %w: %s (hint: another --out, or remove them)", dir, ErrInUse, n)
		}
	}
	path := filepath.Join(dir, claim)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		undoDir()
		return nil, fmt.Errorf("output directory %s: %w: %s (hint: another --out, or remove them)", dir, ErrInUse, claim)
	}
	if err != nil {
		undoDir()
		return nil, fmt.Errorf("check output directory %s: %w (hint: a writable directory)", dir, err)
	}
	f.Close()
	return func() {
		if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
			os.Remove(path)
		}
		undoDir()
	}, nil
}
