package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtool string sets and lengths (include/uapi/linux/ethtool.h).
const (
	ethSSStats       = 1  // ETH_SS_STATS
	ethGStringLen    = 32 // ETH_GSTRING_LEN
	maxDriverStats   = 1 << 14
	ssetInfoHeader   = 16 // cmd, reserved, sset_mask
	gstringsHeader   = 12 // cmd, string_set, len
	gstatsHeader     = 8  // cmd, n_stats
	driverStatsLimit = "at most 16384"
)

// DriverStats reads the driver's own counters of interface name in the
// calling thread's namespace, as `ethtool -S name` shows them
// (ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS): virtio-net's
// rx_queue_0_xdp_redirects and the like.
func DriverStats(name string) (map[string]uint64, error) {
	ne := binary.NativeEndian
	info := make([]byte, ssetInfoHeader+4)
	ne.PutUint32(info[0:], unix.ETHTOOL_GSSET_INFO)
	ne.PutUint64(info[8:], 1<<ethSSStats)
	if err := ethtool(name, unsafe.Pointer(&info[0])); err != nil {
		return nil, fmt.Errorf("read driver statistics of %s: %w", name, err)
	}
	if ne.Uint64(info[8:])&(1<<ethSSStats) == 0 {
		return map[string]uint64{}, nil
	}
	n := int(ne.Uint32(info[ssetInfoHeader:]))
	if n > maxDriverStats {
		return nil, fmt.Errorf("read driver statistics of %s: %d counters, %s", name, n, driverStatsLimit)
	}
	strs := make([]byte, gstringsHeader+n*ethGStringLen)
	ne.PutUint32(strs[0:], unix.ETHTOOL_GSTRINGS)
	ne.PutUint32(strs[4:], ethSSStats)
	ne.PutUint32(strs[8:], uint32(n))
	if err := ethtool(name, unsafe.Pointer(&strs[0])); err != nil {
		return nil, fmt.Errorf("read driver statistics names of %s: %w", name, err)
	}
	vals := make([]byte, gstatsHeader+n*8)
	ne.PutUint32(vals[0:], unix.ETHTOOL_GSTATS)
	ne.PutUint32(vals[4:], uint32(n))
	if err := ethtool(name, unsafe.Pointer(&vals[0])); err != nil {
		return nil, fmt.Errorf("read driver statistics of %s: %w", name, err)
	}
	if got := int(ne.Uint32(vals[4:])); got < n {
		n = got
	}
	out := make(map[string]uint64, n)
	for i := range n {
		s := strs[gstringsHeader+i*ethGStringLen : gstringsHeader+(i+1)*ethGStringLen]
		if j := bytes.IndexByte(s, 0); j >= 0 {
			s = s[:j]
		}
		out[string(s)] = ne.Uint64(vals[gstatsHeader+8*i:])
	}
	return out, nil
}
