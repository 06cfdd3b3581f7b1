package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel/feature"
)

// XDPGen sends a FrameTable with BPF_PROG_RUN in live-frames mode
// (BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18), the mechanism of xdp-tools'
// xdp-trafficgen. Each run hands the kernel one buffer and a repeat count;
// the kernel copies the buffer into page-pool pages once and runs the program
// once per frame, recycling the pages. The program:
//
//  1. takes the calling CPU's position in the cycle from a cursor map and
//     advances it (one 64-byte slot per CPU, so counting needs no atomics
//     and no cache line moves between CPUs);
//  2. looks up the frame at that position (order map) and its head (heads
//     map), copies the HeadLen-byte head over the page's frame and trims the
//     frame to its length with bpf_xdp_adjust_tail;
//  3. returns XDP_TX, which the test run turns into a redirect to the
//     interface in the run's context (ingress_ifindex): the frame leaves
//     that interface as if forwarded by XDP.
//
// A paced sender (Pace) has the program drop the run's frames until the next
// one is due, so frames leave one by one at the rate; a limit in the cursor
// slot ends the frames of a count.
//
// The cursor counts every frame the program sent, so a run that a signal
// interrupts (EINTR, between batches) is resumed from the kernel's own count
// and no frame is sent twice or left out. That is also why the run is a raw
// BPF_PROG_TEST_RUN and not (*ebpf.Program).Run, which restarts the whole
// repeat count after EINTR.
//
// A run of more than one frame costs a fixed start-up time
// (docs/pktgen-pacing.md has the figure): for a repeat count above 1 the test
// run swaps the program into the XDP dispatcher and out again
// (bpf_prog_change_xdp), which waits for RCU. Senders therefore make long runs and stop them with a
// signal (Stop).
//
// On a veth, XDP_TX frames go into the other end's XDP ring, which exists
// only while that end runs NAPI: with an XDP program attached or GRO enabled
// (ethtool -K DEV gro on). Otherwise the kernel drops every frame and counts
// it nowhere; the sending end's tx_packets counter shows what was delivered.
//
// An XDPGen may serve several senders at once, one per CPU; it must outlive
// them.
type XDPGen struct {
	prog    *ebpf.Program
	cursors *ebpf.Map
	order   *ebpf.Map
	heads   *ebpf.Map
	bufLen  int

	mu   sync.Mutex
	cpus map[int]bool // CPUs that have a sender
}

// Layout of the generator's maps.
const (
	// cursorSlot is one CPU's cursor value, a cache line: the u64
	// position, and the limit and pacing state the program keeps beside it
	// (slot* offsets).
	cursorSlot = 64
	// headValue is one frame in the heads map: its length (u16, host
	// order), 6 bytes of padding so the head is 8-byte aligned, the head.
	headValue = 8 + HeadLen
	// Offsets in struct xdp_md.
	xdpMDData    = 0
	xdpMDDataEnd = 4
	// XDP verdicts.
	xdpAborted = 0
	xdpDrop    = 1
	xdpTX      = 3
)

// Fields of a cursor slot, as byte offsets. Only the slot's CPU runs the
// program on it, so none needs an atomic.
const (
	slotPos      = 0  // frames the program sent on this CPU (the cycle position, not reduced)
	slotLimit    = 8  // the program sends nothing once the position reaches this
	slotDue      = 16 // paced: CLOCK_MONOTONIC ns when the next frame is due
	slotInterval = 24 // paced: ns between frames, the integer part; 0 with slotFrac 0: not paced
	slotFrac     = 32 // paced: the fraction, in 2^-32 ns
	slotAcc      = 40 // paced: the fractions accumulated, below 2^32
	slotSlack    = 48 // paced: how far the due time may lag the clock (ns), which bounds a catch-up burst
)

// enotsupp is the kernel's internal ENOTSUPP (524), which BPF_PROG_TEST_RUN
// returns for program types it cannot run.
const enotsupp = unix.Errno(524)

// liveFrames is the probe of BPF_F_TEST_XDP_LIVE_FRAMES.
var liveFrames = feature.NewTest("XDP live frames", "5.18", probeLiveFrames)

// LiveFramesSupported reports whether the kernel runs XDP programs on live
// frames (BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18): nil if it does, a
// *feature.UnsupportedFeatureError (ErrNotSupported) if it does not. Only
// those answers are cached: without the privilege to load the probe the error
// wraps ErrNotPermitted, and the next call probes again.
func LiveFramesSupported() error { return liveFrames.Result() }

