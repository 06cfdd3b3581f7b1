package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel/feature"
)

// XDPMetadataFeatures is the set of XDP RX metadata kfuncs a driver
// implements, as the netdev netlink family reports it (enum
// netdev_xdp_rx_metadata, `ynl --family netdev --do dev-get`).
type XDPMetadataFeatures uint64

// The bits of XDPMetadataFeatures.
const (
	XDPMetaTimestamp XDPMetadataFeatures = 1 << 0 // bpf_xdp_metadata_rx_timestamp
	XDPMetaHash      XDPMetadataFeatures = 1 << 1 // bpf_xdp_metadata_rx_hash
	XDPMetaVLANTag   XDPMetadataFeatures = 1 << 2 // bpf_xdp_metadata_rx_vlan_tag
)

// String lists the features as ynl names them ("timestamp|hash|vlan-tag"),
// "none" for none.
func (f XDPMetadataFeatures) String() string {
	return bitNames(uint64(f), []string{"timestamp", "hash", "vlan-tag"}, "none")
}

// RedirectChoice says which program an XSKRedirect runs and why: a value the
// caller can print.
type RedirectChoice struct {
	// Metadata is true for the device-bound program that writes XDPMetadata
	// in front of every frame, false for the plain redirect.
	Metadata bool
	// Features are the kfuncs the device implements (0 when unknown).
	Features XDPMetadataFeatures
	// Reason says why this program was chosen.
	Reason string
}

// String reads "metadata program (device gives timestamp|hash|vlan-tag)" or
// "plain program: REASON".
func (c RedirectChoice) String() string {
	if c.Metadata {
		return fmt.Sprintf("metadata program (device gives %v)", c.Features)
	}
	if c.Reason == "" {
		return "plain program"
	}
	return "plain program: " + c.Reason
}

// LoadXSKMetadataRedirect loads a redirect program for interface ifindex
// with a slot for each of queues receive queues, to be attached in mode. It
// chooses the XDP metadata program where it can run: native mode (the kernel
// refuses device-bound programs in generic mode), a kernel with the
// metadata kfuncs (HaveXDPMetadataKfuncs) and a driver that implements at
// least one of them (XDPMetadataFeaturesOf). Otherwise, or when the kernel
// refuses the metadata program, it loads the plain program of
// LoadXSKRedirect; Choice says which and why. The metadata program can only
// be attached to ifindex, in native mode.
func LoadXSKMetadataRedirect(ifindex, queues int, mode XDPMode) (*XSKRedirect, error) {
	r, err := LoadXSKRedirect(queues)
	if err != nil {
		return nil, err
	}
	r.choice = chooseRedirect(ifindex, mode)
	if !r.choice.Metadata {
		return r, nil
	}
	prog, err := newMetadataProgram(r.xsks, ifindex)
	if err != nil {
		r.choice = RedirectChoice{Features: r.choice.Features, Reason: err.Error()}
		return r, nil
	}
	r.prog.Close()
	r.prog, r.bound = prog, ifindex
	return r, nil
}

// chooseRedirect decides between the metadata and the plain program.
func chooseRedirect(ifindex int, mode XDPMode) RedirectChoice {
	if mode != XDPNative {
		return RedirectChoice{Reason: fmt.Sprintf("%v mode: the XDP metadata kfuncs need a device-bound program, which runs only in native mode", mode)}
	}
	if err := HaveXDPMetadataKfuncs(); err != nil {
		return RedirectChoice{Reason: err.Error()}
	}
	f, err := XDPMetadataFeaturesOf(ifindex)
	switch {
	case err != nil:
		return RedirectChoice{Reason: err.Error()}
	case f&(XDPMetaTimestamp|XDPMetaHash|XDPMetaVLANTag) == 0:
		return RedirectChoice{Features: f, Reason: fmt.Sprintf("the driver of %s implements no XDP RX metadata kfunc", ifname(ifindex))}
	}
	return RedirectChoice{Metadata: true, Features: f}
}

// Choice says which program the redirect runs and why.
func (r *XSKRedirect) Choice() RedirectChoice { return r.choice }

// metadataKfuncs are the kfuncs the metadata program calls, with the number
// of arguments the program passes each (include/net/xdp.h).
var metadataKfuncs = []struct {
	name string
	args int
}{
	{"bpf_xdp_metadata_rx_timestamp", 2}, // (ctx, u64 *timestamp), Linux 6.3
	{"bpf_xdp_metadata_rx_hash", 3},      // (ctx, u32 *hash, enum xdp_rss_hash_type *type), 6.3
	{"bpf_xdp_metadata_rx_vlan_tag", 3},  // (ctx, __be16 *tpid, u16 *tci), 6.8
}

