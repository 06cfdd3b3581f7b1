package capture

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// ngWant is a packet that a generated file holds, as the reader must return
// it.
type ngWant struct {
	data     []byte
	wireLen  int
	iface    int
	comments []string
}

// genNgFile builds a valid pcapng file from fuzz bytes, block by block:
// sections, interface descriptions (with or without a snap length), simple
// and enhanced packet blocks (with comments), and blocks the reader skips.
// It returns the file and the packets a reader must return, in order.
func genNgFile(in []byte) ([]byte, []ngWant) {
	next := func() byte {
		if len(in) == 0 {
			return 0
		}
		b := in[0]
		in = in[1:]
		return b
	}
	var (
		f     ngFile
		want  []ngWant
		snaps []uint32 // the current section's interfaces
	)
	f.section()
	f.iface(0)
	snaps = append(snaps, 0)
	for len(in) > 0 {
		switch op := next() % 8; op {
		case 0:
			f.section()
			snaps = snaps[:0]
			f.iface(0)
			snaps = append(snaps, 0)
		case 1:
			if len(snaps) < 16 {
				snap := uint32(next()) * 4 // 0: none
				f.iface(snap)
				snaps = append(snaps, snap)
			}
		case 2: // a simple packet block: cut to the first interface's snap length
			frame := bytes.Repeat([]byte{next()}, int(next()))
			data := frame
			if s := int(snaps[0]); s != 0 && len(data) > s {
				data = data[:s]
			}
			f.spb(frame)
			want = append(want, ngWant{data: data, wireLen: len(frame)})
		case 3: // a block of a type the reader skips
			f.block(0x80000000|uint32(next()), bytes.Repeat([]byte{0xee}, int(next())))
		default: // an enhanced packet block, some with comments
			iface := int(next()) % len(snaps)
			frame := bytes.Repeat([]byte{next()}, int(next())+int(next())*8)
			if s := int(snaps[iface]); s != 0 && len(frame) > s {
				frame = frame[:s]
			}
			var comments []string
			for range next() % 3 {
				comments = append(comments, strings.Repeat("c", int(next()%40)))
			}
			f.epb(uint32(iface), uint64(next()), frame, comments...)
			want = append(want, ngWant{data: frame, wireLen: len(frame), iface: iface, comments: comments})
		}
	}
	return f.b, want
}

// FuzzCaptureBlocks reads pcapng files that a generator builds from the fuzz
// bytes, valid block by block, and checks that the reader returns exactly
// the packets the generator wrote: data, lengths, interface and comments,
// then io.EOF. Cut anywhere inside a block, the file gives the packets of
// the blocks before the cut and an error that names an offset.
func FuzzCaptureBlocks(f *testing.F) {
	f.Add([]byte{4, 0, 10, 0, 2})
	f.Add([]byte{1, 16, 4, 1, 3, 200, 7, 2, 2, 9, 70, 0, 4, 0, 1, 0, 0, 5, 3, 1, 9, 12})
	f.Add([]byte{0, 1, 5, 2, 3, 100, 3, 7, 20, 5, 0, 5, 9, 1, 2, 8, 8})
	f.Fuzz(func(t *testing.T, in []byte) {
		file, want := genNgFile(in)
		check := func(file []byte, cut bool) {
			r, err := Open(bytes.NewReader(file))
			if err != nil {
				if cut {
					return // cut inside the first blocks
				}
				t.Fatalf("open: %v", err)
			}
			ng := r.(*ngReader)
			var i int
			for ; ; i++ {
				data, ci, err := r.ZeroCopyReadPacketData()
				if err != nil {
					switch {
					case !cut && (!errors.Is(err, io.EOF) || i != len(want)):
						t.Fatalf("after %d of %d packets: %v", i, len(want), err)
					case cut && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "offset"):
						t.Fatalf("cut file: error %q names no offset", err)
					}
					return
				}
				if i >= len(want) {
					t.Fatalf("packet %d past the %d written", i, len(want))
				}
				w := want[i]
				var comments []string
				for _, c := range ng.PacketComments() {
					comments = append(comments, string(c))
				}
				if !bytes.Equal(data, w.data) || ci.CaptureLength != len(w.data) || ci.Length != w.wireLen || ci.InterfaceIndex != w.iface || !slices.Equal(comments, w.comments) {
					t.Fatalf("packet %d: %d bytes %+v comments %q; want %d bytes, wire %d, interface %d, comments %q",
						i, len(data), ci, comments, len(w.data), w.wireLen, w.iface, w.comments)
				}
			}
		}
		check(file, false)
		if len(in) > 0 {
			check(file[:int(in[0])*len(file)/256], true)
		}
	})
}