// probeLiveFrames runs a program that drops one frame with the live-frames
// flag.
func probeLiveFrames() error {
	_ = removeMemlock()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "xdphash_probe",
		Type:         ebpf.XDP,
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpDrop), asm.Return()},
	})
	if err != nil {
		return probeLoadError("load live-frames probe", err)
	}
	defer prog.Close()
	// Without a context the run uses the loopback device's first queue; the
	// program drops the one frame.
	frame := make([]byte, MinFrameLen)
	attr := progRunAttr{
		ProgFD:     uint32(prog.FD()),
		DataSizeIn: uint32(len(frame)),
		DataIn:     uint64(uintptr(unsafe.Pointer(&frame[0]))),
		Repeat:     1,
		Flags:      unix.BPF_F_TEST_XDP_LIVE_FRAMES,
	}
	errno := testRun(&attr)
	runtime.KeepAlive(frame)
	switch errno {
	case 0:
		return nil
	case unix.EINVAL, unix.EOPNOTSUPP, enotsupp:
		return feature.Missing("BPF_PROG_RUN refused BPF_F_TEST_XDP_LIVE_FRAMES: %w", errno)
	case unix.EPERM, unix.EACCES:
		return fmt.Errorf("run live-frames probe: %w: %s: %w", ErrNotPermitted, permissionHint(), errno)
	default:
		return fmt.Errorf("run live-frames probe: %w", errno)
	}
}

// probeLoadError is a probe's answer after its program failed to load: a
// kernel without the program type is conclusive (feature.Missing), a
// refusal for lack of privilege wraps ErrNotPermitted and is not.
func probeLoadError(what string, err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%s: %w: %s: %w", what, ErrNotPermitted, permissionHint(), err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return feature.Missing("%s: %w", what, err)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}

// genLoadError wraps a program or map load error with this package's
// sentinels.
func genLoadError(what string, err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%s: %w: %s: %w", what, ErrNotPermitted, permissionHint(), err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%s: %w: %w", what, ErrNotSupported, err)
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}

// NewXDPGen loads the generator program and fills its maps with t. It needs
// CAP_BPF and CAP_NET_ADMIN (or CAP_SYS_ADMIN).
func NewXDPGen(t *FrameTable) (_ *XDPGen, err error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if err := LiveFramesSupported(); err != nil {
		return nil, err
	}
	cpus, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("count possible CPUs: %w", err)
	}
	g := &XDPGen{bufLen: t.bufLen(), cpus: map[int]bool{}}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	newArray := func(name string, valueSize, entries int) (*ebpf.Map, error) {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Name: name, Type: ebpf.Array, KeySize: 4, ValueSize: uint32(valueSize), MaxEntries: uint32(entries)})
		if err != nil {
			return nil, genLoadError("create map "+name, err)
		}
		return m, nil
	}
	if g.cursors, err = newArray("xdpgen_cursors", cursorSlot, cpus); err != nil {
		return nil, err
	}
	if g.order, err = newArray("xdpgen_order", 4, len(t.Order)); err != nil {
		return nil, err
	}
	if g.heads, err = newArray("xdpgen_heads", headValue, len(t.Lens)); err != nil {
		return nil, err
	}
	if err := fillArray(g.order, t.Order); err != nil {
		return nil, err
	}
	heads := make([][headValue]byte, len(t.Lens))
	for k, n := range t.Lens {
		binary.NativeEndian.PutUint16(heads[k][:], n)
		copy(heads[k][8:], t.Heads[k*HeadLen:(k+1)*HeadLen])
	}
	if err := fillArray(g.heads, heads); err != nil {
		return nil, err
	}
	g.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "xdphash_xdpgen",
		Type:         ebpf.XDP,
		Instructions: xdpGenProgram(g.cursors.FD(), g.order.FD(), g.heads.FD(), len(t.Order), g.bufLen),
	})
	if err != nil {
		return nil, genLoadError("load generator program", err)
	}
	return g, nil
}

