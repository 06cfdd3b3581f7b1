package soak

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/pipeline/source"
)

// deviceTCI is the hardware VLAN tag the device check gives every other
// frame: priority 3, VLAN 0x123.
const deviceTCI = 3<<13 | 0x123

// attachDevicePush makes sure src runs the metadata program (else the check
// has nothing to compare) and attaches the VLAN push to the lab's sending
// end.
func attachDevicePush(lab *vethlab.Lab, src source.Source) (*kernel.VLANPush, error) {
	if info := src.Info(); !info.Metadata {
		return nil, fmt.Errorf("soak device check: %w: the AF_XDP source runs %s", kernel.ErrNotSupported, info.XDPProgram)
	}
	var push *kernel.VLANPush
	err := lab.InPeer(func() (err error) {
		push, err = kernel.AttachVLANPush(lab.PeerIndex, unix.ETH_P_8021Q, deviceTCI)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("soak device check: %w", err)
	}
	return push, nil
}
