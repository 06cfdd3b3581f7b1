package kernel

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel/feature"
)

// XDPMode is where in the receive path an XDP program runs.
type XDPMode uint32

// The XDP attach modes (the kernel's XDP_FLAGS_*_MODE).
const (
	// XDPNative runs the program in the driver, on the frame before any skb
	// exists (XDP_FLAGS_DRV_MODE). Drivers without XDP support refuse it.
	XDPNative XDPMode = unix.XDP_FLAGS_DRV_MODE
	// XDPGeneric runs the program on the skb, after the driver built it
	// (XDP_FLAGS_SKB_MODE): every driver supports it, at a fraction of the speed.
	XDPGeneric XDPMode = unix.XDP_FLAGS_SKB_MODE
)

func (m XDPMode) String() string {
	switch m {
	case XDPNative:
		return "native"
	case XDPGeneric:
		return "generic"
	default:
		return fmt.Sprintf("XDPMode(%#x)", uint32(m))
	}
}

// Offsets into struct xdp_md, the context an XDP program gets in R1
// (include/uapi/linux/bpf.h): data, data_end, data_meta, ingress_ifindex,
// rx_queue_index, egress_ifindex, all __u32.
const xdpMDRxQueueIndex = 16

// Program return codes (enum xdp_action).
const xdpPass = 2

// loopbackIfindex is the ifindex of lo in every network namespace
// (LOOPBACK_IFINDEX, include/net/net_namespace.h).
const loopbackIfindex = 1

// XSKRedirect is an XDP program, attached to one interface, that redirects
// every frame to the AF_XDP socket registered for the frame's receive queue in
// its XSKMAP, and passes the frames of queues without a socket on to the
// kernel's stack (the redirect's fallback action). It is attached through a
// BPF link where the kernel has XDP links (5.9), so that it is detached when
// the process dies, even by SIGKILL; on older kernels it is attached through
// netlink and only Close detaches it.
//
// Its methods are not safe for concurrent use.
type XSKRedirect struct {
	prog    *ebpf.Program
	xsks    *ebpf.Map
	link    link.Link // the BPF link, nil before Attach or when attached through netlink
	ifindex int       // the interface attached to through netlink, 0 otherwise
	mode    XDPMode
	bound   int            // the interface a device-bound program is bound to, 0 for none
	choice  RedirectChoice // which program runs and why (xdpmeta_linux.go)
}

// LoadXSKRedirect loads the redirect program and an XSKMAP with a slot for
// each of queues receive queues; Attach then attaches it to an interface.
// It needs CAP_BPF and CAP_NET_ADMIN (or CAP_SYS_ADMIN); without them the
// error wraps ErrNotPermitted and names the missing capabilities.
func LoadXSKRedirect(queues int) (_ *XSKRedirect, err error) {
	if queues <= 0 {
		return nil, fmt.Errorf("load XDP redirect program: %d queues, want at least 1", queues)
	}
	memlockErr := removeMemlock()
	r := &XSKRedirect{}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	r.xsks, err = ebpf.NewMap(&ebpf.MapSpec{
		Name:       "xdphash_xsks",
		Type:       ebpf.XSKMap,
		KeySize:    4, // the receive queue's index
		ValueSize:  4, // the socket's file descriptor
		MaxEntries: uint32(queues),
	})
	if err != nil {
		return nil, loadError("create XSKMAP", xskNeeds, err, memlockErr)
	}
	r.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "xdphash_xsk",
		Type: ebpf.XDP,
		// return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
		//
		// The low bits of the flags argument are the action returned when
		// the queue's slot is empty (Linux 5.3; earlier kernels return
		// XDP_ABORTED there, which drops the frame). The helper is not
		// GPL-only, so no license is needed.
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, xdpMDRxQueueIndex, asm.Word),
			asm.LoadMapPtr(asm.R1, r.xsks.FD()),
			asm.Mov.Imm(asm.R3, xdpPass),
			asm.FnRedirectMap.Call(),
			asm.Return(),
		},
	})
	if err != nil {
		return nil, loadError("load XDP redirect program", xskNeeds, err, memlockErr)
	}
	return r, nil
}

// xskNeeds is what the redirect program needs of the kernel.
const xskNeeds = "needs XDP programs and XSKMAP (Linux 4.18)"

// loadError explains a failure to create a BPF object; needs says what the
// object needs of the kernel, for when the kernel lacks it.
func loadError(step, needs string, err, memlockErr error) error {
	switch {
	case errors.Is(err, os.ErrPermission) && memlockErr != nil:
		return fmt.Errorf("%s: %w: %s: %w (raising RLIMIT_MEMLOCK failed too: %w)", step, ErrNotPermitted, permissionHint(), err, memlockErr)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%s: %w: %s: %w", step, ErrNotPermitted, permissionHint(), err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%s: %w: %s: %w", step, ErrNotSupported, needs, err)
	default:
		return fmt.Errorf("%s: %w", step, err)
	}
}