// fillArray writes values into an array map at keys 0, 1, ..., with one
// batch update where the kernel has them (Linux 5.6).
func fillArray[V any](m *ebpf.Map, values []V) error {
	keys := make([]uint32, len(values))
	for i := range keys {
		keys[i] = uint32(i)
	}
	_, err := m.BatchUpdate(keys, values, nil)
	if errors.Is(err, ebpf.ErrNotSupported) {
		for i := range values {
			if err = m.Put(keys[i], values[i]); err != nil {
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("fill map %s: %w", m.String(), err)
	}
	return nil
}

// xdpGenProgram is the generator program; see XDPGen.
func xdpGenProgram(cursors, order, heads, cycle, bufLen int) asm.Instructions {
	// lookup calls bpf_map_lookup_elem(map, fp-8) and leaves the value
	// pointer in R0; a missing value ends the program as aborted.
	lookup := func(fd int) asm.Instructions {
		return asm.Instructions{
			asm.LoadMapPtr(asm.R1, fd),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -8),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "abort"),
		}
	}
	var p asm.Instructions
	p = append(p,
		asm.Mov.Reg(asm.R6, asm.R1), // the context survives helper calls in R6
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
	)
	p = append(p, lookup(cursors)...)
	p = append(p,
		// R9 = the CPU's slot. Past the limit, or before the next frame is
		// due, the program drops the test run's frame and keeps its place.
		asm.Mov.Reg(asm.R9, asm.R0),
		asm.LoadMem(asm.R7, asm.R9, slotPos, asm.DWord),
		asm.LoadMem(asm.R2, asm.R9, slotLimit, asm.DWord),
		asm.JGE.Reg(asm.R7, asm.R2, "drop"),
		asm.LoadMem(asm.R2, asm.R9, slotInterval, asm.DWord),
		asm.LoadMem(asm.R3, asm.R9, slotFrac, asm.DWord),
		asm.Or.Reg(asm.R2, asm.R3),
		asm.JEq.Imm(asm.R2, 0, "send"),
		asm.FnKtimeGetNs.Call(), // CLOCK_MONOTONIC
		asm.LoadMem(asm.R2, asm.R9, slotDue, asm.DWord),
		asm.JLT.Reg(asm.R0, asm.R2, "drop"),
		// A due time more than the slack behind the clock (the thread was
		// preempted) moves up to it: the catch-up is a burst of at most
		// the slack's frames.
		asm.LoadMem(asm.R3, asm.R9, slotSlack, asm.DWord),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.JGE.Reg(asm.R4, asm.R0, "advance"),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Sub.Reg(asm.R2, asm.R3),
		// due += interval, the fraction carried in slotAcc.
		asm.LoadMem(asm.R3, asm.R9, slotAcc, asm.DWord).WithSymbol("advance"),
		asm.LoadMem(asm.R4, asm.R9, slotFrac, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R4),
		asm.Mov.Reg(asm.R4, asm.R3),
		asm.RSh.Imm(asm.R4, 32),
		asm.Add.Reg(asm.R2, asm.R4),
		asm.LSh.Imm(asm.R3, 32),
		asm.RSh.Imm(asm.R3, 32),
		asm.StoreMem(asm.R9, slotAcc, asm.R3, asm.DWord),
		asm.LoadMem(asm.R4, asm.R9, slotInterval, asm.DWord),
		asm.Add.Reg(asm.R2, asm.R4),
		asm.StoreMem(asm.R9, slotDue, asm.R2, asm.DWord),
		// R7 = position; the slot counts on to position+1.
		asm.LoadMem(asm.R7, asm.R9, slotPos, asm.DWord).WithSymbol("send"),
		asm.Mov.Reg(asm.R8, asm.R7),
		asm.Add.Imm(asm.R8, 1),
		asm.StoreMem(asm.R9, slotPos, asm.R8, asm.DWord),
		asm.Mod.Imm(asm.R7, int32(cycle)), // 64-bit unsigned
		asm.StoreMem(asm.RFP, -8, asm.R7, asm.Word),
	)
	p = append(p, lookup(order)...)
	p = append(p,
		asm.LoadMem(asm.R7, asm.R0, 0, asm.Word),
		asm.StoreMem(asm.RFP, -8, asm.R7, asm.Word),
	)
	p = append(p, lookup(heads)...)
	p = append(p,
		asm.Mov.Reg(asm.R9, asm.R0),
		asm.LoadMem(asm.R2, asm.R6, xdpMDData, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, xdpMDDataEnd, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, HeadLen),
		asm.JGT.Reg(asm.R4, asm.R3, "abort"), // proves HeadLen bytes to the verifier
	)
	for off := int16(0); off < HeadLen; off += 8 {
		p = append(p,
			asm.LoadMem(asm.R5, asm.R9, 8+off, asm.DWord),
			asm.StoreMem(asm.R2, off, asm.R5, asm.DWord),
		)
	}
	p = append(p,
		// The page holds a bufLen-byte frame; cut it to this frame's length.
		// The test run restores the page's bounds before reusing it.
		asm.LoadMem(asm.R2, asm.R9, 0, asm.Half),
		asm.Add.Imm(asm.R2, -int32(bufLen)),
		asm.JEq.Imm(asm.R2, 0, "tx"),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnXdpAdjustTail.Call(),
		asm.JNE.Imm(asm.R0, 0, "abort"),
		asm.Mov.Imm(asm.R0, xdpTX).WithSymbol("tx"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, xdpAborted).WithSymbol("abort"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, xdpDrop).WithSymbol("drop"),
		asm.Return(),
	)
	return p
}

