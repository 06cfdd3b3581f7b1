package pktgen

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
)

// Mode is how frames are sent.
type Mode string

// The generator modes; see the package documentation.
const (
	ModeXDP    Mode = "xdp"    // BPF_PROG_RUN live frames with XDP_TX
	ModeAFXDP  Mode = "afxdp"  // AF_XDP transmit, copy mode
	ModePacket Mode = "packet" // AF_PACKET, sendmmsg, qdisc bypass
	ModeKernel Mode = "kernel" // the kernel's pktgen module
)

// Modes lists the modes, the default first.
var Modes = []Mode{ModeXDP, ModeAFXDP, ModePacket, ModeKernel}

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	if slices.Contains(Modes, Mode(s)) {
		return Mode(s), nil
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown generator mode %q (want %s)", s, strings.Join(names, ", "))
}

// Config is a generator run. Count or Duration bounds it; both may be set,
// and the first reached ends it.
type Config struct {
	// Iface is the interface to send out of.
	Iface string
	// Netns is the named network namespace (as `ip netns` names it) that
	// Iface is in; "" is the caller's.
	Netns string
	// Enter, when set, replaces Netns: it must run fn on an OS thread that
	// stays locked to fn for its whole run and is in Iface's namespace, and
	// return fn's error (vethlab.Lab.InPeer does). The thread is pinned to a
	// CPU and must not be reused after fn.
	Enter func(fn func() error) error
	// Mode is how frames are sent; "" takes ModeXDP where the kernel runs XDP
	// programs on live frames (Linux 5.18) and ModeAFXDP elsewhere.
	Mode Mode
	// Threads is the number of sending threads (default 1), each pinned to
	// a CPU of its own.
	Threads int
	// CPUs are the CPUs to pin threads to, in order; nil takes the CPUs the
	// process may run on.
	CPUs []int
	// Rate is the frames per second over all threads; 0 sends as fast as
	// the threads can.
	Rate float64
	// Count is the number of frames to send over all threads.
	Count uint64
	// Duration is how long to send.
	Duration time.Duration
	// Batch is ModeXDP's number of frames per kernel batch (0: the
	// kernel's 64, at most 256).
	Batch int
	// ThroughQdisc sends ModePacket's frames through the interface's qdisc
	// layer instead of past it: slower, but they pass the egress hook, where
	// a TCX program such as kernel.VLANPush sees them.
	ThroughQdisc bool
	// Mark, when set, gives each of ModePacket's frames an skb mark (it is
	// called once per distinct frame of the schedule, before the run): for
	// a program on the interface that steers by the mark, such as the
	// virtio lab's tap steering program.
	Mark func(frame []byte) uint32
}

// Report is what a run did.
type Report struct {
	Mode    Mode
	Profile string
	Iface   string
	Threads []ThreadReport
	Frames  uint64 // frames handed to the kernel, over all threads
	Bytes   uint64 // their bytes, without FCS
	// Elapsed is the run's wall time, from the moment every thread was
	// ready to the last one's end.
	Elapsed time.Duration
	// Link counters of Iface: how many frames it transmitted and dropped
	// during the run (on a veth, frames the other end took in). Valid tells
	// whether they could be read.
	LinkTxPackets, LinkTxDropped uint64
	LinkValid                    bool
	// Warnings explain frames the kernel dropped, and other surprises.
	Warnings []string
}

// ThreadReport is one sending thread's part of a run.
type ThreadReport struct {
	Thread int
	CPU    int
	// Queue is the queue the thread's frames claim (xdp: the receive queue
	// in the run's context) or are bound to (afxdp); -1 when the kernel
	// picks it (packet, kernel).
	Queue   int
	Frames  uint64
	Bytes   uint64
	Elapsed time.Duration
	// CPUTime is the thread's CPU time, user and system, while it sent
	// (the kernel's work on its frames included where the kernel charges
	// it to the sender); 0 when unknown (mode kernel).
	CPUTime time.Duration
}

// PPS is the thread's rate in frames per second.
func (t ThreadReport) PPS() float64 { return rate(t.Frames, t.Elapsed) }

// BitsPerSecond is the thread's rate in bits per second, without FCS,
// preamble and gap.
func (t ThreadReport) BitsPerSecond() float64 { return 8 * rate(t.Bytes, t.Elapsed) }

// PPS is the run's rate in frames per second.
func (r Report) PPS() float64 { return rate(r.Frames, r.Elapsed) }

// BitsPerSecond is the run's rate in bits per second, without FCS,
// preamble and gap.
func (r Report) BitsPerSecond() float64 { return 8 * rate(r.Bytes, r.Elapsed) }

func rate(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// withDefaults checks cfg and fills its defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Count == 0 && cfg.Duration <= 0 {
		return cfg, fmt.Errorf("configure generator: %w: give a frame count or a duration", ErrUnbounded)
	}
	if cfg.Iface == "" {
		return cfg, fmt.Errorf("configure generator: no interface: name the one to send out of")
	}
	if cfg.Mode != "" {
		if _, err := ParseMode(string(cfg.Mode)); err != nil {
			return cfg, fmt.Errorf("configure generator: %w", err)
		}
	}
	if cfg.Threads == 0 {
		cfg.Threads = 1
	}
	if cfg.Threads < 0 {
		return cfg, fmt.Errorf("configure generator: %d threads, want at least 1", cfg.Threads)
	}
	if cfg.Rate < 0 || math.IsNaN(cfg.Rate) || math.IsInf(cfg.Rate, 0) {
		return cfg, fmt.Errorf("configure generator: rate %g frames per second, want a number >= 0 (0: as fast as possible)", cfg.Rate)
	}
	if cfg.ThroughQdisc && cfg.Mode != ModePacket {
		return cfg, fmt.Errorf("configure generator: through the qdisc layer is for mode packet, not %q", cfg.Mode)
	}
	if cfg.Mark != nil && cfg.Mode != ModePacket {
		return cfg, fmt.Errorf("configure generator: frame marks are for mode packet, not %q", cfg.Mode)
	}
	if cfg.Batch < 0 || cfg.Batch > 256 {
		return cfg, fmt.Errorf("configure generator: batch of %d frames, want 0 (the kernel's default) to 256", cfg.Batch)
	}
	return cfg, nil
}

