package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/spf13/cobra"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
)

// dissectOptions are the flags of xdphash dissect.
type dissectOptions struct {
	format outputFormat
	path   dissectPath
	gates  gatesFlag
	stats  bool
	frames bool // print a line per frame: not for --stats alone
	key    hashKeyFlag
	// keyFrom says where the key came from (hashKey.from).
	keyFrom string
	flags   dissect.Flags
	tag     vlanTagFlag
	descent descentFlags
}

// vlanTagFlag is --vlan-tag: the VLAN tag every frame was received with in
// its metadata (dissect.ParseVLANTag); the zero tag when not given.
type vlanTagFlag struct{ tag dissect.VLANTag }

func (f *vlanTagFlag) Set(s string) error {
	t, err := dissect.ParseVLANTag(s)
	if err != nil {
		return err
	}
	f.tag = t
	return nil
}

func (f *vlanTagFlag) String() string { return f.tag.String() }

func (f *vlanTagFlag) Type() string { return "TPID:TCI" }

func newDissectCmd(root *rootOptions) *cobra.Command {
	opts := dissectOptions{format: formatText, path: pathSlow, flags: dissect.DefaultFlags, gates: gatesFlag{gates: dissect.AllGates}}
	cmd := &cobra.Command{
		Use:   "dissect CAPTURE",
		Short: "Dissect and hash every frame of a pcap or pcapng capture",
		Long: `Dissect reads the Ethernet frames of a pcap or pcapng file (CAPTURE, or - for
stdin; gzip-compressed files too) and prints, for each frame, the flow keys the
kernel's flow dissector finds and the hash skb_get_hash computes from them.

Frames are dissected from the first byte of the Ethernet header, as on transmit
(nhoff 14): thoff counts from the start of the frame. The dissector's result is
printed as ok or bad; like skb_get_hash, the keys are hashed either way.

--path slow runs the reference dissector; --path fast tries the per-shape fast
paths whose gates are open (--gates, all by default) and falls back to the slow
path; --path auto (or --gates auto) opens and closes the gates from the traffic.
The keys are byte-identical whatever the path: only the path field differs.
--stats prints the per-shape counters (fast hits, declines, slow-path runs, and
auto mode's decisions) instead of the frames; with an explicit --format it
prints the frames too, and the counters on stderr at the end.

--vlan-tag TPID:TCI dissects every frame as received with that VLAN tag in the
skb's metadata, the way a device with rx-vlan-offload delivers a tagged frame:
the tag is no longer in the bytes, and the kernel's dissector takes it as the
first VLAN tag without reading or skipping anything (a tag still in the frame
is the second). TPID is 0x8100 (or 802.1q) or 0x88a8 (802.1ad); TCI is the
16-bit tag control field, decimal or 0x-hex: priority << 13 | DEI << 12 | VLAN
id, e.g. 0x8100:100 or 802.1ad:0x6064.
A pcapng frame written by xdphash run --write is dissected with the metadata
VLAN tag its comment records (vlan_tag=), whatever --vlan-tag says.

A pcapng capture written by xdphash run --write records the run's hash
settings in its section comment (xdphash-settings hash=... hash_key=...):
without --hash-key, dissect hashes with the key it records, so that the
hashes match the frames' comments (hash=); the first line of --format text
and the log say which key was used and where it came from (--hash-key,
recorded in the capture, or random).

--format jsonl writes one JSON object per frame with the fields index, ts, len,
caplen, ok, path ("slow" or "fast:SHAPE"), keys (the 80-byte struct flow_keys in
hex), n_proto, ip_proto, thoff, addr_type, flags, src, dst, sport, dport,
flow_label, vlan_id, vlan_priority, vlan_tpid, vlan_eth_type, keyid, hash,
l4_hash and metadata_vlan_tag (the --vlan-tag tag as TPID:TCI in hex, "" when
none).`,
		Example: `  xdphash dissect --hash-key 000102030405060708090a0b0c0d0e0f trace.pcapng
  tcpdump -w - -i eth0 | xdphash dissect --format jsonl -
  xdphash dissect --vlan-tag 0x8100:100 frames-from-an-af_xdp-socket.pcap`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.gates.set && opts.path == pathSlow {
				if !cmd.Flags().Changed("path") {
					opts.path = pathFast // --gates alone asks for the fast paths
				} else {
					return &usageError{cmd: cmd, err: errors.New("--gates needs --path fast or auto")}
				}
			}
			if opts.gates.auto {
				opts.path = pathAuto
			}
			opts.frames = !opts.stats || cmd.Flags().Changed("format")
			return runDissect(cmd, root.logger(cmd), args[0], &opts)
		},
	}
	f := cmd.Flags()
	f.Var(newChoiceFlag(&opts.format, formatText, formatJSONL), "format", "output format")
	f.Var(newChoiceFlag(&opts.path, pathSlow, pathFast, pathAuto), "path", "dissector implementation")
	f.Var(&opts.gates, "gates", "fast-path gates of --path fast: shapes (eth_ip,vlan,qinq,pppoe,mpls,ipip,gre; vxlan,gtpu under --descend), all, none or auto (given alone, it sets --path fast)")
	f.BoolVar(&opts.stats, "stats", false, "print the per-shape dissector counters instead of the frames (with --format: after them, on stderr)")
	f.Var(&opts.key, "hash-key", "SipHash key as 32 hex digits (default: the key a capture from xdphash run --write records, else a random key, logged)")
	f.Var(dissectorFlags{&opts.flags}, "flags", "FLOW_DISSECTOR_F_* flags; skb_get_hash passes STOP_AT_FLOW_LABEL")
	opts.descent.register(f)
	f.Var(&opts.tag, "vlan-tag", "dissect every frame as received with this VLAN tag in its metadata: TPID (0x8100, 0x88a8) and TCI")
	return cmd
}