// Close unloads the program and its maps. Closing twice is allowed.
func (g *XDPGen) Close() error {
	var errs []error
	if g.prog != nil {
		errs = append(errs, g.prog.Close())
	}
	for _, m := range []*ebpf.Map{g.cursors, g.order, g.heads} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	g.prog, g.cursors, g.order, g.heads = nil, nil, nil, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close XDP generator: %w", err)
	}
	return nil
}

// XDPSender sends an XDPGen's frames from one OS thread pinned to one CPU.
// It is not safe for concurrent use.
type XDPSender struct {
	gen     *XDPGen
	cpu     int
	ifindex int
	pos     uint64 // the CPU's cursor: frames run since its first position
	// interrupts counts runs that a signal ended early, for tests.
	interrupts int
	tid        int         // the sending thread, which Stop signals
	stop       atomic.Bool // Stop was called
	sending    atomic.Bool // a Send is in progress
	data       []byte
	ctx        xdpMD
	attr       progRunAttr
	// The cursor lookup's key and value live here: passed as pointers they
	// reach the map without an allocation, so an interrupted run (the Go
	// runtime's own preemption signals interrupt long runs) allocates nothing.
	cursorKey uint32
	cursorVal [cursorSlot]byte
	// interval is the paced time between frames in 2^-32 ns; 0 when not
	// paced (see Pace).
	interval uint64
	// slack is how far the due time may lag the clock (PaceCatchUp).
	slack time.Duration
}

// xdpMD is struct xdp_md, the context of an XDP program run.
type xdpMD struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// progRunAttr is the BPF_PROG_TEST_RUN member of union bpf_attr, up to
// batch_size (Linux 5.18).
type progRunAttr struct {
	ProgFD, Retval, DataSizeIn, DataSizeOut uint32
	DataIn, DataOut                         uint64
	Repeat, Duration, CtxSizeIn, CtxSizeOut uint32
	CtxIn, CtxOut                           uint64
	Flags, CPU, BatchSize                   uint32
	_                                       uint32
}