// Check checks cfg before there is a schedule to send: its values, that its
// interface exists (in its namespace), and that there are CPUs for its
// threads. Building a large profile's schedule takes seconds and gigabytes:
// a caller checks first, so that a mistyped interface costs neither.
func Check(cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	return checkTarget(cfg)
}

// Run sends the schedule's frames as cfg says, from cfg.Threads threads, and
// reports what it sent. Each thread sends a contiguous part of the cycle:
// with Count a multiple of the cycle, the frames sent are exactly the cycle's
// frames that many times. Cancelling ctx stops the threads early, as the end
// of Duration does; the report then covers what was sent.
func Run(ctx context.Context, s *Schedule, cfg Config) (Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Report{}, err
	}
	var warning string
	if cfg.Mode == "" {
		if cfg.Mode, warning, err = defaultMode(); err != nil {
			return Report{}, err
		}
	}
	run := runThreads
	if cfg.Mode == ModeKernel {
		run = runKernelPktgen
	}
	r, err := run(ctx, s, cfg)
	if warning != "" {
		r.Warnings = append([]string{warning}, r.Warnings...)
	}
	return r, err
}

// unbounded is the quota of a thread that sends until it is stopped.
const unbounded = math.MaxUint64

// split divides count frames over threads (the first count%threads get one
// more) and returns each thread's quota and cycle start position, so that
// the threads' parts tile the cycle. With no count, every quota is unbounded
// and the threads start evenly spread over the cycle.
func split(count uint64, threads, cycle int) (quota, start []uint64) {
	quota = make([]uint64, threads)
	start = make([]uint64, threads)
	var at uint64
	for j := range threads {
		if count == 0 {
			quota[j], start[j] = unbounded, uint64(j*cycle/threads)
			continue
		}
		quota[j] = count / uint64(threads)
		if uint64(j) < count%uint64(threads) {
			quota[j]++
		}
		start[j] = at % uint64(cycle)
		at += quota[j]
	}
	return quota, start
}

// sender is what runThreads needs of a mode's sender.
type sender interface {
	Send(n uint64) (uint64, error)
	Stop()
	Close() error
}

// pacePeriod is how often a sender paced in user space sends the frames
// due. After a stall (the thread preempted) it catches up by at most
// kernel.PaceCatchUp's worth of frames, as the XDP sender does, and moves
// the rest of its schedule later.
const pacePeriod = 50 * time.Microsecond

// selfPacer is a sender that keeps a rate itself, frame by frame (the XDP
// sender, whose runs cost too much to start for short bursts).
type selfPacer interface {
	Pace(pps float64) error
}

// clock is the time pacedSend reads and waits on: the wall clock in a run, a
// fake one in tests.
type clock interface {
	now() time.Duration // since an arbitrary origin
	// sleepUntil waits until now() reaches t; false when stop closed first.
	sleepUntil(t time.Duration, stop <-chan struct{}) bool
}

// wallClock is the clock of a run; it reuses one timer.
type wallClock struct {
	start time.Time
	timer *time.Timer
}

func newWallClock() *wallClock { return &wallClock{start: time.Now()} }

func (c *wallClock) now() time.Duration { return time.Since(c.start) }

func (c *wallClock) sleepUntil(t time.Duration, stop <-chan struct{}) bool {
	d := t - c.now()
	if d <= 0 {
		return true
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-c.timer.C:
		return true
	case <-stop:
		c.timer.Stop()
		return false
	}
}

// pacedSend sends quota frames with snd (unbounded: until stopped), at pps
// frames per second when pps > 0. A selfPacer paces itself; other senders
// get the frames due every pacePeriod on clk, frame k due k/pps after the
// start. stop ends the waits.
func pacedSend(snd sender, quota uint64, pps float64, clk clock, stop <-chan struct{}) (uint64, error) {
	if pps == 0 || quota == 0 {
		return snd.Send(quota)
	}
	// Rates below kernel.MinPacedRate are paced here, a frame at a time.
	if p, ok := snd.(selfPacer); ok && pps >= kernel.MinPacedRate {
		if err := p.Pace(pps); err != nil {
			return 0, err
		}
		return snd.Send(quota)
	}
	per := float64(time.Second) / pps // between frames
	batch := max(1, uint64(pps*pacePeriod.Seconds()))
	burst := max(batch, uint64(pps*kernel.PaceCatchUp(pps).Seconds()))
	start := clk.now()
	var sent uint64
	for sent < quota {
		due := uint64(float64(clk.now()-start)/per) + 1 // frames 0 to due-1
		if due > sent+burst {
			// A stall: send the slack's worth, the schedule moves later.
			start += time.Duration(float64(due-sent-burst) * per)
			due = sent + burst
		}
		if due > sent {
			n := min(due, quota) - sent
			m, err := snd.Send(n)
			sent += m
			if err != nil || m < n {
				return sent, err // an error, or stopped
			}
			continue
		}
		if !clk.sleepUntil(start+time.Duration(float64(sent+batch-1)*per), stop) {
			return sent, nil
		}
	}
	return sent, nil
}
