package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// WriterConfig describes the one interface of a pcapng file that a Writer
// writes: Ethernet frames, nanosecond timestamps.
type WriterConfig struct {
	Iface       string // the interface's name (if_name); "" is pcapgo's default
	SnapLen     int    // the interface's snap length; 0: none
	Application string // the writing program (shb_userappl)
	// Settings, when set, is written as the section's comment (shb
	// opt_comment): how the frames' hashes were computed.
	Settings *Settings
}

// HashAlgorithm is the algorithm of a frame's epb_hash.
type HashAlgorithm uint8

const (
	// HashTwosComplement is pcapng's first, generic code: what a hash
	// without a code of its own (the kernel's SipHash) is written as.
	HashTwosComplement HashAlgorithm = iota
	// HashToeplitz is a NIC's RSS hash.
	HashToeplitz
)

// Frame is one frame to write, with the options of its enhanced packet
// block.
type Frame struct {
	Data    []byte
	WireLen int // the frame's length on the wire; below len(Data): len(Data)
	Time    time.Time

	HasQueue bool // write epb_queue
	Queue    int  // the receive queue

	Inbound bool // write epb_flags, direction inbound

	HasHash       bool // write epb_hash
	Hash          uint32
	HashAlgorithm HashAlgorithm

	// Comment, when not empty, is written as the frame's opt_comment (a
	// Comment's text, for xdphash run --write).
	Comment []byte
}

// Writer writes frames to a pcapng file. It buffers: Flush writes what it
// holds.
type Writer struct {
	ng       *pcapgo.NgWriter
	comments [1]string
	hashes   [1]pcapgo.NgEpbHash
	hashData [4]byte
	inbound  pcapgo.NgEpbFlags
	queue    uint32
}

// NewWriter writes the section and interface headers to w and returns the
// writer of the frames.
func NewWriter(w io.Writer, cfg WriterConfig) (*Writer, error) {
	intf := pcapgo.DefaultNgInterface
	intf.LinkType, intf.SnapLength = layers.LinkTypeEthernet, uint32(max(cfg.SnapLen, 0))
	if cfg.Iface != "" {
		intf.Name = cfg.Iface
	}
	opts := pcapgo.DefaultNgWriterOptions
	if cfg.Application != "" {
		opts.SectionInfo.Application = cfg.Application
	}
	if cfg.Settings != nil {
		if err := cfg.Settings.check(); err != nil {
			return nil, err
		}
		opts.SectionInfo.Comment = cfg.Settings.String()
	}
	ng, err := pcapgo.NewNgWriterInterface(w, intf, opts)
	if err != nil {
		return nil, fmt.Errorf("write pcapng header: %w", err)
	}
	return &Writer{ng: ng, inbound: pcapgo.NgEpbFlags{Direction: pcapgo.NgEpbFlagDirectionInbound}}, nil
}

// Write writes one frame.
func (w *Writer) Write(f *Frame) error {
	var po pcapgo.NgPacketOptions
	if len(f.Comment) > 0 {
		w.comments[0] = string(f.Comment)
		po.Comments = w.comments[:]
	}
	if f.Inbound {
		po.Flags = &w.inbound
	}
	if f.HasQueue {
		w.queue = uint32(f.Queue)
		po.Queue = &w.queue
	}
	if f.HasHash {
		binary.BigEndian.PutUint32(w.hashData[:], f.Hash)
		alg := pcapgo.NgEpbHashAlgorithm2sComplement
		if f.HashAlgorithm == HashToeplitz {
			alg = pcapgo.NgEpbHashAlgorithmToeplitz
		}
		w.hashes[0] = pcapgo.NgEpbHash{Algorithm: alg, Hash: w.hashData[:]}
		po.Hashes = w.hashes[:]
	}
	ci := gopacket.CaptureInfo{Timestamp: f.Time, CaptureLength: len(f.Data), Length: max(f.WireLen, len(f.Data))}
	if err := w.ng.WritePacketWithOptions(ci, f.Data, po); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// Flush writes what the writer holds.
func (w *Writer) Flush() error {
	if err := w.ng.Flush(); err != nil {
		return fmt.Errorf("write pcapng: %w", err)
	}
	return nil
}
