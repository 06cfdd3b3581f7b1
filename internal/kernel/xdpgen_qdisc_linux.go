package kernel

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ThroughQdisc makes the sender's frames go through the interface's qdisc
// layer (dev_queue_xmit) instead of straight to the driver: slower, but
// they then pass the egress hook, where TCX and tc programs such as
// VLANPush run. Call it before the first Send.
func (s *PacketSender) ThroughQdisc() error {
	if err := unix.SetsockoptInt(s.fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 0); err != nil {
		return fmt.Errorf("packet socket: send through the qdisc layer: %w", err)
	}
	return nil
}
