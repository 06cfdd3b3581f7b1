package cpio

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Dir("dev", 0o755)
	w.CharDev("dev/console", 0o600, 5, 1)
	w.File("init", 0o755, []byte("#!/bin/true\n"))
	w.File("a/b/odd", 0o644, []byte("12345"))
	w.Symlink("lib64", "lib")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive of %d bytes: entries are padded to 4", buf.Len())
	}
	got, err := Read(bytes.NewReader(buf.Bytes()), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"dev", modeDir | 0o755, nil}, {"dev/console", modeChar | 0o600, nil},
		{"init", modeFile | 0o755, []byte("#!/bin/true\n")}, {"a/b/odd", modeFile | 0o644, []byte("12345")},
		{"lib64", modeLink | 0o777, []byte("lib")},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].Mode != want[i].Mode || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("entry %d: %q %o %q, want %q %o %q", i, got[i].Name, got[i].Mode, got[i].Data, want[i].Name, want[i].Mode, want[i].Data)
		}
	}
	// GNU cpio, where it is installed, reads the archive as the kernel does.
	if _, err := exec.LookPath("cpio"); err == nil {
		cmd := exec.Command("cpio", "-it", "--quiet")
		cmd.Stdin = bytes.NewReader(buf.Bytes())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("cpio -it: %v", err)
		}
		if names := strings.Fields(string(out)); strings.Join(names, " ") != "dev dev/console init a/b/odd lib64" {
			t.Errorf("cpio -it lists %q", names)
		}
	}
}

func TestWriterRefusesBadNames(t *testing.T) {
	for _, name := range []string{"", "/abs", strings.Repeat("x", 5000)} {
		w := NewWriter(&bytes.Buffer{})
		if err := w.File(name, 0o644, nil); err == nil {
			t.Errorf("File(%.20q) took the name", name)
		}
	}
}

func TestReadLimits(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.File("big", 0o644, make([]byte, 1000))
	w.Close()
	if _, err := Read(bytes.NewReader(buf.Bytes()), 999); err == nil {
		t.Error("Read took 1000 bytes of data with a limit of 999")
	}
	if _, err := Read(bytes.NewReader(buf.Bytes()[:200]), 1<<20); err == nil {
		t.Error("Read took a truncated archive")
	}
}
