package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// Pace makes the sender's later Sends keep pps frames per second, frame by
// frame: the program drops the test run's frames until the next one is due
// on CLOCK_MONOTONIC (bpf_ktime_get_ns), so frames leave evenly spaced, not
// in bursts. Pacing cannot be done from user space: a run of more than one
// frame is slow to start (see XDPGen), so short runs could only send
// bursts. The sending CPU spins between frames, as it does when it sends as
// fast as it can. pps 0 ends pacing; a rate below MinPacedRate is an
// error.
func (s *XDPSender) Pace(pps float64) error {
	if pps != 0 && !(pps >= MinPacedRate) || math.IsInf(pps, 0) {
		return fmt.Errorf("pace XDP sender: %g frames per second, want 0 or %g to %g", pps, MinPacedRate, math.MaxFloat64)
	}
	s.interval, s.slack = 0, PaceCatchUp(pps)
	if pps > 0 {
		// ns between frames in 2^-32 ns (below 2^62: the sum with the
		// fraction carried never overflows); at least 1, a paced sender.
		s.interval = max(1, uint64(1e9/pps*(1<<32)))
	}
	return s.setSlot(math.MaxUint64, 0)
}

// setSlot writes the CPU's slot: the position the sender is at, limit, and
// the pacing state with the next frame due at due (ns, CLOCK_MONOTONIC).
func (s *XDPSender) setSlot(limit, due uint64) error {
	var slot [cursorSlot]byte
	binary.NativeEndian.PutUint64(slot[slotPos:], s.pos)
	binary.NativeEndian.PutUint64(slot[slotLimit:], limit)
	binary.NativeEndian.PutUint64(slot[slotDue:], due)
	binary.NativeEndian.PutUint64(slot[slotInterval:], s.interval>>32)
	binary.NativeEndian.PutUint64(slot[slotFrac:], s.interval&(1<<32-1))
	binary.NativeEndian.PutUint64(slot[slotSlack:], uint64(max(s.slack, PaceSlack)))
	if err := s.gen.cursors.Put(uint32(s.cpu), slot[:]); err != nil {
		return fmt.Errorf("set cursor of CPU %d: %w", s.cpu, err)
	}
	return nil
}

// monotonicNs is CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_ns.
func monotonicNs() (uint64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, fmt.Errorf("read CLOCK_MONOTONIC: %w", err)
	}
	return uint64(ts.Nano()), nil
}

// sendPaced is Send for a paced sender: the program sends up to a limit n
// frames ahead, the first due now, and drops the test run's frames
// otherwise; since the run's repeat count then counts drops too, a watcher
// interrupts the run once the cursor reaches the limit, and the cursor,
// not the repeat count, says how many frames went out.
func (s *XDPSender) sendPaced(n uint64) (uint64, error) {
	start := s.pos
	now, err := monotonicNs()
	if err != nil {
		return 0, fmt.Errorf("send with XDP sender: %w", err)
	}
	limit := start + n
	if limit < start {
		limit = math.MaxUint64 // unbounded: until Stop
	}
	if err := s.setSlot(limit, now); err != nil {
		return 0, fmt.Errorf("send with XDP sender: %w", err)
	}
	expect := time.Duration(1 << 62) // unbounded: Stop ends the run
	if limit != math.MaxUint64 {
		expect = time.Duration(min(float64(n)*float64(s.interval)/(1<<32), 1<<62))
	}
	done, watched := make(chan struct{}), make(chan struct{})
	go s.watchLimit(limit, expect, done, watched)
	defer func() { close(done); <-watched }()
	for !s.stop.Load() && s.pos < limit {
		s.attr.Repeat = math.MaxUint32
		errno := testRun(&s.attr)
		pos, err := s.cursor()
		if err != nil {
			return s.pos - start, fmt.Errorf("send with XDP sender: %w", err)
		}
		s.pos = pos
		switch errno {
		case 0:
		case unix.EINTR:
			s.interrupts++
		default:
			return s.pos - start, runError(errno, s.ifindex)
		}
	}
	return s.pos - start, nil
}

// watchLimit interrupts the sending thread's run once the CPU's cursor
// reaches limit: it sleeps for about the time the frames take (expect),
// then looks every 100 µs, until done closes.
func (s *XDPSender) watchLimit(limit uint64, expect time.Duration, done <-chan struct{}, watched chan<- struct{}) {
	defer close(watched)
	const poll = 100 * time.Microsecond
	t := time.NewTimer(max(expect, poll))
	defer t.Stop()
	key := uint32(s.cpu)
	var val [cursorSlot]byte
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if err := s.gen.cursors.Lookup(&key, &val); err != nil || binary.NativeEndian.Uint64(val[slotPos:]) >= limit {
			_ = unix.Tgkill(unix.Getpid(), s.tid, unix.SIGURG)
		}
		t.Reset(poll)
	}
}