// metadataKfuncsTest is the probe of the XDP RX metadata kfuncs.
var metadataKfuncsTest = feature.NewTest("XDP RX metadata kfuncs", "6.8", func() error {
	_, err := metadataKfuncCalls()
	return err
})

// HaveXDPMetadataKfuncs reports whether the kernel has the three XDP RX
// metadata kfuncs the metadata program calls (Linux 6.8: the VLAN one is the
// youngest; the hash and timestamp ones came in 6.3), looked up in the
// kernel's BTF: nil if it has, a *feature.UnsupportedFeatureError
// (ErrNotSupported) if not. Only those answers are cached: a BTF that could
// not be read for another reason than its absence is probed again. Whether a
// driver implements them is XDPMetadataFeaturesOf's question; a device-bound
// program cannot be loaded to probe without a device that has native XDP.
func HaveXDPMetadataKfuncs() error { return metadataKfuncsTest.Result() }

// metadataKfuncCalls returns a call instruction for each of metadataKfuncs,
// in order. The kernel's BTF names each kfunc by type ID; a call with
// src_reg BPF_PSEUDO_KFUNC_CALL and offset 0 (vmlinux, not a module) takes
// that ID as its immediate.
func metadataKfuncCalls() ([]asm.Instruction, error) {
	spec, err := btf.LoadKernelSpec()
	switch {
	case errors.Is(err, btf.ErrNotSupported) || errors.Is(err, os.ErrNotExist):
		return nil, feature.Missing("no kernel BTF (CONFIG_DEBUG_INFO_BTF): %w", err)
	case err != nil:
		return nil, fmt.Errorf("XDP metadata kfuncs: read the kernel's BTF: %w", err)
	}
	calls := make([]asm.Instruction, len(metadataKfuncs))
	for i, k := range metadataKfuncs {
		var fn *btf.Func
		if err := spec.TypeByName(k.name, &fn); err != nil {
			return nil, feature.Missing("%s is not in the kernel's BTF: %w", k.name, err)
		}
		proto, ok := fn.Type.(*btf.FuncProto)
		if !ok || len(proto.Params) != k.args {
			return nil, feature.Missing("%s in the kernel's BTF does not take %d arguments", k.name, k.args)
		}
		id, err := spec.TypeID(fn)
		if err != nil {
			return nil, fmt.Errorf("XDP metadata kfuncs: %s: %w", k.name, err)
		}
		calls[i] = asm.Instruction{
			OpCode:   asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call),
			Src:      asm.PseudoKfuncCall,
			Constant: int64(id),
		}
	}
	return calls, nil
}

// xdpMDDataMeta is the offset of data_meta in struct xdp_md (see
// xdpMDRxQueueIndex).
const xdpMDDataMeta = 8

