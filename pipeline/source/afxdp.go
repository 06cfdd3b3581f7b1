package source

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
)

// Errors of the AF_XDP source, wrapped with the step that failed and a hint;
// test for them with errors.Is. Privilege and kernel-support errors wrap
// internal/kernel's ErrNotPermitted and ErrNotSupported.
var (
	// ErrNoInterface means the interface named in AFXDPConfig.Iface does not
	// exist in the caller's network namespace.
	ErrNoInterface = errors.New("interface not found")
	// ErrNoQueue means a queue in AFXDPConfig.Queues is not one of the
	// interface's receive queues.
	ErrNoQueue = errors.New("no such receive queue")
	// ErrAFXDPConfig means AFXDPConfig is inconsistent (sizes, modes).
	ErrAFXDPConfig = errors.New("invalid AF_XDP configuration")
)

// XDPMode is where the XDP program that feeds the AF_XDP sockets runs.
type XDPMode string

// The XDP modes. The zero value is XDPNative.
const (
	// XDPNative runs the program in the driver, before any skb exists
	// (XDP_FLAGS_DRV_MODE): the fast mode, which needs driver support
	// (veth has it).
	XDPNative XDPMode = "native"
	// XDPGeneric runs it on the skb (XDP_FLAGS_SKB_MODE): every driver,
	// at a fraction of the speed.
	XDPGeneric XDPMode = "generic"
)

// XDPModes lists the XDP modes, for a command-line flag.
var XDPModes = []XDPMode{XDPNative, XDPGeneric}

// RxMode is how a queue's Receive waits for frames.
type RxMode string

// The receive modes. The zero value is RxAuto.
const (
	// RxSpin busy-polls the RX ring: the lowest latency and the highest rate
	// when the kernel's receive work has CPUs of its own, a collapse when
	// it has not (see RxAuto).
	RxSpin RxMode = "spin"
	// RxPoll sleeps in poll(2) on the socket whenever the RX ring is empty.
	RxPoll RxMode = "poll"
	// RxAuto leaves the choice to the pipeline's CPU plan
	// (pipeline.PlanCPUs): spin where the machine has a CPU for each
	// queue's receive loop, one for each queue's kernel receive work (the
	// softirq that runs the XDP program and fills the RX ring), one for
	// each worker and one more for the rest of the system, and poll
	// otherwise; a spinning loop takes the CPU time that work needs
	// (docs/afxdp.md has the measurements). A source opened with RxAuto
	// polls.
	RxAuto RxMode = "auto"
)

// RxModes lists the receive modes, for a command-line flag.
var RxModes = []RxMode{RxAuto, RxSpin, RxPoll}

// Defaults of AFXDPConfig: each queue's socket takes internal/kernel's sizes.
const (
	DefaultAFXDPFrames    = kernel.DefaultXSKFrames    // UMEM frames per queue
	DefaultAFXDPFrameSize = kernel.DefaultXSKFrameSize // bytes per frame: a 1500-byte MTU fits
	// LargeAFXDPFrameSize is the frame size taken instead of the default
	// when the interface's MTU does not fit the default.
	LargeAFXDPFrameSize  = 4096
	DefaultAFXDPRingSize = kernel.DefaultXSKRingSize // fill and RX ring entries
	DefaultAFXDPBatch    = 64                        // frames per Receive at most
)

// AFXDPConfig describes an AF_XDP source. A zero field takes its default.
type AFXDPConfig struct {
	Iface  string // the interface to receive on
	Queues []int  // its receive queues to open; nil means all
	// Frames, FrameSize and RingSize size each queue's UMEM and rings;
	// FrameSize is a power of two from 2048 to the page size and must hold
	// the interface's MTU plus its Ethernet header plus 256 bytes of
	// headroom; RingSize is a power of two.
	Frames, FrameSize, RingSize int
	// Batch is the most frames one Receive hands out (at most RingSize, and
	// at most the capacity of the caller's Batch).
	Batch int
	// ZeroCopy binds the sockets with XDP_ZEROCOPY, which needs native mode
	// and driver support (veth has none); the default is copy mode.
	ZeroCopy bool
	Mode     XDPMode // default XDPNative
	RxMode   RxMode  // RxSpin or RxPoll (RxAuto and the default poll)
	// NoMetadata loads the plain redirect program even where the device
	// supports the XDP metadata program (kernel.LoadXSKMetadataRedirect),
	// which is otherwise chosen in native mode: the frames then come without
	// their device hash, stripped VLAN tag and RX timestamp.
	NoMetadata bool
}

