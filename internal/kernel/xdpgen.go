package kernel

import (
	"errors"
	"fmt"
	"time"
)

// Traffic generators: this file and the xdpgen*_linux.go files hold the
// senders behind package pktgen. Each sends the frames of a FrameTable in its
// order, from one OS thread, and counts exactly what it handed to the kernel:
//
//   - XDPGen runs an XDP program with BPF_PROG_RUN in live-frames mode
//     (BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18): the program writes the next
//     frame's head into a page-pool page and returns XDP_TX, so the kernel
//     transmits it out of the interface named in the run's context.
//   - XSKSender transmits from an AF_XDP socket's TX ring (copy mode on veth).
//   - PacketSender writes batches with sendmmsg on an AF_PACKET socket that
//     bypasses the qdisc.

// PaceSlack and PaceBurst bound a paced sender's catch-up: when its thread
// was held up (preempted, interrupted), the frames that fell due meanwhile go
// out at once, but at most PaceSlack's worth, or PaceBurst frames where that
// is more (at rates below PaceBurst per PaceSlack); the others are skipped,
// and the rate over the run falls short by as much. The burst bound in
// frames is what a receiver's rings see; the time bound alone would skip,
// at low rates, frames that a ring of a few dozen takes at once.
const (
	PaceSlack = time.Millisecond
	PaceBurst = 64
)

// PaceCatchUp is how far a sender paced at pps frames per second may lag
// its schedule before it skips frames: PaceSlack, or PaceBurst frames'
// time where that is longer.
func PaceCatchUp(pps float64) time.Duration {
	if !(pps > 0) {
		return PaceSlack
	}
	return max(PaceSlack, time.Duration(PaceBurst/pps*float64(time.Second)))
}

// MinPacedRate is the lowest rate Pace keeps: one frame a second. Slower
// rates need no pacing in the kernel.
const MinPacedRate = 1.0

// HeadLen is how many leading bytes of a frame the generators write per sent
// frame. Everything after it is zero in every frame of a FrameTable, so a
// buffer whose tail is zero once becomes any frame by a HeadLen-byte copy and
// a length: no allocation and no full-frame copy per frame. 128 bytes hold
// the longest header stack pktgen builds (IPv6 + GRE with key + IPv6 + TCP is
// 122 bytes) and are 16 eight-byte moves in the XDP program.
const HeadLen = 128

// Frame lengths a FrameTable accepts: an Ethernet frame without its FCS, at
// least the 60 bytes Ethernet pads to, at most what fits one page in the
// live-frames test run (4096 bytes minus 256 of XDP headroom, 320 of
// skb_shared_info and the page head the kernel keeps there).
const (
	MinFrameLen = 60
	MaxFrameLen = 3456
)

// FrameTable is a cyclic send schedule: the i-th frame sent is frame
// Order[i mod len(Order)]. Frame k is Lens[k] bytes long, starts with
// Heads[k*HeadLen:(k+1)*HeadLen] and is zero after its head (its payload),
// so a frame longer than HeadLen has a zero payload tail and a shorter one
// has zeros in its head past its length.
type FrameTable struct {
	Heads []byte
	Lens  []uint16
	Order []uint32
	// Marks, when set, holds one skb mark per frame (Marks[k] for frame
	// k) that PacketSender gives each frame it sends (SO_MARK): for a
	// program that steers by it, such as a tap's steering program.
	Marks []uint32
}

// maxCycle bounds len(Order): the XDP program takes the position modulo the
// cycle with a 32-bit signed immediate.
const maxCycle = 1 << 30

// Validate checks the table's invariants.
func (t *FrameTable) Validate() error {
	switch {
	case len(t.Lens) == 0 || len(t.Order) == 0:
		return errors.New("validate frame table: no frames")
	case len(t.Heads) != HeadLen*len(t.Lens):
		return fmt.Errorf("validate frame table: %d bytes of heads for %d frames, want %d", len(t.Heads), len(t.Lens), HeadLen*len(t.Lens))
	case len(t.Order) > maxCycle:
		return fmt.Errorf("validate frame table: cycle of %d frames is longer than %d", len(t.Order), maxCycle)
	case t.Marks != nil && len(t.Marks) != len(t.Lens):
		return fmt.Errorf("validate frame table: %d marks for %d frames", len(t.Marks), len(t.Lens))
	}
	for k, n := range t.Lens {
		if n < MinFrameLen || n > MaxFrameLen {
			return fmt.Errorf("validate frame table: frame %d is %d bytes, want %d to %d", k, n, MinFrameLen, MaxFrameLen)
		}
		if n < HeadLen {
			for _, b := range t.Heads[k*HeadLen+int(n) : (k+1)*HeadLen] {
				if b != 0 {
					return fmt.Errorf("validate frame table: frame %d has non-zero bytes in its head past its length %d", k, n)
				}
			}
		}
	}
	for i, k := range t.Order {
		if int(k) >= len(t.Lens) {
			return fmt.Errorf("validate frame table: position %d names frame %d of %d", i, k, len(t.Lens))
		}
	}
	return nil
}

// MaxLen is the length of the table's longest frame.
func (t *FrameTable) MaxLen() int {
	var m uint16
	for _, n := range t.Lens {
		m = max(m, n)
	}
	return int(m)
}

// Put makes buf the frame at position pos of the cycle (0 <= pos <
// len(Order)) and returns its length. buf must hold max(HeadLen, MaxLen())
// bytes and be zero past HeadLen, as a buffer that only Put writes to stays.
func (t *FrameTable) Put(buf []byte, pos int) int {
	k := int(t.Order[pos])
	copy(buf[:HeadLen], t.Heads[k*HeadLen:(k+1)*HeadLen])
	return int(t.Lens[k])
}

// bufLen is the length of a buffer that Put can turn into any frame of t.
func (t *FrameTable) bufLen() int { return max(HeadLen, t.MaxLen()) }
