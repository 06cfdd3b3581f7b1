package output

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Errors of this package.
var (
	// ErrUnsupported reports an output that is neither a regular file, a
	// character device nor a FIFO: a directory, a socket.
	ErrUnsupported = errors.New("cannot write to this kind of file")
	// ErrSameFile reports an output that is an input or another output.
	ErrSameFile = errors.New("the same file")
	// ErrInUse reports a directory that holds another run's files.
	ErrInUse = errors.New("holds another run's files")
)

// TempName is the temporary file beside target that its output is written
// to before the rename: one name per target, so that a writer killed with
// SIGKILL leaves at most one, which the next writer of the target finds and
// removes; short (a hash of the target's name), so that an output name as
// long as the file system allows still leaves room for it.
func TempName(target string) string {
	h := fnv.New32a()
	h.Write([]byte(filepath.Base(target)))
	return filepath.Join(filepath.Dir(target), fmt.Sprintf(".xdphash-%08x.tmp", h.Sum32()))
}

// createTemp creates target's temporary file and locks it (flock) for as
// long as it is open. A temporary file that is there and not locked is what
// a killed writer left: it is replaced, and stale says so. One that is
// locked belongs to a writer still running.
func createTemp(target string) (f *os.File, stale bool, err error) {
	name := TempName(target)
	f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		old, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return nil, false, err
		}
		if err := syscall.Flock(int(old.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			old.Close()
			return nil, false, fmt.Errorf("%s: another xdphash writes this output now (%w)", name, err)
		}
		// Locked by this writer now: a killed writer's. Start it afresh.
		if err := old.Truncate(0); err != nil {
			old.Close()
			return nil, false, err
		}
		return old, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(name)
		return nil, false, err
	}
	return f, false, nil
}

// File is an output checked before the work it records (Create) and written
// after it (Commit), or given up (Abort). It is also an io.Writer for
// outputs written as the work goes.
type File struct {
	path    string   // as the user named it
	target  string   // the regular file renamed onto; "" when written through
	f       *os.File // the temporary file, or the special file written through
	perm    fs.FileMode
	written bool // Commit or Abort ran
	// Stale is the temporary file a killed writer of the same output left,
	// which Create found and reused (so removed): "" when there was none.
	Stale string
}

// Create checks that path can take an output, and opens what the output is
// written to: a temporary file beside the regular file path names, or path
// itself when it is a character device or a FIFO (which then must have a
// reader). Nothing at path changes before Commit.
func Create(path string) (*File, error) {
	o := &File{path: path, perm: 0o644}
	fi, err := os.Stat(path) // through symlinks
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("check output %s: a symlink to a missing file (hint: name the file itself)", path)
		}
		o.target = path
	case err != nil:
		return nil, fmt.Errorf("check output %s: %w", path, err)
	case fi.IsDir():
		return nil, fmt.Errorf("check output %s: %w: it is a directory (hint: name a file in it)", path, ErrUnsupported)
	case fi.Mode().IsRegular():
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("check output %s: %w", path, err)
		}
		o.target, o.perm = target, fi.Mode().Perm()
	case fi.Mode()&fs.ModeCharDevice != 0:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("check output %s: %w", path, err)
		}
		o.f = f
		return o, nil
	case fi.Mode()&fs.ModeNamedPipe != 0:
		// Without O_NONBLOCK the open would wait for a reader, forever
		// and deaf to signals if none comes.
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("check output %s: a FIFO that nothing reads (hint: start its reader first)", path)
		}
		if err != nil {
			return nil, fmt.Errorf("check output %s: %w", path, err)
		}
		o.f = f
		return o, nil
	default:
		return nil, fmt.Errorf("check output %s: %w: %s", path, ErrUnsupported, fi.Mode().Type())
	}
	tmp, stale, err := createTemp(o.target)
	if err != nil {
		return nil, fmt.Errorf("check output %s: %w (hint: an existing, writable directory)", path, err)
	}
	o.f = tmp
	if stale {
		o.Stale = tmp.Name()
	}
	return o, nil
}

// Name is the output's name as given to Create.
func (o *File) Name() string { return o.path }

// Write writes p to the output as the work goes; Commit makes it final.
func (o *File) Write(p []byte) (int, error) { return o.f.Write(p) }

var _ io.Writer = (*File)(nil)

// Commit writes data after what Write wrote and makes the output final:
// renames the temporary file into place, or closes the special file. On an
// error the temporary file is removed and whatever was at the output's
// path stays.
func (o *File) Commit(data []byte) error {
	if o.written {
		return fmt.Errorf("write %s: written already", o.path)
	}
	o.written = true
	err := o.commit(data)
	if err != nil && o.target != "" {
		os.Remove(o.f.Name())
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	return nil
}

func (o *File) commit(data []byte) error {
	if len(data) > 0 {
		if _, err := o.f.Write(data); err != nil {
			o.f.Close()
			return err
		}
	}
	if o.target == "" {
		return o.f.Close()
	}
	if err := o.f.Chmod(o.perm); err != nil {
		o.f.Close()
		return err
	}
	if err := o.f.Close(); err != nil {
		return err
	}
	return os.Rename(o.f.Name(), o.target)
}

// Abort gives the output up: it removes the temporary file, or closes the
// special file. It never touches what was at the output's path, and does
// nothing after Commit.
func (o *File) Abort() {
	if o == nil || o.written {
		return
	}
	o.written = true
	o.f.Close()
	if o.target != "" {
		os.Remove(o.f.Name())
	}
}

// WriteWith creates path, writes it with write, and commits it; a failed
// write leaves whatever was at path as it was.
func WriteWith(path string, write func(io.Writer) error) error {
	o, err := Create(path)
	if err != nil {
		return err
	}
	if err := write(o); err != nil {
		o.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return o.Commit(nil)
}
