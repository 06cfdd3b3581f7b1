package kernel

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// withXDPSender runs fn with a sender of gen on the lab's Peer end, from a
// thread pinned to CPU 0, and closes the sender after it.
func withXDPSender(lab *vethlab.Lab, gen *XDPGen, fn func(s *XDPSender) error) error {
	return lab.InPeer(func() error {
		if err := SetAffinity(0); err != nil {
			return err
		}
		s, err := gen.NewSender(lab.PeerIndex, 0, 0, 0)
		if err != nil {
			return err
		}
		defer s.Close()
		return fn(s)
	})
}

// TestXDPPaceGate drives the generator program's pacing gate with the due
// time far from the clock either way, so that what it does is decided
// whatever the machine's speed: a frame due in an hour is not sent however
// often the program runs; frames due long ago are caught up, PaceBurst of
// them and the one due now when the interval is a second (the catch-up is
// bounded by PaceCatchUp: PaceBurst seconds at one frame a second), and the
// due time moves to the clock less the catch-up plus every interval sent;
// the limit stops a sender paced at the fastest rate exactly there.
func TestXDPPaceGate(t *testing.T) {
	lab := newGenLab(t)
	ft, _ := testTable(lab.HostMAC, []int{64}, []uint32{0})
	gen := newXDPGen(t, ft)
	before := xdptest.HostRxPackets(t, lab)
	err := withXDPSender(lab, gen, func(s *XDPSender) error {
		run := func(repeat uint32) uint64 {
			t.Helper()
			at := s.pos
			s.attr.Repeat = repeat
			if errno := testRun(&s.attr); errno != 0 {
				t.Fatalf("test run: %v", errno)
			}
			pos, err := s.cursor()
			if err != nil {
				t.Fatal(err)
			}
			s.pos = pos
			return pos - at
		}
		slot := func() (due, acc uint64) {
			t.Helper()
			s.cursorKey = uint32(s.cpu)
			if err := gen.cursors.Lookup(&s.cursorKey, &s.cursorVal); err != nil {
				t.Fatal(err)
			}
			return binary.NativeEndian.Uint64(s.cursorVal[slotDue:]), binary.NativeEndian.Uint64(s.cursorVal[slotAcc:])
		}

		const hour, second = uint64(time.Hour), uint64(time.Second)
		if err := s.Pace(1); err != nil {
			return err
		}
		now, _ := monotonicNs()
		if err := s.setSlot(math.MaxUint64, now+hour); err != nil {
			return err
		}
		if n := run(1000); n != 0 {
			t.Errorf("due in an hour: %d frames sent, want 0", n)
		}

		t0, _ := monotonicNs()
		if err := s.setSlot(math.MaxUint64, 1); err != nil {
			return err
		}
		if n := run(1000); n != PaceBurst+1 {
			t.Errorf("due long ago, one a second: %d frames sent, want %d", n, PaceBurst+1)
		}
		t1, _ := monotonicNs()
		due, acc := slot()
		slack := uint64(PaceCatchUp(1))
		lo, hi := t0-slack+(PaceBurst+1)*second, t1-slack+(PaceBurst+1)*second
		if due < lo || due > hi || acc >= 1<<32 {
			t.Errorf("due time after the catch-up: %d, want %d to %d (fraction %d)", due, lo, hi, acc)
		}

		if err := s.Pace(1e12); err != nil {
			return err
		}
		if err := s.setSlot(s.pos+7, 1); err != nil {
			return err
		}
		if n := run(1000); n != 7 {
			t.Errorf("limit 7 frames ahead: %d frames sent", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := xdptest.HostRxPackets(t, lab)-before, uint64(PaceBurst+1+7); got != want {
		t.Errorf("host end received %d frames, want %d", got, want)
	}
}

// TestXDPSendPaced sends a count of frames paced: the sender returns after
// exactly that many, all received, with every run ended by the watcher or
// the count.
func TestXDPSendPaced(t *testing.T) {
	lab := newGenLab(t)
	ft, _ := testTable(lab.HostMAC, []int{64, 100}, []uint32{0, 1})
	gen := newXDPGen(t, ft)
	before := xdptest.HostRxPackets(t, lab)
	const n = 500
	err := withXDPSender(lab, gen, func(s *XDPSender) error {
		if err := s.Pace(50000); err != nil {
			return err
		}
		sent, err := s.Send(n)
		if err != nil {
			return err
		}
		if sent != n {
			t.Errorf("paced Send(%d) sent %d", n, sent)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := xdptest.HostRxPackets(t, lab) - before; got != n {
		t.Errorf("host end received %d frames, want %d", got, n)
	}
}
