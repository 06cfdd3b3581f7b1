package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReadRSS reads the RSS key, hash function and indirection table of
// interface name in the calling thread's network namespace, as `ethtool -x`
// does (ETHTOOL_GRSSH, Linux 4.4; default RSS context). A driver without RSS
// to show (veth, for one) gives an error wrapping ErrNotSupported.
func ReadRSS(name string) (RSSConfig, error) {
	// First the sizes: a request for an empty table and no key.
	hdr := make([]byte, rxfhHeaderLen)
	binary.NativeEndian.PutUint32(hdr[rxfhCmd:], unix.ETHTOOL_GRSSH)
	if err := ethtool(name, unsafe.Pointer(&hdr[0])); err != nil {
		return RSSConfig{}, rssError(name, "read RSS configuration", err)
	}
	indir, key, err := rxfhSizes(hdr)
	if err != nil {
		return RSSConfig{}, fmt.Errorf("read RSS configuration of %s: %w", name, err)
	}
	if indir == 0 && key == 0 {
		return RSSConfig{}, fmt.Errorf("read RSS configuration of %s: %w: the driver reports neither an indirection table nor a key", name, ErrNotSupported)
	}
	buf := make([]byte, rxfhHeaderLen+4*indir+key)
	copy(buf, hdr)
	if err := ethtool(name, unsafe.Pointer(&buf[0])); err != nil {
		return RSSConfig{}, rssError(name, "read RSS configuration", err)
	}
	c, err := decodeRXFH(buf)
	if err != nil {
		return RSSConfig{}, fmt.Errorf("read RSS configuration of %s: %w", name, err)
	}
	return c, nil
}

// ethtoolRXNFCHeaderLen is the part of struct ethtool_rxnfc that
// ETHTOOL_GRXFH reads and writes: cmd, flow_type (u32 each) and data (u64),
// the structure's original definition, which the kernel still accepts.
const ethtoolRXNFCHeaderLen = 16

// ReadRSSHashFields reads which header fields interface name feeds its RSS
// hash for flows of type flow, as `ethtool -n IFACE rx-flow-hash tcp4` does
// (ETHTOOL_GRXFH). A driver without RSS gives an error wrapping
// ErrNotSupported.
func ReadRSSHashFields(name string, flow RSSFlowType) (RXHashFields, error) {
	var b [ethtoolRXNFCHeaderLen]byte
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], unix.ETHTOOL_GRXFH)
	ne.PutUint32(b[4:], uint32(flow))
	if err := ethtool(name, unsafe.Pointer(&b[0])); err != nil {
		return 0, rssError(name, "read RSS hash fields for "+flow.String(), err)
	}
	return RXHashFields(ne.Uint64(b[8:])), nil
}

// rssError explains a refused RSS request.
func rssError(name, what string, err error) error {
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("%s of %s: %w: the driver has no RSS to read (veth never has): %w", what, name, ErrNotSupported, err)
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES):
		return fmt.Errorf("%s of %s: %w: needs CAP_NET_ADMIN; run as root: %w", what, name, ErrNotPermitted, err)
	case errors.Is(err, unix.ENODEV):
		return fmt.Errorf("%s of %s: no such interface (see `ip link`): %w", what, name, err)
	default:
		return fmt.Errorf("%s of %s: %w", what, name, err)
	}
}
