package capture

import (
	"encoding/binary"
)

// ngFile builds a little-endian pcapng file block by block, for tests that
// need shapes pcapgo does not write: several sections and interfaces, simple
// packet blocks, comments.
type ngFile struct{ b []byte }

var ngLE = binary.LittleEndian

// block appends a block of type typ with body padded to 4 bytes.
func (f *ngFile) block(typ uint32, body []byte) *ngFile {
	pad := (4 - len(body)%4) % 4
	n := uint32(12 + len(body) + pad)
	f.b = ngLE.AppendUint32(f.b, typ)
	f.b = ngLE.AppendUint32(f.b, n)
	f.b = append(f.b, body...)
	f.b = append(f.b, make([]byte, pad)...)
	f.b = ngLE.AppendUint32(f.b, n)
	return f
}

// section appends a section header, version 1.0, unknown section length.
func (f *ngFile) section() *ngFile {
	body := ngLE.AppendUint32(nil, ngByteOrderMagic)
	body = ngLE.AppendUint16(body, 1)
	body = ngLE.AppendUint16(body, 0)
	body = ngLE.AppendUint64(body, ^uint64(0))
	return f.block(ngSectionHeader, body)
}

// iface appends an Ethernet interface description of snap length snap.
func (f *ngFile) iface(snap uint32) *ngFile {
	body := ngLE.AppendUint16(nil, uint16(1))
	body = ngLE.AppendUint16(body, 0)
	body = ngLE.AppendUint32(body, snap)
	return f.block(ngInterface, body)
}

// ngOption is one option: code and value, padded to 4 bytes.
func ngOption(code uint16, v []byte) []byte {
	o := ngLE.AppendUint16(nil, code)
	o = ngLE.AppendUint16(o, uint16(len(v)))
	o = append(o, v...)
	return append(o, make([]byte, (4-len(v)%4)%4)...)
}

// epb appends an enhanced packet block of frame on interface iface at
// timestamp ts with comments as opt_comment options.
func (f *ngFile) epb(iface uint32, ts uint64, frame []byte, comments ...string) *ngFile {
	body := ngLE.AppendUint32(nil, iface)
	body = ngLE.AppendUint32(body, uint32(ts>>32))
	body = ngLE.AppendUint32(body, uint32(ts))
	body = ngLE.AppendUint32(body, uint32(len(frame)))
	body = ngLE.AppendUint32(body, uint32(len(frame)))
	body = append(body, frame...)
	body = append(body, make([]byte, (4-len(frame)%4)%4)...)
	if len(comments) > 0 {
		for _, c := range comments {
			body = append(body, ngOption(1, []byte(c))...)
		}
		body = append(body, ngOption(ngOptionEnd, nil)...)
	}
	return f.block(ngEnhancedPacket, body)
}

// spb appends a simple packet block of frame.
func (f *ngFile) spb(frame []byte) *ngFile {
	body := ngLE.AppendUint32(nil, uint32(len(frame)))
	return f.block(ngSimplePacket, append(body, frame...))
}
