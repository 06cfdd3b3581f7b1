package pktgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
)

// enter is cfg's way onto a thread in the interface's namespace.
func (cfg Config) enter() func(fn func() error) error {
	if cfg.Enter != nil {
		return cfg.Enter
	}
	return func(fn func() error) error { return kernel.OnThread(cfg.Netns, fn) }
}

// defaultMode is ModeXDP where the kernel runs XDP programs on live frames,
// else ModeAFXDP with a warning that says why.
func defaultMode() (Mode, string, error) {
	err := kernel.LiveFramesSupported()
	switch {
	case err == nil:
		return ModeXDP, "", nil
	case errors.Is(err, kernel.ErrNotSupported):
		return ModeAFXDP, fmt.Sprintf("mode afxdp, not xdp: %v", err), nil
	default:
		return "", "", fmt.Errorf("choose generator mode: %w", err)
	}
}

// checkTarget checks that cfg's interface exists in its namespace and that
// there are CPUs for its threads.
func checkTarget(cfg Config) error {
	err := cfg.enter()(func() error { _, err := kernel.LinkByName(cfg.Iface); return err })
	if err != nil {
		return fmt.Errorf("check generator: %w", err)
	}
	if cfg.Mode == ModeKernel {
		return nil
	}
	cpus := cfg.CPUs
	if cpus == nil {
		if cpus, err = kernel.AllowedCPUs(); err != nil {
			return fmt.Errorf("check generator: %w", err)
		}
	}
	if cfg.Threads > len(cpus) {
		return fmt.Errorf("check generator: %d threads but %d CPUs to pin them to (%v): one thread per CPU", cfg.Threads, len(cpus), cpus)
	}
	return nil
}

// runThreads runs the xdp, afxdp and packet modes.
func runThreads(ctx context.Context, s *Schedule, cfg Config) (Report, error) {
	enter := cfg.enter()
	var before kernel.Link
	if err := enter(func() (err error) { before, err = kernel.LinkByName(cfg.Iface); return err }); err != nil {
		return Report{}, fmt.Errorf("run generator: %w", err)
	}
	cpus := cfg.CPUs
	if cpus == nil {
		var err error
		if cpus, err = kernel.AllowedCPUs(); err != nil {
			return Report{}, fmt.Errorf("run generator: %w", err)
		}
	}
	if cfg.Threads > len(cpus) {
		return Report{}, fmt.Errorf("run generator: %d threads but %d CPUs to pin them to (%v): one thread per CPU", cfg.Threads, len(cpus), cpus)
	}

	var open func(thread, cpu int, start uint64) (sender, int, error)
	switch cfg.Mode {
	case ModeXDP:
		gen, err := kernel.NewXDPGen(&s.table)
		if err != nil {
			return Report{}, fmt.Errorf("run generator: %w", err)
		}
		defer gen.Close()
		open = func(_, cpu int, start uint64) (sender, int, error) {
			q := cpu % max(1, before.RxQueues)
			snd, err := gen.NewSender(before.Index, q, start, cfg.Batch)
			return snd, q, err
		}
	case ModeAFXDP:
		open = func(thread, _ int, start uint64) (sender, int, error) {
			q := thread % max(1, before.TxQueues)
			snd, err := kernel.NewXSKSender(before.Index, q, &s.table, start)
			return snd, q, err
		}
	case ModePacket:
		table := &s.table
		if cfg.Mark != nil {
			table = s.markedTable(cfg.Mark)
		}
		open = func(_, _ int, start uint64) (sender, int, error) {
			snd, err := kernel.NewPacketSender(before.Index, table, start)
			if err == nil && cfg.ThroughQdisc {
				if err = snd.ThroughQdisc(); err != nil {
					snd.Close()
				}
			}
			return snd, -1, err
		}
	}

	quota, start := split(cfg.Count, cfg.Threads, s.Len())
	pps := cfg.Rate / float64(cfg.Threads)
	threads := make([]ThreadReport, cfg.Threads)
	senders := make([]sender, cfg.Threads)
	ready := make(chan error, cfg.Threads)
	done := make(chan error, cfg.Threads)
	begin, abort, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var t0 time.Time
	for j := range cfg.Threads {
		threads[j] = ThreadReport{Thread: j, CPU: cpus[j]}
		go func() {
			entered := false
			err := enter(func() error {
				entered = true
				if err := kernel.SetAffinity(cpus[j]); err != nil {
					ready <- err
					return nil
				}
				snd, q, err := open(j, cpus[j], start[j])
				if err != nil {
					ready <- fmt.Errorf("thread %d on CPU %d: %w", j, cpus[j], err)
					return nil
				}
				defer snd.Close()
				senders[j], threads[j].Queue = snd, q
				ready <- nil
				select {
				case <-begin:
				case <-abort:
					return nil
				}
				cpu0, cpuErr := kernel.ThreadCPUTime()
				n, err := pacedSend(snd, quota[j], pps, newWallClock(), stop)
				threads[j].Elapsed = time.Since(t0)
				if cpu1, err := kernel.ThreadCPUTime(); err == nil && cpuErr == nil {
					threads[j].CPUTime = cpu1 - cpu0
				}
				threads[j].Frames, threads[j].Bytes = n, s.Bytes(start[j], n)
				if err != nil {
					return fmt.Errorf("thread %d on CPU %d: %w", j, cpus[j], err)
				}
				return nil
			})
			if !entered { // enter failed before running the thread
				ready <- fmt.Errorf("thread %d: %w", j, err)
				err = nil
			}
			done <- err
		}()
	}
	var errs []error
	for range cfg.Threads {
		if err := <-ready; err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		close(abort)
	} else {
		t0 = time.Now()
		close(begin)
	}
	// Stop every thread at the end of the duration or when ctx ends;
	// threads bounded by a count end by themselves.
	var stopOnce sync.Once
	stopAll := func() {
		stopOnce.Do(func() {
			close(stop)
			for _, snd := range senders {
				if snd != nil {
					snd.Stop()
				}
			}
		})
	}
	var deadline <-chan time.Time
	if cfg.Duration > 0 && len(errs) == 0 {
		t := time.NewTimer(cfg.Duration)
		defer t.Stop()
		deadline = t.C
	}
	cancelled := ctx.Done()
	for left := cfg.Threads; left > 0; {
		select {
		case err := <-done:
			left--
			if err != nil {
				errs = append(errs, err)
				stopAll()
			}
		case <-deadline:
			stopAll()
		case <-cancelled:
			cancelled = nil // closed: would fire forever
			stopAll()
		}
	}
	if len(errs) > 0 {
		return Report{}, fmt.Errorf("run generator in mode %s on %s: %w", cfg.Mode, cfg.Iface, errors.Join(errs...))
	}

	r := Report{Mode: cfg.Mode, Profile: s.profile.Name, Iface: cfg.Iface, Threads: threads}
	for _, t := range threads {
		r.Frames += t.Frames
		r.Bytes += t.Bytes
		r.Elapsed = max(r.Elapsed, t.Elapsed)
	}
	var after kernel.Link
	if err := enter(func() (err error) { after, err = kernel.LinkByName(cfg.Iface); return err }); err == nil {
		r.LinkValid = true
		r.LinkTxPackets, r.LinkTxDropped = after.TxPackets-before.TxPackets, after.TxDropped-before.TxDropped
		r.Warnings = linkWarnings(r, before.Kind)
	}
	if cfg.Rate > 0 && r.Frames > 1 && r.PPS() < 0.95*cfg.Rate {
		r.Warnings = append(r.Warnings, fmt.Sprintf("sent %.0f frames per second of the %.0f asked: the sending CPUs were too busy to keep the rate (frames due during a stall are skipped beyond a catch-up of %v)",
			r.PPS(), cfg.Rate, kernel.PaceCatchUp(cfg.Rate/float64(cfg.Threads)).Round(time.Microsecond)))
	}
	return r, nil
}

