package virtiolab_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pktgen"
)

// blastFrames is how many frames BenchmarkUnpacedBlast sends.
const blastFrames = 40960

// BenchmarkUnpacedBlast boots TestDeviceHashAndQueue's guest and sends it
// 40,960 datacenter frames as fast as the host's sender can (pktgen mode
// packet, no pacing), once per iteration: the measurement of the guest's
// stall (docs/virtio-lab.md). Sub-benchmark steered enters every frame on
// the tap queue of its RSS queue (Lab.SteerByRSS); unsteered leaves the
// queue to the tap (by flow), as the lab did before; missteered, the
// control, enters every frame on the queue after its RSS queue, so that
// QEMU moves every one. It reports how many
// boots stalled (the sender gave up after 10 s of refusals) and the frames
// QEMU read from the tap. A measurement, not a test: it fails only when
// the lab does.
func BenchmarkUnpacedBlast(b *testing.B) {
	for _, how := range []string{"steered", "unsteered", "missteered"} {
		b.Run(how, func(b *testing.B) {
			k := requireLab(b, "")
			bin := xdptest.XdphashBinary(b)
			var stalls, read float64
			for range b.N {
				s, r := blastOnce(b, k, bin, how)
				stalls += s
				read += r
			}
			b.ReportMetric(stalls/float64(b.N), "stalls/boot")
			b.ReportMetric(read/float64(b.N), "read/boot")
		})
	}
}

// blastOnce is one boot of BenchmarkUnpacedBlast: 1 if it stalled, and the
// frames QEMU read from the tap.
func blastOnce(b *testing.B, k virtiolab.Kernel, bin, how string) (stalled, read float64) {
	b.StopTimer()
	l := bootDeviceLab(b, k, bin)
	defer l.Close()
	cfg := pktgen.Config{Iface: l.Tap, Enter: l.InNS, Mode: pktgen.ModePacket, Count: blastFrames}
	switch how {
	case "steered":
		cfg.Mark = steer(b, l)
	case "missteered":
		mark := steer(b, l)
		cfg.Mark = func(frame []byte) uint32 { return (mark(frame) + 1) % 4 }
	}
	b.StartTimer()
	t0 := time.Now()
	rep, err := pktgen.Run(context.Background(), datacenter(b), cfg)
	elapsed := time.Since(t0)
	b.StopTimer()
	if errors.Is(err, kernel.ErrReceiverStalled) {
		tap := tapStats(b, l)
		b.Logf("%s: STALLED: %d frames read by QEMU, %d refused (%v)", how, tap.TxPackets, tap.TxDropped, err)
		return 1, float64(tap.TxPackets)
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := l.Stop(rep.Frames); err != nil {
		b.Fatal(err)
	}
	res, err := l.Wait()
	if err != nil {
		b.Fatal(err)
	}
	tap := tapStats(b, l)
	rx := res.Report.Iface.After["rx_packets"] - res.Report.Iface.Before["rx_packets"]
	b.Logf("%s: %d frames sent in %v (%.0f pps), %d read by QEMU, %d refused and sent again, %d received by the guest's eth0",
		how, rep.Frames, elapsed.Round(time.Millisecond), float64(rep.Frames)/elapsed.Seconds(), tap.TxPackets, tap.TxDropped, rx)
	if rx != blastFrames || tap.TxPackets != blastFrames {
		b.Errorf("%d sent, %d out of the tap, %d received by the guest; want all %d", rep.Frames, tap.TxPackets, rx, blastFrames)
	}
	if how == "steered" {
		checkSteered(b, l, blastFrames, res.Report.Iface)
	}
	return 0, float64(tap.TxPackets)
}