// metadataProgram is the metadata program's body: the plain redirect (see
// LoadXSKRedirect) after writing XDPMetadata in front of the frame. calls are
// metadataKfuncCalls' instructions.
//
// Every kfunc reads before anything is written in front of the frame: a
// driver may keep what the kfuncs report in the very bytes that
// bpf_xdp_adjust_meta hands out (virtio-net keeps its hash report in the
// virtio header just before the packet). So the kfuncs write into the
// stack, and the metadata is copied in front of the frame last.
//
// When every kfunc failed there is nothing to tell, and when
// bpf_xdp_adjust_meta fails (a driver without metadata support, or no
// headroom) nothing can be told: either way the frame is redirected without
// metadata; the socket sees no magic and reports it as not Valid.
func metadataProgram(xsksFD int, calls []asm.Instruction) asm.Instructions {
	const (
		ctx  = asm.R6 // the xdp_md, kept across calls
		meta = asm.R7 // data_meta, checked to hold XDPMetadataLen bytes
		data = asm.R8
		told = asm.R9 // 1 once a kfunc succeeded: the record tells something
		// buf is the stack offset of the metadata as it is built: the
		// XDPMetadataLen bytes below the frame pointer.
		buf = -XDPMetadataLen
	)
	// at sets R(reg) to the address of byte off of buf.
	at := func(reg asm.Register, off int32) asm.Instructions {
		return asm.Instructions{asm.Mov.Reg(reg, asm.RFP), asm.Add.Imm(reg, buf+off)}
	}
	insns := asm.Instructions{
		asm.Mov.Reg(ctx, asm.R1),
		asm.Mov.Imm(told, 0),
		// A kfunc that fails writes nothing: start from zeros.
		asm.Mov.Imm(asm.R1, 0),
		asm.StoreMem(asm.RFP, buf, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, buf+8, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, buf+16, asm.R1, asm.DWord),
		asm.StoreMem(asm.RFP, buf+24, asm.R1, asm.DWord),
		// bpf_xdp_metadata_rx_timestamp(ctx, &buf->timestamp)
		asm.Mov.Reg(asm.R1, ctx),
	}
	insns = append(insns, at(asm.R2, metaTimestamp)...)
	insns = append(insns,
		calls[0],
		asm.StoreMem(asm.RFP, buf+metaTSErr, asm.R0, asm.Half),
		asm.JNE.Imm(asm.R0, 0, "hash"),
		asm.Mov.Imm(told, 1),
		// bpf_xdp_metadata_rx_hash(ctx, &buf->hash, &buf->hash_type)
		asm.Mov.Reg(asm.R1, ctx).WithSymbol("hash"))
	insns = append(insns, at(asm.R2, metaHash)...)
	insns = append(insns, at(asm.R3, metaHashType)...)
	insns = append(insns,
		calls[1],
		asm.StoreMem(asm.RFP, buf+metaHashErr, asm.R0, asm.Half),
		asm.JNE.Imm(asm.R0, 0, "vlan"),
		asm.Mov.Imm(told, 1),
		// bpf_xdp_metadata_rx_vlan_tag(ctx, &buf->tpid, &buf->tci)
		asm.Mov.Reg(asm.R1, ctx).WithSymbol("vlan"))
	insns = append(insns, at(asm.R2, metaVLANProto)...)
	insns = append(insns, at(asm.R3, metaVLANTCI)...)
	insns = append(insns,
		calls[2],
		asm.StoreMem(asm.RFP, buf+metaVLANErr, asm.R0, asm.Half),
		asm.JNE.Imm(asm.R0, 0, "vlan_failed"),
		asm.Mov.Imm(told, 1),
		// Nothing to tell when every kfunc failed: the frame goes without
		// a record, which spares the kernel the metadata's copy.
		asm.JEq.Imm(told, 0, "redirect").WithSymbol("vlan_failed"),
		asm.StoreImm(asm.RFP, buf+metaMagic, xdpMetadataMagic, asm.Word),
		// bpf_xdp_adjust_meta(ctx, -XDPMetadataLen)
		asm.Mov.Reg(asm.R1, ctx),
		asm.Mov.Imm(asm.R2, -XDPMetadataLen),
		asm.FnXdpAdjustMeta.Call(),
		asm.JNE.Imm(asm.R0, 0, "redirect"),
		// The verifier wants data_meta + len <= data before any access.
		asm.LoadMem(meta, ctx, xdpMDDataMeta, asm.Word),
		asm.LoadMem(data, ctx, xdpMDData, asm.Word),
		asm.Mov.Reg(asm.R2, meta),
		asm.Add.Imm(asm.R2, XDPMetadataLen),
		asm.JGT.Reg(asm.R2, data, "redirect"),
	)
	for off := int16(0); off < XDPMetadataLen; off += 8 {
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.RFP, buf+off, asm.DWord),
			asm.StoreMem(meta, off, asm.R1, asm.DWord))
	}
	insns = append(insns,
		// return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
		asm.LoadMem(asm.R2, ctx, xdpMDRxQueueIndex, asm.Word).WithSymbol("redirect"),
		asm.LoadMapPtr(asm.R1, xsksFD),
		asm.Mov.Imm(asm.R3, xdpPass),
		asm.FnRedirectMap.Call(),
		asm.Return(),
	)
	return insns
}

// newMetadataProgram loads the metadata program bound to ifindex, redirecting
// to xsks.
func newMetadataProgram(xsks *ebpf.Map, ifindex int) (*ebpf.Program, error) {
	calls, err := metadataKfuncCalls()
	if err != nil {
		return nil, fmt.Errorf("load XDP metadata program for %s: %w", ifname(ifindex), err)
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "xdphash_xskmeta",
		Type:         ebpf.XDP,
		AttachType:   ebpf.AttachXDP,
		Ifindex:      uint32(ifindex),
		Flags:        unix.BPF_F_XDP_DEV_BOUND_ONLY,
		Instructions: metadataProgram(xsks.FD(), calls),
		// The verifier lets only GPL-compatible programs call kfuncs.
		License: "Dual MIT/GPL",
	})
	switch {
	case err == nil:
		return prog, nil
	case errors.Is(err, unix.EOPNOTSUPP):
		return nil, fmt.Errorf("load XDP metadata program for %s: %w: the driver has no native XDP: %w", ifname(ifindex), ErrNotSupported, err)
	default:
		return nil, fmt.Errorf("load XDP metadata program for %s: %w", ifname(ifindex), err)
	}
}