// Register puts an AF_XDP socket in the slot of the queue it is bound to, so
// that the program redirects that queue's frames to it. A socket removes
// itself from the map when it is closed.
func (r *XSKRedirect) Register(s *XSK) error {
	if r.xsks == nil {
		return fmt.Errorf("register AF_XDP socket of queue %d: %w", s.queue, ErrClosed)
	}
	if err := r.xsks.Put(uint32(s.queue), uint32(s.fd)); err != nil {
		return fmt.Errorf("register AF_XDP socket of queue %d: %w", s.queue, err)
	}
	s.metadata = r.choice.Metadata
	return nil
}

// Attach attaches the program to the interface ifindex in mode: through a BPF
// link where the kernel has XDP links (HaveXDPLinks), through netlink
// otherwise. An interface that already runs an XDP program is refused, and so
// is native mode on a driver without XDP support; both errors say what to do.
func (r *XSKRedirect) Attach(ifindex int, mode XDPMode) error {
	switch {
	case r.prog == nil:
		return fmt.Errorf("attach XDP program: %w", ErrClosed)
	case r.link != nil || r.ifindex != 0:
		return fmt.Errorf("attach XDP program to ifindex %d: already attached", ifindex)
	case mode != XDPNative && mode != XDPGeneric:
		return fmt.Errorf("attach XDP program to ifindex %d: unknown mode %v", ifindex, mode)
	case r.bound != 0 && (ifindex != r.bound || mode != XDPNative):
		// Kernels before 6.14 accept a device-bound program in generic
		// mode, where its kfuncs read a context that is not the driver's.
		return fmt.Errorf("attach XDP program to %s in %v mode: the metadata program is bound to %s in native mode", ifname(ifindex), mode, ifname(r.bound))
	}
	// Only a kernel without XDP links attaches through netlink: a probe that
	// could not tell (no privilege to load its program) is no reason to
	// attach what a killed process would leave behind.
	switch err := HaveXDPLinks(); {
	case errors.Is(err, ErrNotSupported) || err == nil && forceNetlinkAttach:
		return r.attachNetlink(ifindex, mode)
	case err != nil:
		return fmt.Errorf("attach XDP program to %s: %w", ifname(ifindex), err)
	}
	l, err := link.AttachXDP(link.XDPOptions{Program: r.prog, Interface: ifindex, Flags: link.XDPAttachFlags(mode)})
	if err != nil {
		return attachError(ifindex, mode, err)
	}
	r.link, r.mode = l, mode
	return nil
}

// forceNetlinkAttach makes Attach use netlink even where XDP links exist, so
// that tests cover the fallback on kernels that do not need it.
var forceNetlinkAttach = false

// attachNetlink attaches the program the pre-5.9 way. Nothing detaches it if
// the process dies before Close: `ip link set dev IF xdp off` does.
func (r *XSKRedirect) attachNetlink(ifindex int, mode XDPMode) error {
	nl, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		return fmt.Errorf("attach XDP program to ifindex %d: find interface: %w", ifindex, err)
	}
	// UPDATE_IF_NOEXIST refuses to replace a program someone else attached.
	if err := netlink.LinkSetXdpFdWithFlags(nl, r.prog.FD(), int(mode)|unix.XDP_FLAGS_UPDATE_IF_NOEXIST); err != nil {
		return attachError(ifindex, mode, err)
	}
	r.ifindex, r.mode = ifindex, mode
	return nil
}

// attachError explains a refused attach.
func attachError(ifindex int, mode XDPMode, err error) error {
	name := ifname(ifindex)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) && mode == XDPNative:
		return fmt.Errorf("attach XDP program to %s in native mode: %w: the driver has no native XDP; use --xdp-mode generic: %w", name, ErrNotSupported, err)
	case errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EEXIST):
		return fmt.Errorf("attach XDP program to %s in %v mode: another XDP program is attached (see `ip link show dev %s`; `ip link set dev %s xdp off` removes one attached without a link): %w", name, mode, name, name, err)
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES):
		return fmt.Errorf("attach XDP program to %s: %w: needs CAP_NET_ADMIN; run as root: %w", name, ErrNotPermitted, err)
	case errors.Is(err, unix.ERANGE):
		return fmt.Errorf("attach XDP program to %s in %v mode: the MTU is too large for XDP on this driver; lower it or use --xdp-mode generic: %w", name, mode, err)
	default:
		return fmt.Errorf("attach XDP program to %s in %v mode: %w", name, mode, err)
	}
}

