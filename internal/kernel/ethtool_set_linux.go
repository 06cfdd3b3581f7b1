package kernel

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WriteRSS sets the RSS key and indirection table of interface name in the
// calling thread's namespace (ETHTOOL_SRSSH, default context; the hash
// function is left as it is), as `ethtool -X name hkey KEY` with a table
// does. A nil key leaves the key, a nil table the table.
func WriteRSS(name string, key []byte, table []uint32) error {
	buf := make([]byte, rxfhHeaderLen+4*len(table)+len(key))
	ne := binary.NativeEndian
	ne.PutUint32(buf[rxfhCmd:], unix.ETHTOOL_SRSSH)
	ne.PutUint32(buf[rxfhIndirSize:], uint32(len(table)))
	ne.PutUint32(buf[rxfhKeySize:], uint32(len(key)))
	for i, q := range table {
		ne.PutUint32(buf[rxfhHeaderLen+4*i:], q)
	}
	copy(buf[rxfhHeaderLen+4*len(table):], key)
	if err := ethtool(name, unsafe.Pointer(&buf[0])); err != nil {
		return rssError(name, "write RSS configuration", err)
	}
	return nil
}

// SetCombinedChannels sets the combined channels (queue pairs) of interface
// name to n (ETHTOOL_SCHANNELS, as `ethtool -L name combined n`) and returns
// the count the driver allows at most.
func SetCombinedChannels(name string, n int) (maxCombined int, err error) {
	ch := ethtoolChannels{Cmd: unix.ETHTOOL_GCHANNELS}
	if err := ethtool(name, unsafe.Pointer(&ch)); err != nil {
		return 0, fmt.Errorf("read channels of %s: %w", name, err)
	}
	if ch.CombinedCount == uint32(n) {
		return int(ch.MaxCombined), nil
	}
	ch.Cmd, ch.CombinedCount = unix.ETHTOOL_SCHANNELS, uint32(n)
	if err := ethtool(name, unsafe.Pointer(&ch)); err != nil {
		return int(ch.MaxCombined), fmt.Errorf("set %s to %d combined channels (at most %d): %w", name, n, ch.MaxCombined, err)
	}
	return int(ch.MaxCombined), nil
}

// ethFlagRXHash is ETH_FLAG_RXHASH of ETHTOOL_[GS]FLAGS: the device hands
// its receive hash to the kernel (`ethtool -k` shows it as receive-hashing).
const ethFlagRXHash = 1 << 28

// RXHash tells whether interface name in the calling thread's namespace
// hands its receive hash to the kernel (ETHTOOL_GFLAGS): without it a
// device hashes nothing for the XDP metadata kfunc (ENODATA).
func RXHash(name string) (bool, error) {
	v := ethtoolValue{Cmd: unix.ETHTOOL_GFLAGS}
	if err := ethtool(name, unsafe.Pointer(&v)); err != nil {
		return false, fmt.Errorf("read the offload flags of %s: %w", name, err)
	}
	return v.Data&ethFlagRXHash != 0, nil
}

// ethFlagRXVLAN is ETH_FLAG_RXVLAN: the device strips VLAN tags on receive.
const ethFlagRXVLAN = 1 << 8

// RXVLANStrip tells whether interface name strips VLAN tags on receive
// (ETHTOOL_GFLAGS; `ethtool -k` shows it as rx-vlan-offload).
func RXVLANStrip(name string) (bool, error) {
	v := ethtoolValue{Cmd: unix.ETHTOOL_GFLAGS}
	if err := ethtool(name, unsafe.Pointer(&v)); err != nil {
		return false, fmt.Errorf("read the offload flags of %s: %w", name, err)
	}
	return v.Data&ethFlagRXVLAN != 0, nil
}

// SetRXHash turns the receive hash of interface name on or off
// (ETHTOOL_SFLAGS, as `ethtool -K name rxhash on`).
func SetRXHash(name string, on bool) error {
	v := ethtoolValue{Cmd: unix.ETHTOOL_GFLAGS}
	if err := ethtool(name, unsafe.Pointer(&v)); err != nil {
		return fmt.Errorf("read the offload flags of %s: %w", name, err)
	}
	v.Cmd = unix.ETHTOOL_SFLAGS
	if on {
		v.Data |= ethFlagRXHash
	} else {
		v.Data &^= ethFlagRXHash
	}
	if err := ethtool(name, unsafe.Pointer(&v)); err != nil {
		return fmt.Errorf("turn rxhash %s on %s: %w", map[bool]string{true: "on", false: "off"}[on], name, err)
	}
	return nil
}

// WriteRSSHashFields sets which header fields interface name feeds its RSS
// hash for flows of type flow (ETHTOOL_SRXFH, as `ethtool -N name
// rx-flow-hash udp4 sd` does). A driver that refuses the set gives its
// error (EINVAL: a set it does not offer for that flow type).
func WriteRSSHashFields(name string, flow RSSFlowType, fields RXHashFields) error {
	var b [ethtoolRXNFCHeaderLen]byte
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], unix.ETHTOOL_SRXFH)
	ne.PutUint32(b[4:], uint32(flow))
	ne.PutUint64(b[8:], uint64(fields))
	if err := ethtool(name, unsafe.Pointer(&b[0])); err != nil {
		return rssError(name, "write RSS hash fields for "+flow.String(), err)
	}
	return nil
}