// withDefaults fills c's zero fields and checks what can be checked without
// the interface.
func (c AFXDPConfig) withDefaults() (AFXDPConfig, error) {
	if c.Frames == 0 {
		c.Frames = DefaultAFXDPFrames
	}
	if c.FrameSize == 0 {
		c.FrameSize = DefaultAFXDPFrameSize
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultAFXDPRingSize
	}
	if c.Batch == 0 {
		c.Batch = DefaultAFXDPBatch
	}
	if c.Mode == "" {
		c.Mode = XDPNative
	}
	if c.RxMode == "" {
		c.RxMode = RxAuto
	}
	switch {
	case c.Iface == "":
		return c, fmt.Errorf("%w: no interface", ErrAFXDPConfig)
	case !slices.Contains(XDPModes, c.Mode):
		return c, fmt.Errorf("%w: XDP mode %q, want native or generic", ErrAFXDPConfig, c.Mode)
	case !slices.Contains(RxModes, c.RxMode):
		return c, fmt.Errorf("%w: receive mode %q, want auto, spin or poll", ErrAFXDPConfig, c.RxMode)
	case c.ZeroCopy && c.Mode != XDPNative:
		return c, fmt.Errorf("%w: zero-copy needs native XDP: use --xdp-mode native, or drop --zero-copy", ErrAFXDPConfig)
	case c.Batch < 0 || c.Batch > c.RingSize:
		return c, fmt.Errorf("%w: batch %d, want 1 to the ring size %d", ErrAFXDPConfig, c.Batch, c.RingSize)
	case c.Frames < c.RingSize:
		// Fewer frames than fill ring entries would leave the kernel short
		// of frames with the ring half empty.
		return c, fmt.Errorf("%w: %d frames for a %d-entry ring: want at least as many frames as ring entries", ErrAFXDPConfig, c.Frames, c.RingSize)
	}
	return c, nil
}

// ParseQueues parses a queue list: "all" (nil, every queue) or a comma
// separated list of queue numbers and ranges, "0,2-3". The result is sorted;
// a queue listed twice is an error.
func ParseQueues(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "all" {
		return nil, nil
	}
	if s == "" {
		return nil, fmt.Errorf("parse queues %q: empty: want all, or a list such as 0,2-3", s)
	}
	var qs []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := parseQueue(lo)
		if err != nil {
			return nil, fmt.Errorf("parse queues %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = parseQueue(hi); err != nil {
				return nil, fmt.Errorf("parse queues %q: %w", s, err)
			}
			if last < first {
				return nil, fmt.Errorf("parse queues %q: range %s runs backwards", s, part)
			}
		}
		for q := first; q <= last; q++ {
			qs = append(qs, q)
		}
	}
	slices.Sort(qs)
	for i := 1; i < len(qs); i++ {
		if qs[i] == qs[i-1] {
			return nil, fmt.Errorf("parse queues %q: queue %d listed twice", s, qs[i])
		}
	}
	return qs, nil
}

// maxQueue bounds a queue number: no NIC has more queues than the kernel's
// limit on them (4096, with room to spare).
const maxQueue = 1 << 16

func parseQueue(s string) (int, error) {
	if strings.TrimSpace(s) == "" {
		return 0, errors.New("a list element is empty or negative: want numbers such as 0,2-3")
	}
	q, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || q < 0 || q >= maxQueue {
		return 0, fmt.Errorf("queue %q: want a number from 0 to %d", s, maxQueue-1)
	}
	return q, nil
}

// FormatQueues is the inverse of ParseQueues: "all" for nil, ranges
// collapsed otherwise ("0,2-3").
func FormatQueues(qs []int) string {
	if qs == nil {
		return "all"
	}
	var b strings.Builder
	for i := 0; i < len(qs); {
		j := i
		for j+1 < len(qs) && qs[j+1] == qs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(qs[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(qs[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Drain receives and drops frames on every queue of src, a goroutine per
// queue, until want frames arrived in all, the deadline passed or src was
// closed; then it closes src (which ends the other queues' Receive) and
// returns the frames each queue received. It is the bare receive loop that a
// benchmark of a source measures: nothing is done with a frame.
func Drain(src Source, want uint64, deadline time.Time) ([]uint64, error) {
	qs := src.Queues()
	got := make([]uint64, len(qs))
	var total atomic.Uint64
	stop := time.AfterFunc(time.Until(deadline), func() { src.Close() })
	defer stop.Stop()
	var wg sync.WaitGroup
	errs := make([]error, len(qs))
	for i, q := range qs {
		wg.Go(func() {
			b := NewBatch(DefaultAFXDPBatch)
			for {
				err := q.Receive(b)
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						errs[i] = err
					}
					return
				}
				got[i] += uint64(b.Len())
				if total.Add(uint64(b.Len())) >= want {
					src.Close()
					return
				}
			}
		})
	}
	wg.Wait()
	return got, errors.Join(src.Close(), errors.Join(errs...))
}