// The netdev generic netlink family (include/uapi/linux/netdev.h).
const (
	netdevFamily                     = "netdev"
	netdevCmdDevGet                  = 1
	netdevADevIfindex                = 1
	netdevADevXDPRxMetadataFeatures  = 5
	netdevFamilyVersion              = 1
	netdevXDPRxMetadataFeaturesSince = "Linux 6.7"
)

// genlHeader is struct genlmsghdr: command, version and two reserved zero
// bytes. nl.Genlmsg serializes the two bytes after its two fields from
// whatever memory follows them, which the kernel refuses (EINVAL,
// "genlmsghdr.reserved field is not 0") when they are not zero.
type genlHeader [nl.SizeofGenlmsg]byte

func (h genlHeader) Len() int          { return len(h) }
func (h genlHeader) Serialize() []byte { return h[:] }

// XDPMetadataFeaturesOf asks the kernel which XDP RX metadata kfuncs the
// driver of interface ifindex (in the calling thread's network namespace)
// implements: NETDEV_CMD_DEV_GET of the netdev generic netlink family, its
// xdp-rx-metadata-features attribute. A kernel without the family or the
// attribute gives an error wrapping ErrNotSupported.
func XDPMetadataFeaturesOf(ifindex int) (XDPMetadataFeatures, error) {
	fam, err := netlink.GenlFamilyGet(netdevFamily)
	if err != nil {
		return 0, fmt.Errorf("read XDP RX metadata features of %s: %w: no netdev netlink family (Linux 6.3): %w", ifname(ifindex), ErrNotSupported, err)
	}
	req := nl.NewNetlinkRequest(int(fam.ID), 0)
	req.AddData(genlHeader{netdevCmdDevGet, netdevFamilyVersion})
	req.AddData(nl.NewRtAttr(netdevADevIfindex, nl.Uint32Attr(uint32(ifindex))))
	msgs, err := req.Execute(unix.NETLINK_GENERIC, 0)
	if err != nil {
		return 0, fmt.Errorf("read XDP RX metadata features of %s: %w", ifname(ifindex), err)
	}
	for _, m := range msgs {
		if len(m) < nl.SizeofGenlmsg {
			continue
		}
		attrs, err := nl.ParseRouteAttr(m[nl.SizeofGenlmsg:])
		if err != nil {
			return 0, fmt.Errorf("read XDP RX metadata features of %s: %w", ifname(ifindex), err)
		}
		for _, a := range attrs {
			if a.Attr.Type == netdevADevXDPRxMetadataFeatures && len(a.Value) == 8 {
				return XDPMetadataFeatures(binary.NativeEndian.Uint64(a.Value)), nil
			}
		}
	}
	return 0, fmt.Errorf("read XDP RX metadata features of %s: %w: the kernel does not report them (%s)", ifname(ifindex), ErrNotSupported, netdevXDPRxMetadataFeaturesSince)
}

// Metadata is the XDPMetadata the program wrote in front of frame i of the
// last Receive: the zero XDPMetadata when the socket is registered with the
// plain program, or when the program could not write it. It does not
// allocate and makes no system call.
func (s *XSK) Metadata(i int) XDPMetadata {
	if !s.metadata {
		return XDPMetadata{}
	}
	addr := s.held[i].Addr
	if addr&^s.chunkMask < XDPMetadataLen {
		return XDPMetadata{}
	}
	return ParseXDPMetadata(s.umem[addr-XDPMetadataLen : addr])
}

// AppendMetadata appends the XDPMetadata of each frame of the last Receive,
// in order, to dst: with the capacity for a batch, it does not allocate.
func (s *XSK) AppendMetadata(dst []XDPMetadata) []XDPMetadata {
	for i := range s.held {
		dst = append(dst, s.Metadata(i))
	}
	return dst
}

// HasMetadata tells whether the socket's frames come from the metadata
// program (it is registered with an XSKRedirect whose Choice is Metadata).
func (s *XSK) HasMetadata() bool { return s.metadata }

// forgetMetadata clears the magic of the metadata in front of the frame at
// addr, which goes back to the kernel: the next frame in that UMEM frame
// shows metadata only if the program writes it again.
func (s *XSK) forgetMetadata(addr uint64) {
	if addr&^s.chunkMask >= XDPMetadataLen {
		binary.NativeEndian.PutUint32(s.umem[addr-XDPMetadataLen+metaMagic:addr], 0)
	}
}