func runDissect(cmd *cobra.Command, log *slog.Logger, name string, opts *dissectOptions) error {
	in, name, err := openInput(cmd, name)
	if err != nil {
		return err
	}
	defer in.Close()

	reader, err := capture.OpenEthernet(in, name)
	if err != nil {
		return err
	}
	key, err := captureKey(log, reader, name, opts.key)
	if err != nil {
		return err
	}
	opts.keyFrom = key.from

	// Everything written for the frames before a bad record reaches the output
	// before the error does.
	out := bufio.NewWriter(cmd.OutOrStdout())
	policy, err := opts.descent.policy()
	if err != nil {
		return &usageError{cmd: cmd, err: err}
	}
	d := dissect.NewDissector(opts.flags, dissect.NoGates)
	d.SetDescent(policy)
	switch opts.path {
	case pathFast:
		d.SetGates(opts.gates.gates)
	case pathAuto:
		d.SetGates(dissect.AllGates)
		d.EnableAuto(dissect.AutoConfig{})
	}
	err = dissectFrames(out, log, reader, name, key.key, d, opts)
	if ferr := out.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("write output: %w", ferr)
	}
	if opts.stats {
		w := cmd.OutOrStdout()
		if opts.frames {
			w = cmd.ErrOrStderr()
		}
		writeDissectorStats(w, d, opts.path)
	}
	return err
}

// openInput opens the capture file name, or stdin for "-", and returns it with
// the name to use in messages.
func openInput(cmd *cobra.Command, name string) (io.ReadCloser, string, error) {
	if name == "-" {
		return io.NopCloser(cmd.InOrStdin()), "stdin", nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, "", err
	}
	return f, name, nil
}

// frameResult is what dissect found for one frame.
type frameResult struct {
	index int
	info  gopacket.CaptureInfo
	path  dissect.Path
	ok    bool // the dissector's result, which skb_get_hash ignores
	keys  *dissect.FlowKeys
	hash  uint32
	l4    bool
	tag   dissect.VLANTag // the metadata VLAN tag the frame was dissected with
}

