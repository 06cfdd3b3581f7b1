package output

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xdphash/xdphash/internal/xdptest"
)

func TestMain(m *testing.M) { xdptest.Main(m) }

// mknod makes a character device node of the given major and minor in dir.
func mknod(t *testing.T, dir, name string, major, minor uint32) string {
	t.Helper()
	xdptest.RequireRoot(t)
	path := filepath.Join(dir, name)
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(major<<8|minor)); err != nil {
		t.Fatalf("mknod %s: %v", path, err)
	}
	return path
}

func isCharDevice(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&fs.ModeCharDevice != 0
}

// TestCharDeviceWrittenThrough: an output on a character device (a copy of
// /dev/null) is written to the device, which stays a device.
func TestCharDeviceWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	null := mknod(t, dir, "mynull", 1, 3)
	if err := WriteWith(null, func(w io.Writer) error { _, err := w.Write([]byte("report\n")); return err }); err != nil {
		t.Fatal(err)
	}
	if !isCharDevice(t, null) {
		t.Errorf("%s is no longer a character device", null)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestFailedWriteKeepsDevice: a write that fails (ENOSPC from a copy of
// /dev/full) reports the error and leaves the device where it was.
func TestFailedWriteKeepsDevice(t *testing.T) {
	full := mknod(t, t.TempDir(), "myfull", 1, 7)
	o, err := Create(full)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Commit([]byte("report\n")); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("commit to a full device: %v, want ENOSPC", err)
	}
	if !isCharDevice(t, full) {
		t.Errorf("%s is gone or no longer a device after the failed write", full)
	}
}

// TestFIFOWrittenThrough: an output on a FIFO goes to its reader, and the
// FIFO stays; one without a reader is refused at once, not waited on.
func TestFIFOWrittenThrough(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path); err == nil || !strings.Contains(err.Error(), "nothing reads") {
		t.Errorf("a FIFO without a reader: %v, want refused", err)
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Commit([]byte("through the fifo")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if string(got) != "through the fifo" || err != nil {
		t.Errorf("the reader got %q, %v", got, err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v", path, err)
	}
}

// TestSymlinkKept: an output named by a symlink replaces the file the link
// names and keeps the link; a link to nothing is refused.
func TestSymlinkKept(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	o, err := Create(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Commit([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symlink: %v", link, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("the link's target holds %q, want the output", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("the target's mode %v, want its own 0600 kept", fi.Mode().Perm())
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("missing", dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dangling); err == nil {
		t.Error("a dangling symlink: no error")
	}
}

// TestDirectoryRefused: an output that is a directory fails at Create, so
// before the work it would record.
func TestDirectoryRefused(t *testing.T) {
	if _, err := Create(t.TempDir()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("a directory: %v, want ErrUnsupported", err)
	}
}

// TestAbortKeepsTarget: an output given up leaves the file it would have
// replaced as it was, and no temporary file.
func TestAbortKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	os.WriteFile(path, []byte("old"), 0o644)
	o, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("half"))
	o.Abort()
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after Abort %s holds %q, want old", path, b)
	}
	if err := WriteWith(path, func(io.Writer) error { return errors.New("broken") }); err == nil {
		t.Error("a failing write: no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after a failed write %s holds %q, want old", path, b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %v, want only the output", entries)
	}
}

// TestLongName: an output name of 250 bytes, under the file system's 255,
// can be written: the temporary file's name is short.
func TestLongName(t *testing.T) {
	path := filepath.Join(t.TempDir(), strings.Repeat("n", 245)+".json")
	if err := WriteWith(path, func(w io.Writer) error { _, err := w.Write([]byte("{}")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "{}" {
		t.Errorf("read back %q", b)
	}
}

// TestSetRefusesSameFile: an output that is an input or another output is
// refused, by inode through hard and symbolic links and by path when the
// file does not exist yet.
func TestSetRefusesSameFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcapng")
	os.WriteFile(in, []byte("x"), 0o644)
	hard, soft := filepath.Join(dir, "hard"), filepath.Join(dir, "soft")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, soft); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	null := mknod(t, dir, "null", 1, 3)
	tests := []struct {
		name    string
		outputs []string // the last is judged
		want    bool     // refused
	}{
		{"input itself", []string{in}, true},
		{"input by a hard link", []string{hard}, true},
		{"input by a symlink", []string{soft}, true},
		{"other output, new file", []string{filepath.Join(dir, "x"), filepath.Join(sub, "..", "x")}, true},
		{"other output, existing", []string{in + ".json", in + ".json"}, true},
		{"distinct new files", []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}, false},
		{"one device twice", []string{null, null}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "other output, existing" {
				os.WriteFile(tt.outputs[0], nil, 0o644)
			}
			var s Set
			s.Input("--pcap", in)
			var err error
			for i, o := range tt.outputs {
				if err = s.Output("--out", o); err != nil && i < len(tt.outputs)-1 {
					t.Fatalf("output %s: %v", o, err)
				}
			}
			if got := errors.Is(err, ErrSameFile); got != tt.want {
				t.Errorf("refused %v (%v), want %v", got, err, tt.want)
			}
		})
	}
}

// TestNewDirFresh: two runs that start in the same second get two
// directories.
func TestNewDirFresh(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "xdphash-soak-20260101-000000")
	a, _, err := NewDir(prefix)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := NewDir(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("both runs got %s", a)
	}
}

// TestClaimDir: a directory that holds a run's files, or that another run
// claimed, is refused; a fresh one is claimed and undone.
func TestClaimDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "soak")
	undo, err := ClaimDir(dir, "checks.json", "run.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ClaimDir(dir, "checks.json", "run.json"); !errors.Is(err, ErrInUse) {
		t.Errorf("a claimed directory: %v, want ErrInUse", err)
	}
	undo()
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("undo left %s: %v", dir, err)
	}
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "run.json"), []byte("{}"), 0o644)
	if _, err := ClaimDir(dir, "checks.json", "run.json"); !errors.Is(err, ErrInUse) {
		t.Errorf("a directory with a run.json: %v, want ErrInUse", err)
	}
}

// TestStaleTemp: a writer killed with SIGKILL leaves its temporary file (with
// its lock gone); the next writer of the same output reuses and so removes
// it, and says so (Stale). A temporary file that a live writer holds is not
// touched: a second writer of that output is refused. Whatever happens, one
// output has at most one temporary file.
func TestStaleTemp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "run.pcapng")
	if err := os.WriteFile(TempName(target), []byte("the first 4096 bytes of a killed run"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	if o.Stale != TempName(target) {
		t.Errorf("Stale %q, want %q", o.Stale, TempName(target))
	}
	if _, err := Create(target); err == nil || !strings.Contains(err.Error(), "another xdphash writes this output") {
		t.Errorf("a second writer while the first runs: %v", err)
	}
	if _, err := o.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := o.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "new" {
		t.Errorf("target %q, %v; want only what the new writer wrote", b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if n := len(filepath.Base(TempName(strings.Repeat("n", 250)))); n > 32 {
		t.Errorf("temporary name of %d characters for any output, want short", n)
	}
}