// ifname names an interface for an error message: its name, or its index when
// it has none (any more).
func ifname(ifindex int) string {
	if l, err := netlink.LinkByIndex(ifindex); err == nil {
		return l.Attrs().Name
	}
	return fmt.Sprintf("ifindex %d", ifindex)
}

// Mode is the mode the program is attached in, 0 before Attach.
func (r *XSKRedirect) Mode() XDPMode { return r.mode }

// ViaLink tells whether the program is attached through a BPF link, which the
// kernel detaches when the process dies; false means netlink, which only Close
// undoes.
func (r *XSKRedirect) ViaLink() bool { return r.link != nil }

// Close detaches the program and closes it and its map. It is safe to call
// more than once.
func (r *XSKRedirect) Close() error {
	var errs []error
	if r.link != nil {
		if err := r.link.Close(); err != nil {
			errs = append(errs, fmt.Errorf("detach XDP link: %w", err))
		}
		r.link = nil
	}
	if r.ifindex != 0 {
		if err := r.detachNetlink(); err != nil {
			errs = append(errs, err)
		}
		r.ifindex = 0
	}
	if r.prog != nil {
		if err := r.prog.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close XDP program: %w", err))
		}
		r.prog = nil
	}
	if r.xsks != nil {
		if err := r.xsks.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close XSKMAP: %w", err))
		}
		r.xsks = nil
	}
	return errors.Join(errs...)
}

// detachNetlink removes the program from the interface if it is still the one
// attached: a program attached since by someone else stays.
func (r *XSKRedirect) detachNetlink() error {
	nl, err := netlink.LinkByIndex(r.ifindex)
	if err != nil {
		return nil // the interface is gone, and its program with it
	}
	info, err := r.prog.Info()
	if err != nil {
		return fmt.Errorf("detach XDP program from %s: %w", nl.Attrs().Name, err)
	}
	id, _ := info.ID()
	if xdp := nl.Attrs().Xdp; xdp == nil || xdp.ProgId != uint32(id) {
		return nil
	}
	if err := netlink.LinkSetXdpFdWithFlags(nl, -1, int(r.mode)); err != nil {
		return fmt.Errorf("detach XDP program from %s: %w", nl.Attrs().Name, err)
	}
	return nil
}

// xdpLinks is the probe of XDP through BPF links.
var xdpLinks = feature.NewTest("XDP links", "5.9", probeXDPLinks)

// HaveXDPLinks reports whether the kernel attaches XDP programs through BPF
// links (BPF_LINK_CREATE with BPF_XDP, Linux 5.9): nil if it does, a
// *feature.UnsupportedFeatureError (ErrNotSupported) if it does not. Only
// those answers are cached; a probe that could not tell (no privilege to
// load its program) runs again on the next call.
func HaveXDPLinks() error { return xdpLinks.Result() }

// probeXDPLinks asks for an XDP link on lo in offload mode, which lo cannot
// do: a kernel with XDP links refuses with EOPNOTSUPP (no offload driver)
// after it accepted the attach type, an older one with EINVAL (unknown attach
// type). Nothing is ever attached.
func probeXDPLinks() error {
	_ = removeMemlock()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "xdphash_probe",
		Type:         ebpf.XDP,
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()},
	})
	if err != nil {
		return probeLoadError("load XDP links probe", err)
	}
	defer prog.Close()
	l, err := link.AttachRawLink(link.RawLinkOptions{Program: prog, Attach: ebpf.AttachXDP, Target: loopbackIfindex, Flags: unix.XDP_FLAGS_HW_MODE})
	switch {
	case err == nil:
		l.Close()
		return nil
	case errors.Is(err, unix.EOPNOTSUPP):
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, ebpf.ErrNotSupported):
		return feature.Missing("BPF_LINK_CREATE refused BPF_XDP: %w", err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("create XDP link probe: %w: %s: %w", ErrNotPermitted, permissionHint(), err)
	default:
		return fmt.Errorf("create XDP link probe: %w", err)
	}
}

// AttachedXDP tells which XDP program interface ifindex runs and in which
// mode, as `ip link` shows it: mode 0 when there is none, or when it runs in
// a mode other than native or generic (offload, or several at once).
func AttachedXDP(ifindex int) (mode XDPMode, progID uint32, err error) {
	nl, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		return 0, 0, fmt.Errorf("read XDP program of ifindex %d: %w", ifindex, err)
	}
	xdp := nl.Attrs().Xdp
	if xdp == nil || !xdp.Attached {
		return 0, 0, nil
	}
	// enum XDP_ATTACHED_*: NONE, DRV, SKB, HW, MULTI.
	switch xdp.AttachMode {
	case 1:
		mode = XDPNative
	case 2:
		mode = XDPGeneric
	}
	return mode, xdp.ProgId, nil
}
