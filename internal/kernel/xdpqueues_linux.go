package kernel

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// RXQueues is the number of receive queues interface name has in use (its
// real_num_rx_queues): AF_XDP sockets bind to queues 0 to RXQueues-1.
//
// It counts /sys/class/net/NAME/queues/rx-*, when that directory describes
// this interface: sysfs shows the network namespace of whoever mounted it,
// which may not be the caller's. Otherwise it asks the driver for its channels
// (ethtool -l: rx plus combined).
func RXQueues(name string) (int, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return 0, fmt.Errorf("count RX queues of %s: %w", name, err)
	}
	if n, ok := sysfsRXQueues(ifi); ok {
		return n, nil
	}
	n, err := ethtoolRXChannels(name)
	if err != nil {
		return 0, fmt.Errorf("count RX queues of %s: sysfs does not show it and ethtool channels failed: %w", name, err)
	}
	return n, nil
}

// sysfsRXQueues counts the rx-N directories of ifi in sysfs, if sysfs shows ifi.
func sysfsRXQueues(ifi *net.Interface) (int, bool) {
	dir := filepath.Join("/sys/class/net", ifi.Name)
	b, err := os.ReadFile(filepath.Join(dir, "ifindex"))
	if err != nil {
		return 0, false
	}
	if idx, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || idx != ifi.Index {
		return 0, false
	}
	entries, err := os.ReadDir(filepath.Join(dir, "queues"))
	if err != nil {
		return 0, false
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "rx-") {
			n++
		}
	}
	return n, n > 0
}

// ethtoolChannels is struct ethtool_channels (include/uapi/linux/ethtool.h).
type ethtoolChannels struct {
	Cmd                                         uint32
	MaxRx, MaxTx, MaxOther, MaxCombined         uint32
	RxCount, TxCount, OtherCount, CombinedCount uint32
}

// ethtoolRXChannels asks the driver for its channels (ETHTOOL_GCHANNELS) and
// returns the receive ones: rx-only plus combined.
func ethtoolRXChannels(name string) (int, error) {
	ch := ethtoolChannels{Cmd: unix.ETHTOOL_GCHANNELS}
	if err := ethtool(name, unsafe.Pointer(&ch)); err != nil {
		return 0, fmt.Errorf("ethtool channels: %w", err)
	}
	return int(ch.RxCount + ch.CombinedCount), nil
}

// ethtool runs the SIOCETHTOOL request whose command structure data points
// to on interface name (in the calling thread's network namespace); the
// driver fills the structure in. The error is the errno, or a name too long.
func ethtool(name string, data unsafe.Pointer) error {
	if len(name) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long", name)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// struct ifreq with ifr_data set: a typed pointer, so that the runtime
	// keeps it right if it moves the stack.
	var ifr struct {
		name [unix.IFNAMSIZ]byte
		data unsafe.Pointer
		_    [24 - unsafe.Sizeof(uintptr(0))]byte
	}
	copy(ifr.name[:], name)
	ifr.data = data
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
		return errno
	}
	return nil
}