// dissectFrames dissects and hashes every frame of reader and writes one
// result per frame to out.
func dissectFrames(out *bufio.Writer, log *slog.Logger, reader capture.Reader, name string, key hash.Key, d *dissect.Dissector, opts *dissectOptions) error {
	if opts.format == formatText && opts.frames {
		// The key makes the hashes reproducible: --hash-key takes it back.
		fmt.Fprintf(out, "# xdphash dissect %s: hash key %s (%s), path %s, flags %s",
			name, key, opts.keyFrom, opts.path, dissectorFlags{&opts.flags})
		if !opts.tag.tag.IsZero() {
			fmt.Fprintf(out, ", metadata VLAN tag %s", opts.tag.tag)
		}
		if p := d.Descent(); !p.IsZero() {
			fmt.Fprintf(out, ", descend %s (opt-in)", p)
		}
		out.WriteByte('\n')
	}
	var (
		kernel  = hash.NewKernel(key)
		keys    dissect.FlowKeys
		enc     = json.NewEncoder(out)
		line    []byte
		snapped int // frames captured shorter than they were on the wire
	)
	for index := 0; ; index++ {
		frame, info, tag, err := capture.ReadTagged(reader, opts.tag.tag)
		if err != nil {
			// The pcap reader returns a bare io.EOF also when a record's header
			// was read but none of its data.
			if errors.Is(err, io.EOF) && info.CaptureLength == 0 {
				log.Debug("end of capture", "file", name, "frames", index)
				if snapped > 0 {
					log.Warn("frames were captured shorter than they were on the wire and dissected as captured",
						"file", name, "frames", snapped)
				}
				return nil
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("read frame %d of %s: %w", index, name, err)
		}
		// A frame cut to the snap length is dissected as captured. The kernel
		// had the whole frame: where the dissector would read past the cut, its
		// keys (ports, inner headers) can differ from these.
		if info.CaptureLength < info.Length {
			snapped++
		}

		r := frameResult{index: index, info: info, keys: &keys, tag: tag}
		r.ok, r.path = d.DissectFrameTagged(&keys, frame, r.tag)
		r.hash, r.l4 = kernel.Hash(&keys)
		if !opts.frames {
			continue
		}

		switch opts.format {
		case formatJSONL:
			err = enc.Encode(newFrameRecord(&r))
		default:
			line = appendFrameText(line[:0], &r)
			_, err = out.Write(line)
		}
		if err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
}

// frameRecord is one line of --format jsonl. Every field is always present.
// Ethertypes and the VLAN TPID are strings "0x%04x" as the kernel headers
// write them ("0x0000" when absent); the other numbers are JSON numbers in
// host order. src and dst are "" when the keys hold no IP addresses.
type frameRecord struct {
	Index       int    `json:"index"`             // 0-based record number in the file
	TS          string `json:"ts"`                // capture time, RFC 3339 with nanoseconds, UTC; "" when the file has none
	Len         int    `json:"len"`               // frame length on the wire
	CapLen      int    `json:"caplen"`            // bytes captured and dissected
	OK          bool   `json:"ok"`                // the dissector's result
	Path        string `json:"path"`              // what produced the keys: "slow" or "fast:SHAPE"
	Keys        string `json:"keys"`              // the 80-byte struct flow_keys as dissected (before the hash sorts it), hex
	NProto      string `json:"n_proto"`           // basic.n_proto
	IPProto     uint8  `json:"ip_proto"`          // basic.ip_proto
	THoff       uint16 `json:"thoff"`             // control.thoff, from the start of the frame
	AddrType    string `json:"addr_type"`         // "none", "ipv4", "ipv6" or "tipc"
	Flags       uint32 `json:"flags"`             // control.flags (FLOW_DIS_*)
	Src         string `json:"src"`               // source address
	Dst         string `json:"dst"`               // destination address
	SPort       uint16 `json:"sport"`             // ports.src
	DPort       uint16 `json:"dport"`             // ports.dst
	FlowLabel   uint32 `json:"flow_label"`        // tags.flow_label
	VLANID      uint16 `json:"vlan_id"`           // first VLAN tag's id
	VLANPrio    uint8  `json:"vlan_priority"`     // first VLAN tag's PCP
	VLANTPID    string `json:"vlan_tpid"`         // first VLAN tag's TPID, "0x0000" when untagged
	VLANEthType string `json:"vlan_eth_type"`     // ethertype after the first VLAN tag
	KeyID       uint32 `json:"keyid"`             // GRE key
	Hash        string `json:"hash"`              // skb_get_hash result, 8 hex digits
	L4Hash      bool   `json:"l4_hash"`           // skb->l4_hash
	MetaVLANTag string `json:"metadata_vlan_tag"` // the metadata VLAN tag dissected with, "0x8100:0x0064"; "" when none
}

func newFrameRecord(r *frameResult) *frameRecord {
	k := r.keys
	rec := &frameRecord{
		Index:       r.index,
		Len:         r.info.Length,
		CapLen:      r.info.CaptureLength,
		OK:          r.ok,
		Path:        r.path.String(),
		Keys:        hex.EncodeToString(k[:]),
		NProto:      fmt.Sprintf("0x%04x", k.NProto()),
		IPProto:     k.IPProto(),
		THoff:       k.THoff(),
		AddrType:    k.AddrType().String(),
		Flags:       uint32(k.Flags()),
		Src:         addrString(k.Src()),
		Dst:         addrString(k.Dst()),
		SPort:       k.SrcPort(),
		DPort:       k.DstPort(),
		FlowLabel:   k.FlowLabel(),
		VLANID:      k.VLANID(),
		VLANPrio:    k.VLANPriority(),
		VLANTPID:    fmt.Sprintf("0x%04x", k.VLANTPID()),
		VLANEthType: fmt.Sprintf("0x%04x", k.VLANEthType()),
		KeyID:       k.KeyID(),
		Hash:        fmt.Sprintf("%08x", r.hash),
		L4Hash:      r.l4,
		MetaVLANTag: r.tag.String(),
	}
	if !r.info.Timestamp.IsZero() {
		rec.TS = r.info.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	return rec
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// appendFrameText appends the --format text line of r: its index, the
// dissector's result, the keys (dissect.FlowKeys.AppendTo), a capture
// shorter than the frame, and the hash:
//
//	0 ok ipv4 198.18.0.1:1025 > 198.18.0.2:80 proto 6 thoff 34 hash aa09f22d l4
func appendFrameText(b []byte, r *frameResult) []byte {
	b = strconv.AppendInt(b, int64(r.index), 10)
	if r.ok {
		b = append(b, " ok "...)
	} else {
		b = append(b, " bad "...)
	}
	b = r.keys.AppendTo(b)
	if r.info.CaptureLength < r.info.Length {
		b = append(b, " caplen "...)
		b = strconv.AppendInt(b, int64(r.info.CaptureLength), 10)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(r.info.Length), 10)
	}
	b = append(b, " hash "...)
	b = fmt.Appendf(b, "%08x", r.hash)
	if r.l4 {
		b = append(b, " l4"...)
	}
	return append(b, '\n')
}
