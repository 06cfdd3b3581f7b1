package kernel

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel/feature"
)

// VLANPush is a TCX egress program on one interface that gives every other
// frame leaving it a hardware-accelerated VLAN tag with bpf_skb_vlan_push:
// the tag travels in the skb's metadata (skb->vlan_proto, vlan_tci), not in
// the frame's bytes, as a NIC that inserts tags on transmit would see it. On
// a veth pair the other end receives the frame untagged, with the tag in its
// metadata, as a NIC with rx-vlan-offload delivers it: what the XDP metadata
// program reads with bpf_xdp_metadata_rx_vlan_tag.
//
// The rule: the program numbers the frames it sees from 0, in the order they
// reach it (an atomic counter shared by all CPUs), and tags the even ones.
// A single sending thread therefore gets frames 0, 2, 4, ... of its sequence
// tagged. A frame that already carries a hardware tag gets that tag moved
// into its bytes and the new one outside (802.1ad stacking, the helper's
// rule).
//
// Only frames that pass the interface's egress hook are seen: sockets, and
// AF_PACKET without PACKET_QDISC_BYPASS. PacketSender bypasses the qdisc
// layer and with it this hook unless told otherwise (ThroughQdisc); XDP live
// frames and AF_XDP transmissions never reach it.
//
// The program is attached through a BPF link (TCX, Linux 6.6), which the
// kernel removes when the process dies.
type VLANPush struct {
	prog     *ebpf.Program
	counters *ebpf.Map
	link     link.Link
}

// Layout of the counters map's one value.
const (
	vlanPushSeen   = 0 // frames seen
	vlanPushPushed = 8 // frames tagged (the helper succeeded)
)

// vlanPushNeeds is what the program needs of the kernel.
const vlanPushNeeds = "needs SCHED_CLS programs with bpf_skb_vlan_push and atomic fetch-and-add (Linux 5.12)"

// tcxNext is TCX_NEXT: the program has no verdict, the next one decides.
const tcxNext = -1

// AttachVLANPush loads the program, tagging with TPID tpid (0x8100 or
// 0x88a8) and TCI tci (priority, DEI and VLAN ID, as in the frame), and
// attaches it to the egress of interface ifindex in the calling thread's
// network namespace. Close detaches it. A kernel without TCX (Linux 6.6)
// gives a *feature.UnsupportedFeatureError.
func AttachVLANPush(ifindex int, tpid, tci uint16) (_ *VLANPush, err error) {
	if tpid != unix.ETH_P_8021Q && tpid != unix.ETH_P_8021AD {
		// The helper silently turns any other TPID into 0x8100.
		return nil, fmt.Errorf("attach VLAN push program: TPID %#04x: want 0x8100 or 0x88a8", tpid)
	}
	memlockErr := removeMemlock()
	v := &VLANPush{}
	defer func() {
		if err != nil {
			v.Close()
		}
	}()
	v.counters, err = ebpf.NewMap(&ebpf.MapSpec{
		Name:       "xdphash_vlanctr",
		Type:       ebpf.Array,
		KeySize:    4,
		ValueSize:  16,
		MaxEntries: 1,
	})
	if err != nil {
		return nil, loadError("create counters map", vlanPushNeeds, err, memlockErr)
	}
	v.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "xdphash_vlanpush",
		Type:         ebpf.SchedCLS,
		AttachType:   ebpf.AttachTCXEgress,
		Instructions: vlanPushProgram(v.counters.FD(), tpid, tci),
	})
	if err != nil {
		return nil, loadError("load VLAN push program", vlanPushNeeds, err, memlockErr)
	}
	v.link, err = link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: v.prog, Attach: ebpf.AttachTCXEgress})
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, ebpf.ErrNotSupported):
		return nil, fmt.Errorf("attach VLAN push program to %s: %w", ifname(ifindex), &feature.UnsupportedFeatureError{Name: "TCX egress programs", MinimumVersion: feature.Version{6, 6, 0}, Cause: err})
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES):
		return nil, fmt.Errorf("attach VLAN push program to %s: %w: needs CAP_NET_ADMIN; run as root: %w", ifname(ifindex), ErrNotPermitted, err)
	default:
		return nil, fmt.Errorf("attach VLAN push program to %s: %w", ifname(ifindex), err)
	}
}

// vlanPushProgram is the program's body: counts the frame, and tags it when
// its number is even.
func vlanPushProgram(countersFD int, tpid, tci uint16) asm.Instructions {
	const (
		skb = asm.R6 // the context, kept across calls
		ctr = asm.R7 // the counters value
	)
	return asm.Instructions{
		asm.Mov.Reg(skb, asm.R1),
		// ctr = bpf_map_lookup_elem(&counters, &(u32){0})
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, countersFD),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "next"),
		asm.Mov.Reg(ctr, asm.R0),
		// if (__sync_fetch_and_add(&ctr->seen, 1) & 1) goto next
		asm.Mov.Imm(asm.R1, 1),
		fetchAdd(ctr, asm.R1, vlanPushSeen),
		asm.And.Imm(asm.R1, 1),
		asm.JNE.Imm(asm.R1, 0, "next"),
		// if (bpf_skb_vlan_push(skb, htons(tpid), tci) == 0) ctr->pushed++
		asm.Mov.Reg(asm.R1, skb),
		asm.Mov.Imm(asm.R2, int32(htons(tpid))),
		asm.Mov.Imm(asm.R3, int32(tci)),
		asm.FnSkbVlanPush.Call(),
		asm.JNE.Imm(asm.R0, 0, "next"),
		asm.Mov.Imm(asm.R1, 1),
		asm.AddAtomic.Mem(ctr, asm.R1, asm.DWord, vlanPushPushed),
		asm.Mov.Imm(asm.R0, tcxNext).WithSymbol("next"),
		asm.Return(),
	}
}

// fetchAdd is `src = atomic_fetch_add((u64 *)(dst + off), src)`.
// cilium/ebpf v0.22's Instruction.Marshal takes the immediate before it
// derives it from the atomic operation, so asm.FetchAdd.Mem alone encodes an
// immediate of 0, a plain atomic add that leaves src unchanged; the
// operation's immediate (BPF_ADD | BPF_FETCH) is set here.
func fetchAdd(dst, src asm.Register, off int16) asm.Instruction {
	ins := asm.FetchAdd.Mem(dst, src, asm.DWord, off)
	ins.Constant = int64(asm.FetchAdd >> 8)
	return ins
}

// Counts returns how many frames the program saw and how many it tagged.
func (v *VLANPush) Counts() (seen, pushed uint64, err error) {
	if v.counters == nil {
		return 0, 0, fmt.Errorf("read VLAN push counters: %w", ErrClosed)
	}
	var val [2]uint64
	if err := v.counters.Lookup(uint32(0), &val); err != nil {
		return 0, 0, fmt.Errorf("read VLAN push counters: %w", err)
	}
	return val[0], val[1], nil
}

// Close detaches the program and closes it and its map. It is safe to call
// more than once.
func (v *VLANPush) Close() error {
	var errs []error
	if v.link != nil {
		if err := v.link.Close(); err != nil {
			errs = append(errs, fmt.Errorf("detach VLAN push program: %w", err))
		}
		v.link = nil
	}
	if v.prog != nil {
		if err := v.prog.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close VLAN push program: %w", err))
		}
		v.prog = nil
	}
	if v.counters != nil {
		if err := v.counters.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close VLAN push counters: %w", err))
		}
		v.counters = nil
	}
	return errors.Join(errs...)
}
