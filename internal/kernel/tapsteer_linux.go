package kernel

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// tunSetSteeringEBPF is TUNSETSTEERINGEBPF, _IOR('T', 224, int) (Linux
// 4.16): the tap's transmit queue of each frame is what the program
// returns, modulo the tap's queue count.
const tunSetSteeringEBPF = 0x800454e0

// tapSteerNeeds names what a tap steering program needs.
const tapSteerNeeds = "socket filter programs and array maps (Linux 4.16 for TUNSETSTEERINGEBPF)"

// TapSteering is a steering program on a multi-queue tap that puts each
// frame on the tap queue its skb mark names (PacketSender with
// FrameTable.Marks sets it), and counts the frames per queue. A frame whose
// mark names no queue goes to queue 0 and counts as unmarked.
type TapSteering struct {
	fd     int // a file of the tap, which the program is set on
	queues int
	counts *ebpf.Map
	prog   *ebpf.Program
}

// AttachTapSteering sets the steering program on the tap that tapFD (an
// open queue of a multi-queue tap) belongs to, for a tap of queues queues.
// Close removes it. The program replaces any other steering program of the
// tap; whoever else sets or clears one (QEMU does when its guest
// configures RSS) replaces it in turn.
func AttachTapSteering(tapFD, queues int) (_ *TapSteering, err error) {
	if queues < 1 || queues > 256 {
		return nil, fmt.Errorf("attach tap steering program: %d queues, want 1 to 256", queues)
	}
	memlockErr := removeMemlock()
	s := &TapSteering{fd: -1, queues: queues}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.counts, err = ebpf.NewMap(&ebpf.MapSpec{
		Name:       "xdphash_tapsteer",
		Type:       ebpf.Array,
		KeySize:    4,
		ValueSize:  8,
		MaxEntries: uint32(queues + 1),
	})
	if err != nil {
		return nil, loadError("create tap steering counters", tapSteerNeeds, err, memlockErr)
	}
	s.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "xdphash_tapsteer",
		Type:         ebpf.SocketFilter,
		License:      "GPL",
		Instructions: tapSteerProgram(s.counts.FD(), queues),
	})
	if err != nil {
		return nil, loadError("load tap steering program", tapSteerNeeds, err, memlockErr)
	}
	if err := setTapSteering(tapFD, s.prog.FD()); err != nil {
		return nil, err
	}
	s.fd = tapFD
	return s, nil
}

// setTapSteering sets (progFD) or clears (-1) the tap's steering program.
func setTapSteering(tapFD, progFD int) error {
	v := int32(progFD)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(tapFD), tunSetSteeringEBPF, uintptr(unsafe.Pointer(&v))); errno != 0 {
		switch {
		case errno == unix.EPERM || errno == unix.EACCES:
			return fmt.Errorf("set the tap's steering program: TUNSETSTEERINGEBPF: %w: needs CAP_NET_ADMIN: %w", ErrNotPermitted, errno)
		case errno == unix.EINVAL || errno == unix.ENOTTY:
			return fmt.Errorf("set the tap's steering program: TUNSETSTEERINGEBPF: %w: %s: %w", ErrNotSupported, tapSteerNeeds, errno)
		default:
			return fmt.Errorf("set the tap's steering program: TUNSETSTEERINGEBPF: %w", errno)
		}
	}
	return nil
}

// tapSteerProgram is the program's body:
//
//	q = skb->mark; slot = q < queues ? q : queues (unmarked, to queue 0)
//	counts[slot]++; return q < queues ? q : 0
func tapSteerProgram(countsFD, queues int) asm.Instructions {
	const q = asm.R7 // the queue, kept across the call
	return asm.Instructions{
		asm.LoadMem(q, asm.R1, skBuffMarkOff, asm.Word),
		asm.Mov.Reg(asm.R2, q),
		asm.JLT.Imm(asm.R2, int32(queues), "count"),
		asm.Mov.Imm(asm.R2, int32(queues)),
		asm.Mov.Imm(q, 0),
		asm.StoreMem(asm.RFP, -4, asm.R2, asm.Word).WithSymbol("count"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, countsFD),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Imm(asm.R1, 1),
		asm.AddAtomic.Mem(asm.R0, asm.R1, asm.DWord, 0),
		asm.Mov.Reg(asm.R0, q).WithSymbol("out"),
		asm.Return(),
	}
}

// skBuffMarkOff is offsetof(struct __sk_buff, mark): after its u32 len
// and pkt_type.
const skBuffMarkOff = 8

// TapSteered is what a TapSteering program counted: every frame the tap
// picked a queue for, including those it then refused because that queue's
// ring was full (the tap's tx_dropped).
type TapSteered struct {
	Queues   []uint64 // frames put on each queue by their mark
	Unmarked uint64   // frames whose mark named no queue (put on queue 0)
}

// Total is every frame the program steered.
func (t TapSteered) Total() uint64 {
	n := t.Unmarked
	for _, q := range t.Queues {
		n += q
	}
	return n
}

// Counts reads what the program has counted so far.
func (s *TapSteering) Counts() (TapSteered, error) {
	var t TapSteered
	for k := range s.queues + 1 {
		var v uint64
		if err := s.counts.Lookup(uint32(k), &v); err != nil {
			return TapSteered{}, fmt.Errorf("read tap steering counters: %w", err)
		}
		if k == s.queues {
			t.Unmarked = v
		} else {
			t.Queues = append(t.Queues, v)
		}
	}
	return t, nil
}

// Close clears the tap's steering program (the tap then picks queues by
// flow again) and frees the program. Closing twice is allowed.
func (s *TapSteering) Close() error {
	var errs []error
	if s.fd >= 0 {
		errs = append(errs, setTapSteering(s.fd, -1))
		s.fd = -1
	}
	if s.prog != nil {
		errs = append(errs, s.prog.Close())
		s.prog = nil
	}
	if s.counts != nil {
		errs = append(errs, s.counts.Close())
		s.counts = nil
	}
	return errors.Join(errs...)
}