// linkWarnings explains a link that transmitted fewer frames than were sent.
func linkWarnings(r Report, kind string) []string {
	var w []string
	if r.LinkTxPackets < r.Frames {
		lost := r.Frames - r.LinkTxPackets
		msg := fmt.Sprintf("%s counted %d transmitted frames of %d sent: %d lost after the generator", r.Iface, r.LinkTxPackets, r.Frames, lost)
		if r.Mode == ModeXDP && kind == "veth" {
			msg += "; a veth takes XDP_TX frames only while its other end runs NAPI: attach an XDP program there or enable GRO (ethtool -K OTHER-END gro on)"
		}
		w = append(w, msg)
	}
	if r.LinkTxDropped > 0 {
		w = append(w, fmt.Sprintf("%s counted %d dropped frames", r.Iface, r.LinkTxDropped))
	}
	return w
}

// ReceiverMAC finds the MAC address of the interface that receives what
// iface sends when iface is one end of a veth pair whose other end lies in
// the caller's namespace: the usual test setup, with the sending end in a
// namespace of its own (netns, or enter as in Config). Otherwise it fails and
// the caller must be told the address.
func ReceiverMAC(iface, netns string, enter func(fn func() error) error) (net.HardwareAddr, error) {
	if enter == nil {
		enter = Config{Netns: netns}.enter()
	}
	var l kernel.Link
	if err := enter(func() (err error) { l, err = kernel.LinkByName(iface); return err }); err != nil {
		return nil, fmt.Errorf("find receiver of %s: %w", iface, err)
	}
	if l.Kind != "veth" || l.PeerIndex == 0 {
		return nil, fmt.Errorf("find receiver of %s: it is a %s, not a veth: give the receiver's MAC address", iface, l.Kind)
	}
	var peer kernel.Link
	err := kernel.OnThread("", func() (err error) { peer, err = kernel.LinkByIndex(l.PeerIndex); return err })
	if err != nil || peer.Kind != "veth" || peer.PeerIndex != l.Index {
		return nil, fmt.Errorf("find receiver of %s: its other end is not in this network namespace: give the receiver's MAC address", iface)
	}
	return peer.MAC, nil
}
