package kernel

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// BenchmarkXDPRunStart is what one BPF_PROG_RUN of the generator costs
// when its gate sends nothing (the next frame due in an hour): the start-up
// of a test run of repeat 1 and of repeat 2, which swaps the program into
// the XDP dispatcher and out again (docs/pktgen-pacing.md has the figures).
func BenchmarkXDPRunStart(b *testing.B) {
	lab := newGenLab(b)
	ft, _ := testTable(lab.HostMAC, []int{64}, []uint32{0})
	gen := newXDPGen(b, ft)
	for _, repeat := range []uint32{1, 2} {
		b.Run(fmt.Sprintf("repeat=%d", repeat), func(b *testing.B) {
			err := withXDPSender(lab, gen, func(s *XDPSender) error {
				if err := s.Pace(1); err != nil {
					return err
				}
				now, err := monotonicNs()
				if err != nil {
					return err
				}
				if err := s.setSlot(math.MaxUint64, now+uint64(time.Hour)); err != nil {
					return err
				}
				s.attr.Repeat = repeat
				for b.Loop() {
					if errno := testRun(&s.attr); errno != 0 {
						b.Fatalf("test run: %v", errno)
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
