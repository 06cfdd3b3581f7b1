// Package cpio reads and writes newc cpio archives: the initramfs the
// virtio lab boots its guest with, and the results the guest sends back.
package cpio

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"strconv"
)

// The newc cpio format (the kernel's initramfs format, see
// Documentation/driver-api/early-userspace/buffer-format.rst): each entry is
// a 110-byte ASCII header of "070701" and thirteen 8-digit hex fields, the
// name with its NUL, padding to 4 bytes, the data, padding to 4 bytes. The
// archive ends with an entry named "TRAILER!!!".
const (
	cpioMagic    = "070701"
	cpioHeadLen  = 110
	cpioTrailer  = "TRAILER!!!"
	cpioMaxName  = 4096
	cpioMaxEntry = 1 << 30
)

// Mode bits of a cpio entry, as stat's st_mode has them.
const (
	modeDir  = 0o040000
	modeFile = 0o100000
	modeLink = 0o120000
	modeChar = 0o020000
)

// Writer writes a newc cpio archive.
type Writer struct {
	w    *bufio.Writer
	ino  uint32
	err  error
	done bool
}

// NewWriter writes an archive to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Dir adds a directory.
func (c *Writer) Dir(name string, perm fs.FileMode) error {
	return c.entry(name, modeDir|uint32(perm.Perm()), 0, 0, nil)
}

// File adds a regular file holding data.
func (c *Writer) File(name string, perm fs.FileMode, data []byte) error {
	return c.entry(name, modeFile|uint32(perm.Perm()), 0, 0, data)
}

// Symlink adds a symbolic link name pointing to target.
func (c *Writer) Symlink(name, target string) error {
	return c.entry(name, modeLink|0o777, 0, 0, []byte(target))
}

// CharDev adds a character device node.
func (c *Writer) CharDev(name string, perm fs.FileMode, major, minor uint32) error {
	return c.entry(name, modeChar|uint32(perm.Perm()), major, minor, nil)
}

// Close writes the trailer and flushes; it does not close the underlying
// writer.
func (c *Writer) Close() error {
	if !c.done {
		c.done = true
		if err := c.entry(cpioTrailer, 0, 0, 0, nil); err != nil {
			return err
		}
		c.err = c.w.Flush()
	}
	return c.err
}

func (c *Writer) entry(name string, mode, rmajor, rminor uint32, data []byte) error {
	if c.err != nil {
		return c.err
	}
	if name == "" || len(name) >= cpioMaxName || name[0] == '/' {
		c.err = fmt.Errorf("cpio entry %q: want a relative name shorter than %d bytes", name, cpioMaxName)
		return c.err
	}
	if len(data) > cpioMaxEntry {
		c.err = fmt.Errorf("cpio entry %q: %d bytes, more than %d", name, len(data), cpioMaxEntry)
		return c.err
	}
	c.ino++
	nlink := uint32(1)
	if mode&0o170000 == modeDir {
		nlink = 2
	}
	fields := []uint32{c.ino, mode, 0, 0, nlink, 0, uint32(len(data)), 0, 0, rmajor, rminor, uint32(len(name) + 1), 0}
	var head [cpioHeadLen]byte
	copy(head[:], cpioMagic)
	for i, v := range fields {
		copy(head[6+8*i:], fmt.Sprintf("%08x", v))
	}
	c.w.Write(head[:])
	c.w.WriteString(name)
	c.w.WriteByte(0)
	c.pad(cpioHeadLen + len(name) + 1)
	c.w.Write(data)
	_, c.err = c.w.Write(make([]byte, pad4(len(data))))
	return c.err
}

func (c *Writer) pad(n int) { c.w.Write(make([]byte, pad4(n))) }

func pad4(n int) int { return (4 - n%4) % 4 }

// Entry is one entry of an archive Read read.
type Entry struct {
	Name string
	Mode uint32
	Data []byte
}

// Read reads a newc archive up to its trailer, at most limit bytes of
// entry data in all.
func Read(r io.Reader, limit int) ([]Entry, error) {
	br := bufio.NewReader(r)
	var out []Entry
	total := 0
	for {
		var head [cpioHeadLen]byte
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return out, fmt.Errorf("read cpio header: %w", err)
		}
		if string(head[:6]) != cpioMagic {
			return out, fmt.Errorf("read cpio: bad magic %q", head[:6])
		}
		var f [13]uint32
		for i := range f {
			v, err := strconv.ParseUint(string(head[6+8*i:14+8*i]), 16, 32)
			if err != nil {
				return out, fmt.Errorf("read cpio header field %d: %w", i, err)
			}
			f[i] = uint32(v)
		}
		size, nameLen := int(f[6]), int(f[11])
		if nameLen < 1 || nameLen > cpioMaxName {
			return out, fmt.Errorf("read cpio: name of %d bytes", nameLen)
		}
		if total += size; total > limit {
			return out, fmt.Errorf("read cpio: more than %d bytes of data", limit)
		}
		name := make([]byte, nameLen+pad4(cpioHeadLen+nameLen))
		if _, err := io.ReadFull(br, name); err != nil {
			return out, fmt.Errorf("read cpio name: %w", err)
		}
		n := string(name[:nameLen-1])
		if n == cpioTrailer {
			return out, nil
		}
		data := make([]byte, size+pad4(size))
		if _, err := io.ReadFull(br, data); err != nil {
			return out, fmt.Errorf("read cpio entry %q: %w", n, err)
		}
		out = append(out, Entry{Name: n, Mode: f[1], Data: data[:size]})
	}
}
