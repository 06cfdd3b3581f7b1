package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Capture collects copies of the frames an interface receives, through an
// AF_PACKET socket: how the generators' tests check what arrived. It is not
// a fast path.
//
// The receive path takes the outer VLAN tag out of every tagged frame
// before the socket sees it (skb_vlan_untag, whatever the offloads), so the
// capture puts it back from the packet's auxiliary data, as libpcap does:
// frames come out as they were on the wire.
type Capture struct {
	fd  int
	buf []byte
	oob []byte
}

// captureBuffer is the socket's receive buffer: deep enough to take a short
// burst at several Mpps (an skb of a small frame costs about 1 KiB of it).
const captureBuffer = 256 << 20

// NewCapture opens a capture of every frame that arrives on the interface
// name in the calling thread's namespace; frames the host sends on it are
// left out.
func NewCapture(name string) (*Capture, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("open capture on %s: %w", name, err)
	}
	proto := htons(unix.ETH_P_ALL)
	// Protocol 0 at creation: a packet socket opened with ETH_P_ALL takes frames
	// from every interface until it is bound, and other labs' traffic would
	// leak into this capture. Binding sets the protocol and the interface at once.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open capture on %s: %w", name, packetSocketError(err))
	}
	c := &Capture{fd: fd, buf: make([]byte, 1<<16), oob: make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{}))))}
	steps := []struct {
		what string
		do   func() error
	}{
		{"size receive buffer", func() error { return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, captureBuffer) }},
		{"ignore outgoing frames", func() error { return unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1) }},
		{"ask for VLAN tags", func() error { return unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1) }},
		{"bind", func() error { return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifc.Index}) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("open capture on %s: %s: %w", name, s.what, err)
		}
	}
	return c, nil
}

// Collect returns the frames received since the capture opened or the last
// Collect, up to max of them, waiting until max arrived or no frame came for
// idle.
func (c *Capture) Collect(max int, idle time.Duration) ([][]byte, error) {
	var frames [][]byte
	pfd := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}}
	for len(frames) < max {
		n, oobn, _, _, err := unix.Recvmsg(c.fd, c.buf, c.oob, unix.MSG_DONTWAIT)
		switch {
		case err == nil:
			frames = append(frames, withVLANTag(c.buf[:n], c.oob[:oobn]))
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EAGAIN):
			return frames, fmt.Errorf("receive from capture: %w", err)
		}
		ready, err := unix.Poll(pfd, int(idle.Milliseconds()))
		if err != nil && !errors.Is(err, unix.EINTR) {
			return frames, fmt.Errorf("wait for capture: %w", err)
		}
		if ready == 0 {
			break
		}
	}
	return frames, nil
}

// withVLANTag returns a copy of frame with the VLAN tag that the packet's
// auxiliary data in oob holds put back after the MAC addresses.
func withVLANTag(frame, oob []byte) []byte {
	msgs, _ := unix.ParseSocketControlMessage(oob)
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_PACKET || m.Header.Type != unix.PACKET_AUXDATA || len(m.Data) < int(unsafe.Sizeof(unix.TpacketAuxdata{})) {
			continue
		}
		aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
		if aux.Status&unix.TP_STATUS_VLAN_VALID == 0 || len(frame) < 12 {
			break
		}
		tpid := uint16(0x8100)
		if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
			tpid = aux.Vlan_tpid
		}
		out := make([]byte, 0, len(frame)+4)
		out = append(out, frame[:12]...)
		out = binary.BigEndian.AppendUint16(out, tpid)
		out = binary.BigEndian.AppendUint16(out, aux.Vlan_tci)
		return append(out, frame[12:]...)
	}
	return append([]byte(nil), frame...)
}

// Drops is the number of frames the capture socket lost for lack of buffer
// since the last call (PACKET_STATISTICS).
func (c *Capture) Drops() (uint64, error) {
	st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0, fmt.Errorf("read capture statistics: %w", err)
	}
	return uint64(st.Drops), nil
}

// Close closes the capture socket. Closing twice is allowed.
func (c *Capture) Close() error {
	if c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	if err != nil {
		return fmt.Errorf("close capture: %w", err)
	}
	return nil
}

// htons converts a 16-bit protocol number to network order, as AF_PACKET
// takes it.
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// socketError adds the usual cause to a refused packet socket.
func packetSocketError(err error) error {
	if errors.Is(err, unix.EPERM) {
		return fmt.Errorf("%w: packet sockets need CAP_NET_RAW: %w", ErrNotPermitted, err)
	}
	return err
}
