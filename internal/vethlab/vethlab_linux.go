package vethlab

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Prefix starts the name of every namespace and link a lab creates: "xhl" then
// the creating process's id, a dash-free counter and a role letter.
const Prefix = "xhl"

// Config describes a lab.
type Config struct {
	Queues int // RX and TX queues on each veth end (default 2)
	MTU    int // default 1500
	// Named also gives the namespace a name under /run/netns (a bind mount),
	// for tools that enter it by name (`ip netns exec`, `pktgen --netns`).
	// A named lab outlives a process killed with SIGKILL until the next New
	// sweeps it; an unnamed one (the default) is held by a file descriptor
	// only, so the kernel frees the namespace, and the veth pair with it, when
	// the process ends, however it ends.
	Named bool
}

// Lab is one namespace and veth pair. Its zero value is not usable; see New.
type Lab struct {
	NSName     string // the namespace, as `ip netns` names it; empty unless Config.Named
	Host, Peer string // the veth ends: Host in the caller's namespace, Peer inside NSName
	HostIndex  int
	PeerIndex  int // ifindex inside NSName
	HostMAC    net.HardwareAddr
	PeerMAC    net.HardwareAddr
	Queues     int
	ns         netns.NsHandle
	closeOnce  sync.Once
	closeErr   error
}

var counter atomic.Uint32

// New creates a namespace and a veth pair with cfg.Queues queues per end, both
// ends up, IPv6 disabled on both (so the kernel sends no neighbour discovery of
// its own on them), and locally administered MAC addresses. It first removes
// labs whose creating process is gone.
func New(cfg Config) (_ *Lab, err error) {
	if cfg.Queues <= 0 {
		cfg.Queues = 2
	}
	if cfg.MTU <= 0 {
		cfg.MTU = 1500
	}
	Sweep()
	id := fmt.Sprintf("%s%d%c", Prefix, os.Getpid(), 'a'+rune(counter.Add(1)%26))
	l := &Lab{NSName: id + "n", Host: id + "h", Peer: id + "p", Queues: cfg.Queues,
		HostMAC: net.HardwareAddr{0x02, 0x78, 0x68, 0, 0, 1}, PeerMAC: net.HardwareAddr{0x02, 0x78, 0x68, 0, 0, 2}}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()

	if !cfg.Named {
		l.NSName = ""
	}
	if l.ns, err = newNS(l.NSName); err != nil {
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("create network namespace: %w (needs root, or CAP_SYS_ADMIN with CAP_NET_ADMIN and CAP_BPF)", err)
		}
		return nil, fmt.Errorf("create network namespace: %w", err)
	}
	veth := &netlink.Veth{
		LinkAttrs: netlink.LinkAttrs{Name: l.Host, NumTxQueues: cfg.Queues, NumRxQueues: cfg.Queues, MTU: cfg.MTU, HardwareAddr: l.HostMAC},
		PeerName:  l.Peer, PeerHardwareAddr: l.PeerMAC, PeerNamespace: netlink.NsFd(l.ns),
	}
	// The peer's queue counts come from the same attributes in the kernel's
	// veth_newlink when the peer's own are not given.
	if err := netlink.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("create veth pair %s/%s: %w (needs root or CAP_NET_ADMIN)", l.Host, l.Peer, err)
	}
	host, err := netlink.LinkByName(l.Host)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", l.Host, err)
	}
	l.HostIndex = host.Attrs().Index
	disableIPv6(l.Host)
	if err := netlink.LinkSetUp(host); err != nil {
		return nil, fmt.Errorf("set %s up: %w", l.Host, err)
	}
	err = l.InPeer(func() error {
		peer, err := netlink.LinkByName(l.Peer)
		if err != nil {
			return fmt.Errorf("find %s: %w", l.Peer, err)
		}
		l.PeerIndex = peer.Attrs().Index
		disableIPv6(l.Peer)
		if err := netlink.LinkSetUp(peer); err != nil {
			return fmt.Errorf("set %s up: %w", l.Peer, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// newNS creates a network namespace without moving the caller into it and
// returns a handle to it; a non-empty name also mounts it under /run/netns.
// The namespace is made on a thread of its own that is never unlocked, so the
// thread ends with its goroutine and no goroutine of the caller ever runs in
// the new namespace (or in a half-made one when something fails).
func newNS(name string) (netns.NsHandle, error) {
	type made struct {
		ns  netns.NsHandle
		err error
	}
	c := make(chan made, 1)
	go func() {
		runtime.LockOSThread()
		var m made
		if name != "" {
			m.ns, m.err = netns.NewNamed(name)
		} else {
			m.ns, m.err = netns.New()
		}
		c <- m
	}()
	m := <-c
	return m.ns, m.err
}

// disableIPv6 stops the kernel's own IPv6 traffic (router and neighbour
// solicitations) on a link, so that a test counts only the frames it sent. It is
// best effort: without the sysctl (IPv6 compiled out) there is nothing to stop.
func disableIPv6(link string) {
	_ = os.WriteFile(filepath.Join("/proc/sys/net/ipv6/conf", link, "disable_ipv6"), []byte("1"), 0o644)
}

// InPeer runs fn on an OS thread switched into the lab's namespace, for
// anything that resolves interfaces by the calling thread's namespace (sockets,
// BPF test runs with an ifindex). Sockets opened in fn stay in that namespace
// after it returns.
func (l *Lab) InPeer(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is not unlocked: a goroutine that exits while locked takes
		// its thread with it, so no other goroutine ever runs in the namespace.
		runtime.LockOSThread()
		if err := netns.Set(l.ns); err != nil {
			errc <- fmt.Errorf("enter the network namespace of %s: %w", l.Peer, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// Close deletes the veth pair (deleting one end deletes both) and the
// namespace. It is safe to call more than once.
func (l *Lab) Close() error {
	l.closeOnce.Do(func() {
		var errs []error
		if link, err := netlink.LinkByName(l.Host); err == nil {
			if err := netlink.LinkDel(link); err != nil {
				errs = append(errs, fmt.Errorf("delete %s: %w", l.Host, err))
			}
		}
		if l.ns.IsOpen() {
			l.ns.Close()
		}
		if l.NSName != "" {
			if err := netns.DeleteNamed(l.NSName); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("delete network namespace %s: %w", l.NSName, err))
			}
		}
		l.closeErr = errors.Join(errs...)
	})
	return l.closeErr
}

// Sweep removes the namespaces and links of labs whose creating process no
// longer runs (a kill -9 leaves them behind).
func Sweep() {
	dead := func(name string) bool {
		rest, ok := strings.CutPrefix(name, Prefix)
		if !ok {
			return false
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end <= 0 {
			return false
		}
		pid, err := strconv.Atoi(rest[:end])
		if err != nil {
			return false
		}
		_, err = os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
		return errors.Is(err, os.ErrNotExist)
	}
	if links, err := netlink.LinkList(); err == nil {
		for _, l := range links {
			if dead(l.Attrs().Name) {
				_ = netlink.LinkDel(l)
			}
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if dead(e.Name()) {
			_ = netns.DeleteNamed(e.Name())
		}
	}
}

// Leftovers lists the namespaces and links with the lab prefix that exist now,
// for tests that check nothing outlives them.
func Leftovers() []string {
	var out []string
	if links, err := netlink.LinkList(); err == nil {
		for _, l := range links {
			if strings.HasPrefix(l.Attrs().Name, Prefix) {
				out = append(out, "link "+l.Attrs().Name)
			}
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), Prefix) {
			out = append(out, "netns "+e.Name())
		}
	}
	return out
}