// NewSender prepares sending out of the interface ifindex from the calling
// OS thread, which must be locked (runtime.LockOSThread), pinned to exactly
// one CPU (SetAffinity) without another sender on it, and in the interface's
// network namespace, where the kernel resolves ifindex on every run. queue is
// the receive queue the frames claim to arrive on (ingress queue of the
// XDP_TX), start the cycle position of the first frame. batch is the number
// of frames the kernel runs between flushes (0: the kernel's 64).
func (g *XDPGen) NewSender(ifindex, queue int, start uint64, batch int) (*XDPSender, error) {
	if g.prog == nil {
		return nil, fmt.Errorf("new XDP sender: %w", ErrClosed)
	}
	cpu, err := threadCPU()
	if err != nil {
		return nil, fmt.Errorf("new XDP sender: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cpus[cpu] {
		return nil, fmt.Errorf("new XDP sender: CPU %d already has one (one sender per CPU: the program counts per CPU)", cpu)
	}
	var slot [cursorSlot]byte
	binary.NativeEndian.PutUint64(slot[slotPos:], start)
	binary.NativeEndian.PutUint64(slot[slotLimit:], math.MaxUint64)
	if err := g.cursors.Put(uint32(cpu), slot[:]); err != nil {
		return nil, fmt.Errorf("new XDP sender: set cursor of CPU %d: %w", cpu, err)
	}
	g.cpus[cpu] = true
	s := &XDPSender{gen: g, cpu: cpu, ifindex: ifindex, pos: start, data: make([]byte, g.bufLen), tid: unix.Gettid()}
	s.ctx = xdpMD{DataEnd: uint32(len(s.data)), IngressIfindex: uint32(ifindex), RxQueueIndex: uint32(queue)}
	s.attr = progRunAttr{
		ProgFD:     uint32(g.prog.FD()),
		DataSizeIn: uint32(len(s.data)),
		DataIn:     uint64(uintptr(unsafe.Pointer(&s.data[0]))),
		CtxSizeIn:  uint32(unsafe.Sizeof(s.ctx)),
		CtxIn:      uint64(uintptr(unsafe.Pointer(&s.ctx))),
		Flags:      unix.BPF_F_TEST_XDP_LIVE_FRAMES,
		BatchSize:  uint32(batch),
	}
	return s, nil
}

// CPU is the CPU the sender runs on.
func (s *XDPSender) CPU() int { return s.cpu }

// Send transmits the next n frames of the cycle and returns how many the
// program ran, which is n unless err is set or Stop was called. The kernel
// may still drop a frame after the program (see XDPGen). It must be called
// from the thread that made the sender.
func (s *XDPSender) Send(n uint64) (uint64, error) {
	if s.gen == nil || s.gen.prog == nil {
		return 0, fmt.Errorf("send with XDP sender: %w", ErrClosed)
	}
	s.sending.Store(true)
	defer s.sending.Store(false)
	if s.interval != 0 {
		return s.sendPaced(n)
	}
	var sent uint64
	for sent < n && !s.stop.Load() {
		rep := min(n-sent, math.MaxUint32)
		s.attr.Repeat = uint32(rep)
		errno := testRun(&s.attr)
		runtime.KeepAlive(s) // the attribute points into s.data and s.ctx
		if errno == 0 {
			sent += rep
			s.pos += rep
			continue
		}
		// A run ends early only between batches; the cursor says how far.
		pos, err := s.cursor()
		if err != nil {
			return sent, fmt.Errorf("send with XDP sender: after %w: %w", errno, err)
		}
		sent += pos - s.pos
		s.pos = pos
		if errno == unix.EINTR {
			s.interrupts++
			continue
		}
		return sent, runError(errno, s.ifindex)
	}
	return sent, nil
}

// Stop makes a Send in progress return after the batch the kernel is
// running, and every later Send at once. A run notices only signals, so Stop
// signals the sending thread (SIGURG, which the Go runtime takes for a
// preemption request and otherwise ignores) until Send has returned. It may
// be called from any goroutine.
func (s *XDPSender) Stop() {
	s.stop.Store(true)
	// The first signal may land before the run starts, when the kernel does
	// not look: repeat until Send is out.
	for i := 0; s.sending.Load() && i < 10000; i++ {
		_ = unix.Tgkill(unix.Getpid(), s.tid, unix.SIGURG)
		time.Sleep(100 * time.Microsecond)
	}
}

// runError explains a failed live-frames run.
func runError(errno unix.Errno, ifindex int) error {
	switch errno {
	case unix.ENODEV:
		return fmt.Errorf("run generator program: no interface %d in this thread's network namespace: %w", ifindex, errno)
	case unix.EINVAL:
		return fmt.Errorf("run generator program on ifindex %d: %w (a frame longer than the interface's MTU allows, or a queue it does not have)", ifindex, errno)
	case unix.EPERM, unix.EACCES:
		return fmt.Errorf("run generator program: %w: %s: %w", ErrNotPermitted, permissionHint(), errno)
	default:
		return fmt.Errorf("run generator program on ifindex %d: %w", ifindex, errno)
	}
}

// cursor reads the CPU's cursor from the kernel.
func (s *XDPSender) cursor() (uint64, error) {
	s.cursorKey = uint32(s.cpu)
	if err := s.gen.cursors.Lookup(&s.cursorKey, &s.cursorVal); err != nil {
		return 0, fmt.Errorf("read cursor of CPU %d: %w", s.cpu, err)
	}
	return binary.NativeEndian.Uint64(s.cursorVal[:]), nil
}

// Close frees the sender's CPU for another sender. Closing twice is allowed.
func (s *XDPSender) Close() error {
	if s.gen == nil {
		return nil
	}
	s.gen.mu.Lock()
	delete(s.gen.cpus, s.cpu)
	s.gen.mu.Unlock()
	s.gen = nil
	return nil
}

// testRun is one BPF_PROG_TEST_RUN. The caller keeps the memory that attr
// points to alive.
func testRun(attr *progRunAttr) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_TEST_RUN, uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr))
	return errno
}
