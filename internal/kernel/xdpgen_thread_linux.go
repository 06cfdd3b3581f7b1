package kernel

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// threadCPU is the one CPU the calling thread is pinned to.
func threadCPU() (int, error) {
	cpus, err := AllowedCPUs()
	if err != nil {
		return 0, err
	}
	if len(cpus) != 1 {
		return 0, fmt.Errorf("thread may run on %d CPUs: pin it to one first (SetAffinity)", len(cpus))
	}
	return cpus[0], nil
}

// OnThread runs fn on a new OS thread that is locked to it for fn's whole
// run and, when netnsName is not empty, switched into that network namespace
// (as `ip netns` names it). Sockets, links and BPF test runs in fn resolve
// interfaces in that namespace. The thread ends with fn, so neither the
// namespace switch nor a SetAffinity in fn outlives it.
func OnThread(netnsName string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// No UnlockOSThread: a goroutine that exits locked takes its
		// thread with it.
		runtime.LockOSThread()
		if netnsName != "" {
			ns, err := netns.GetFromName(netnsName)
			if err != nil {
				errc <- fmt.Errorf("open network namespace %s: %w", netnsName, err)
				return
			}
			err = netns.Set(ns)
			ns.Close()
			if err != nil {
				errc <- fmt.Errorf("enter network namespace %s: %w", netnsName, err)
				return
			}
		}
		errc <- fn()
	}()
	return <-errc
}

// Link is a network interface as the calling thread's namespace sees it.
type Link struct {
	Name     string
	Index    int
	Kind     string // netlink kind: "veth", "device", ...
	MAC      net.HardwareAddr
	MTU      int
	RxQueues int
	TxQueues int
	// PeerIndex is IFLA_LINK: for a veth, the other end's ifindex in its
	// own namespace; 0 when unknown.
	PeerIndex int
	// Counters as rtnetlink reports them. On a veth, tx_packets counts the
	// frames the other end received, XDP_TX frames included.
	TxPackets, TxBytes, TxDropped uint64
	RxPackets, RxBytes, RxDropped uint64
}

// LinkByName describes the interface name in the calling thread's
// namespace.
func LinkByName(name string) (Link, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return Link{}, fmt.Errorf("find interface %s: %w", name, err)
	}
	return linkOf(l), nil
}

// LinkByIndex describes the interface index in the calling thread's
// namespace.
func LinkByIndex(index int) (Link, error) {
	l, err := netlink.LinkByIndex(index)
	if err != nil {
		return Link{}, fmt.Errorf("find interface %d: %w", index, err)
	}
	return linkOf(l), nil
}

func linkOf(l netlink.Link) Link {
	a := l.Attrs()
	out := Link{
		Name: a.Name, Index: a.Index, Kind: l.Type(), MAC: a.HardwareAddr, MTU: a.MTU,
		RxQueues: a.NumRxQueues, TxQueues: a.NumTxQueues, PeerIndex: a.ParentIndex,
	}
	if s := a.Statistics; s != nil {
		out.TxPackets, out.TxBytes, out.TxDropped = s.TxPackets, s.TxBytes, s.TxDropped
		out.RxPackets, out.RxBytes, out.RxDropped = s.RxPackets, s.RxBytes, s.RxDropped
	}
	return out
}

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	Cmd, Data uint32
}

// ifreqData is struct ifreq with its ifr_data member.
type ifreqData struct {
	Name [unix.IFNAMSIZ]byte
	Data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// SetGRO turns generic receive offload on or off on the interface name in
// the calling thread's namespace (ETHTOOL_SGRO, like ethtool -K NAME gro
// on). On a veth, GRO makes the end run NAPI, which is what lets the other
// end's XDP_TX frames in without an XDP program on this one.
func SetGRO(name string, on bool) error {
	if len(name) >= unix.IFNAMSIZ {
		return fmt.Errorf("set GRO on %s: %w", name, unix.EINVAL)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("set GRO on %s: open ioctl socket: %w", name, err)
	}
	defer unix.Close(fd)
	v := ethtoolValue{Cmd: unix.ETHTOOL_SGRO}
	if on {
		v.Data = 1
	}
	var ifr ifreqData
	copy(ifr.Name[:], name)
	ifr.Data = unsafe.Pointer(&v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&v)
	switch {
	case errno == 0:
		return nil
	case errors.Is(errno, unix.EPERM):
		return fmt.Errorf("set GRO on %s: %w: needs CAP_NET_ADMIN: %w", name, ErrNotPermitted, errno)
	default:
		return fmt.Errorf("set GRO on %s: %w", name, errno)
	}
}

// PrepareReceiver readies the interface name, in the calling thread's
// namespace, to take generated traffic: GRO on, so that a veth takes its
// other end's XDP_TX frames without an XDP program of its own, and IPv4
// forwarding off on it, so that frames for 198.18.0.0/15 end in its IPv4
// receive path however net.ipv4.ip_forward is set, instead of being routed
// on. IPv6 is not touched: vethlab turns it off on its links.
func PrepareReceiver(name string) error {
	if err := SetGRO(name, true); err != nil {
		return err
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/conf/"+name+"/forwarding", []byte("0"), 0o644); err != nil {
		return fmt.Errorf("stop IPv4 forwarding on %s: %w", name, err)
	}
	return nil
}
