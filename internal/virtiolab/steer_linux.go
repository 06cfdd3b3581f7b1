package virtiolab

import (
	"errors"
	"fmt"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/nicrss"
)

// SteerByRSS makes every frame enter QEMU on the tap queue whose device
// queue the device's RSS delivers it to, so that QEMU never moves a frame
// from one queue to another. QEMU 7.2's software RSS does so without
// looking whether the other queue has room; when it has none, the frame
// waits on the queue it came from, which only a notification of that
// queue retries, and the guest stops taking frames (docs/virtio-lab.md).
//
// Call it once the guest is ready (WaitReady): it reads the device's key,
// table and hash fields that the guest printed then, and sets a steering
// program on the tap (QEMU clears it whenever the guest configures RSS, so
// not before). The function it returns gives a frame's mark, the queue
// the device's RSS picks for it (package nicrss, with the quirks of the
// lab's QEMU): pktgen.Config.Mark. Close removes the program.
func (l *Lab) SteerByRSS() (func(frame []byte) uint32, error) {
	st := l.rss.Load()
	if st == nil {
		return nil, l.guestError("steer by RSS: the guest reported no RSS configuration (a receiving step does once it is ready)")
	}
	quirks, err := NICQuirks()
	if err != nil {
		return nil, fmt.Errorf("virtio lab: steer by RSS: %w", err)
	}
	n := &nicrss.NIC{HashFunction: "toeplitz", Key: st.Key, Indirection: st.Table, Queues: len(l.taps), Fields: map[string]string{}, Quirks: quirks}
	for flow, bits := range st.Fields {
		n.Fields[flow] = nicrss.FieldLetters(bits)
	}
	h, err := n.Hasher()
	if err != nil {
		return nil, fmt.Errorf("virtio lab: steer by RSS: the device's RSS: %w", err)
	}
	l.steerMu.Lock()
	defer l.steerMu.Unlock()
	if l.steer != nil {
		if err := l.steer.Close(); err != nil {
			return nil, fmt.Errorf("virtio lab: steer by RSS: %w", err)
		}
		l.steer = nil
	}
	if l.steer, err = kernel.AttachTapSteering(int(l.taps[0].Fd()), len(l.taps)); err != nil {
		return nil, fmt.Errorf("virtio lab: steer by RSS: %w", err)
	}
	spread := h.Spread()
	return func(frame []byte) uint32 { return uint32(spread(frame)) }, nil
}

// Steered is what the tap's steering program (SteerByRSS) counted: the
// frames it put on each queue, and those whose mark named none.
func (l *Lab) Steered() (kernel.TapSteered, error) {
	l.steerMu.Lock()
	defer l.steerMu.Unlock()
	if l.steer == nil {
		return kernel.TapSteered{}, errors.New("virtio lab: the tap has no steering program (SteerByRSS)")
	}
	c, err := l.steer.Counts()
	if err != nil {
		return c, fmt.Errorf("virtio lab: %w", err)
	}
	return c, nil
}
