package capture

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gopacket/gopacket"

	"github.com/xdphash/xdphash/dissect"
)

// CommentPrefix starts the comment (opt_comment) that xdphash run --write
// gives each frame:
//
//	xdphash hash=1a2b3c4d source=device l4=true worker=1 path=fast:eth_ip vlan_tag=0x8100:0x0064 device_hash=1a2b3c4d device_hash_type=l4 rx_timestamp=0
//
// vlan_tag= is empty when the frame came with no metadata VLAN tag;
// device_hash=, device_hash_type= and rx_timestamp= appear when the device
// gave them.
const CommentPrefix = "xdphash "

// Comment is what a frame's comment from xdphash run --write records: what
// the receive loop found for the frame, and the device's metadata.
type Comment struct {
	Hash   uint32          // the hash that steered the frame
	Source string          // what computed it (hash.Source's name)
	L4     bool            // the hash covers the ports
	Worker int             // the worker the frame was steered to
	Path   string          // the dissector's path (dissect.Path's name)
	Tag    dissect.VLANTag // the metadata VLAN tag dissected with; zero: none

	HasDeviceHash  bool
	DeviceHash     uint32
	DeviceHashType string // what the device hashed (kernel.RSSHashType's name)

	HasRxTimestamp bool
	RxTimestamp    uint64 // the device's RX timestamp, ns of its clock
}

// AppendTo appends the comment's text to b.
func (c *Comment) AppendTo(b []byte) []byte {
	b = append(b, CommentPrefix+"hash="...)
	b = appendHex32(b, c.Hash)
	b = append(b, " source="...)
	b = append(b, c.Source...)
	b = append(b, " l4="...)
	b = strconv.AppendBool(b, c.L4)
	b = append(b, " worker="...)
	b = strconv.AppendInt(b, int64(c.Worker), 10)
	b = append(b, " path="...)
	b = append(b, c.Path...)
	b = append(b, " vlan_tag="...)
	b = append(b, c.Tag.String()...)
	if c.HasDeviceHash {
		b = append(b, " device_hash="...)
		b = appendHex32(b, c.DeviceHash)
		b = append(b, " device_hash_type="...)
		b = append(b, c.DeviceHashType...)
	}
	if c.HasRxTimestamp {
		b = append(b, " rx_timestamp="...)
		b = strconv.AppendUint(b, c.RxTimestamp, 10)
	}
	return b
}

// String is the comment's text.
func (c *Comment) String() string { return string(c.AppendTo(nil)) }

// appendHex32 appends v as 8 lower-case hex digits.
func appendHex32(b []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>shift&0xf])
	}
	return b
}

// ParseComment reads a comment that Comment.AppendTo wrote. ok is false for
// a comment that is not xdphash's (it lacks CommentPrefix); a comment with
// the prefix but without hash= or vlan_tag=, or with a field it cannot read,
// is an error that says why (FrameComment takes it for a user's comment).
// Fields it does not know are skipped.
func ParseComment(s string) (c Comment, ok bool, err error) {
	rest, found := strings.CutPrefix(s, CommentPrefix)
	if !found {
		return Comment{}, false, nil
	}
	var haveHash, haveTag bool
	for field := range strings.FieldsSeq(rest) {
		key, v, _ := strings.Cut(field, "=")
		var err error
		switch key {
		case "hash":
			c.Hash, err = parseHex32(v)
			haveHash = true
		case "source":
			c.Source = v
		case "l4":
			c.L4, err = strconv.ParseBool(v)
		case "worker":
			c.Worker, err = strconv.Atoi(v)
		case "path":
			c.Path = v
		case "vlan_tag":
			if v != "" {
				c.Tag, err = dissect.ParseVLANTag(v)
			}
			haveTag = true
		case "device_hash":
			c.DeviceHash, err = parseHex32(v)
			c.HasDeviceHash = true
		case "device_hash_type":
			c.DeviceHashType = v
		case "rx_timestamp":
			c.RxTimestamp, err = strconv.ParseUint(v, 10, 64)
			c.HasRxTimestamp = true
		}
		if err != nil {
			return Comment{}, false, fmt.Errorf("the frame's comment from xdphash run: %s: %w", key, err)
		}
	}
	switch {
	case !haveHash:
		return Comment{}, false, errors.New("the frame's comment from xdphash run has no hash=")
	case !haveTag:
		return Comment{}, false, errors.New("the frame's comment from xdphash run has no vlan_tag=")
	}
	return c, true, nil
}

func parseHex32(s string) (uint32, error) {
	if len(s) != 8 {
		return 0, fmt.Errorf("%q: want 8 hex digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err
}

// Commented is a Reader whose records carry comments: the pcapng reader.
type Commented interface {
	// PacketComments returns the comments of the record the last read
	// returned, valid until the next read.
	PacketComments() [][]byte
}

// FrameComment returns the comment xdphash run --write gave the record that
// r returned last: ok is false when it has none (a pcap file, a frame of
// another tool's). A comment that starts with CommentPrefix but does not
// parse as one of xdphash's is a user's comment, not an error: it is kept in
// the file and not read.
func FrameComment(r Reader) (c Comment, ok bool) {
	c, ok = frameComment(r)
	c.Source, c.Path, c.DeviceHashType = strings.Clone(c.Source), strings.Clone(c.Path), strings.Clone(c.DeviceHashType)
	return c, ok
}

// FrameTag returns the metadata VLAN tag that the comment from xdphash run
// --write of the record r returned last records: what FrameComment reads,
// without allocating.
func FrameTag(r Reader) (dissect.VLANTag, bool) {
	c, ok := frameComment(r)
	return c.Tag, ok
}

// frameComment is FrameComment with strings that view the reader's buffer,
// valid until its next read.
func frameComment(r Reader) (Comment, bool) {
	cr, is := r.(Commented)
	if !is {
		return Comment{}, false
	}
	for _, text := range cr.PacketComments() {
		if !bytes.HasPrefix(text, commentPrefix) {
			continue
		}
		if c, ok, err := ParseComment(unsafe.String(unsafe.SliceData(text), len(text))); ok && err == nil {
			return c, true
		}
	}
	return Comment{}, false
}

var commentPrefix = []byte(CommentPrefix)

// ReadTagged reads the next frame of r and the metadata VLAN tag to dissect
// it with: the one its comment from xdphash run --write records (vlan_tag=),
// or def for a frame without such a comment.
func ReadTagged(r Reader, def dissect.VLANTag) ([]byte, gopacket.CaptureInfo, dissect.VLANTag, error) {
	frame, info, err := r.ZeroCopyReadPacketData()
	if err != nil {
		return frame, info, def, err
	}
	if tag, ok := FrameTag(r); ok {
		return frame, info, tag, nil
	}
	return frame, info, def, nil
}
