package kernel

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// The tag goes to the program in the skb's control block: BPF_PROG_TEST_RUN
// takes an __sk_buff context in which only mark, priority, the ifindexes,
// cb[], tstamp, wire_len, gso_* and hwtstamp may be non-zero (vlan_tci and
// vlan_proto may not), and cb[] is what a program may read freely.
const (
	skbCtxCB0   = 48 // offsetof(struct __sk_buff, cb[0]): the TPID, host order
	skbCtxCB1   = 52 // cb[1]: the TCI, host order
	skbCtxWords = 17 // the context given: up to the end of cb[]
)

// vlanOracleSpec is the program of HashTagged: in C,
//
//	if (bpf_skb_vlan_push(skb, bpf_htons(skb->cb[0]), skb->cb[1]))
//		return 0;
//	return bpf_get_hash_recalc(skb);
//
// bpf_skb_vlan_push on an skb without a tag only sets skb->vlan_proto and
// skb->vlan_tci (__vlan_hwaccel_put_tag), as a driver does for a tag the
// device stripped: the bytes, skb->protocol and the network header stay. The
// kernel's hash is never 0 (__flow_hash_from_keys makes 0 into 1), so 0 says
// the push failed.
func vlanOracleSpec() *ebpf.ProgramSpec {
	return &ebpf.ProgramSpec{
		Name: "xdphash_oracle_v",
		Type: ebpf.SchedCLS,
		Instructions: asm.Instructions{
			asm.Mov.Reg(asm.R6, asm.R1),
			asm.LoadMem(asm.R2, asm.R1, skbCtxCB0, asm.Word),
			asm.HostTo(asm.BE, asm.R2, asm.Half), // the helper takes the TPID in network order
			asm.LoadMem(asm.R3, asm.R1, skbCtxCB1, asm.Word),
			asm.FnSkbVlanPush.Call(),
			asm.JNE.Imm(asm.R0, 0, "failed"),
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.FnGetHashRecalc.Call(),
			asm.Return(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("failed"),
			asm.Return(),
		},
	}
}

// HashTagged returns the kernel's skb_get_hash of frame received with the
// VLAN tag (tpid, tci) in its metadata, as a device that strips tags
// (rx-vlan-offload) delivers it: frame is what is left, without the tag, and
// the skb is built as for Hash, then given the tag. tpid is 0x8100 or 0x88a8
// (the only TPIDs bpf_skb_vlan_push takes); tpid and tci both 0 is no tag,
// which is Hash.
func (o *HashOracle) HashTagged(frame []byte, tpid, tci uint16) (uint32, error) {
	if tpid == 0 && tci == 0 {
		return o.Hash(frame)
	}
	if o.vlanProg == nil {
		return 0, fmt.Errorf("kernel test run of %d-byte frame with VLAN tag %#04x:%#04x: %w", len(frame), tpid, tci, ErrClosed)
	}
	if tpid != 0x8100 && tpid != 0x88a8 {
		return 0, fmt.Errorf("kernel test run of %d-byte frame with VLAN tag %#04x:%#04x: TPID must be 0x8100 or 0x88a8", len(frame), tpid, tci)
	}
	var ctx [skbCtxWords]uint32
	ctx[skbCtxCB0/4], ctx[skbCtxCB1/4] = uint32(tpid), uint32(tci)
	hash, err := o.vlanProg.Run(&ebpf.RunOptions{Data: frame, Context: ctx})
	switch {
	case err == nil && hash == 0:
		return 0, fmt.Errorf("kernel test run of %d-byte frame with VLAN tag %#04x:%#04x: bpf_skb_vlan_push failed", len(frame), tpid, tci)
	case err == nil:
		return hash, nil
	case errors.Is(err, unix.EINVAL):
		return 0, fmt.Errorf("kernel test run of %d-byte frame with VLAN tag %#04x:%#04x: %w: %w", len(frame), tpid, tci, ErrFrameRefused, err)
	default:
		return 0, fmt.Errorf("kernel test run of %d-byte frame with VLAN tag %#04x:%#04x: %w", len(frame), tpid, tci, err)
	}
}
