//go:build linux

package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// newGenLab creates a veth lab for the generator tests, with GRO on the Host
// end so that XDP_TX frames from Peer get in, and removes it when the test
// ends.
func newGenLab(tb testing.TB) *vethlab.Lab {
	tb.Helper()
	return xdptest.NewLab(tb, vethlab.Config{Queues: 2}, PrepareReceiver)
}

// testFrame is an Ethernet + IPv4 + UDP frame of n bytes to dst whose source
// address and port say which frame it is (198.18.0.0 + id, port 1024 + id).
func testFrame(dst net.HardwareAddr, id int, n int) []byte {
	f := make([]byte, n)
	copy(f, dst)
	copy(f[6:], []byte{0x02, 0, 0, 0, 0, 0x01})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	// IPv4: IHL 5, total length, TTL 64, UDP, 198.18.x.y -> 198.19.0.1;
	// checksum left zero (nobody checks it here).
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(n-14))
	ip[8], ip[9] = 64, 17
	binary.BigEndian.PutUint32(ip[12:], 198<<24|18<<16|uint32(id))
	binary.BigEndian.PutUint32(ip[16:], 198<<24|19<<16|1)
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp, uint16(1024+id))
	binary.BigEndian.PutUint16(udp[2:], 53)
	binary.BigEndian.PutUint16(udp[4:], uint16(n-34))
	return f
}

// testTable is a FrameTable of frames with the given lengths, sent in the
// order given (indexes into lens).
func testTable(dst net.HardwareAddr, lens []int, order []uint32) (*FrameTable, [][]byte) {
	t := &FrameTable{Heads: make([]byte, HeadLen*len(lens)), Order: order}
	var frames [][]byte
	for k, n := range lens {
		f := testFrame(dst, k, n)
		frames = append(frames, f)
		copy(t.Heads[k*HeadLen:], f[:min(n, HeadLen)])
		t.Lens = append(t.Lens, uint16(n))
	}
	return t, frames
}

func TestFrameTableValidate(t *testing.T) {
	good := func() *FrameTable {
		ft, _ := testTable(net.HardwareAddr{2, 0, 0, 0, 0, 2}, []int{60, 1500}, []uint32{0, 1, 1})
		return ft
	}
	tests := []struct {
		name   string
		mutate func(*FrameTable)
		want   string // "" when valid
	}{
		{"valid", func(*FrameTable) {}, ""},
		{"no frames", func(ft *FrameTable) { ft.Lens, ft.Heads = nil, nil }, "no frames"},
		{"empty order", func(ft *FrameTable) { ft.Order = nil }, "no frames"},
		{"heads short", func(ft *FrameTable) { ft.Heads = ft.Heads[:HeadLen] }, "bytes of heads"},
		{"frame below minimum", func(ft *FrameTable) { ft.Lens[0] = MinFrameLen - 1 }, "frame 0 is 59 bytes"},
		{"frame above maximum", func(ft *FrameTable) { ft.Lens[1] = MaxFrameLen + 1 }, "frame 1 is"},
		{"head bytes past length", func(ft *FrameTable) { ft.Heads[HeadLen-1] = 1 }, "non-zero bytes"},
		{"order out of range", func(ft *FrameTable) { ft.Order[2] = 2 }, "position 2 names frame 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := good()
			tt.mutate(ft)
			err := ft.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestFrameTablePut(t *testing.T) {
	ft, frames := testTable(net.HardwareAddr{2, 0, 0, 0, 0, 2}, []int{60, 300, 1500}, []uint32{2, 0, 1, 0})
	buf := make([]byte, ft.bufLen())
	for pos, k := range ft.Order {
		n := ft.Put(buf, pos)
		if !bytes.Equal(buf[:n], frames[k]) {
			t.Errorf("position %d: frame differs from frame %d", pos, k)
		}
	}
	allocs := testing.AllocsPerRun(100, func() { ft.Put(buf, 1) })
	if allocs != 0 {
		t.Errorf("Put allocates %.0f times", allocs)
	}
}

// newXDPGen loads a generator for ft that is closed when the test ends.
func newXDPGen(tb testing.TB, ft *FrameTable) *XDPGen {
	tb.Helper()
	xdptest.RequireRoot(tb)
	xdptest.SkipIfNotSupported(tb, LiveFramesSupported())
	return xdptest.Open(tb, func() (*XDPGen, error) { return NewXDPGen(ft) })
}

// sendFromPeer sends n frames of gen from a thread pinned to cpu in the
// lab's namespace, starting at position start, and returns the sender's
// count of interrupted runs. interrupt, when set, is called with the
// thread's id while it sends.
func sendFromPeer(tb testing.TB, lab *vethlab.Lab, gen *XDPGen, cpu int, start, n uint64, interrupt func(tid int) func()) int {
	tb.Helper()
	var interrupts int
	err := lab.InPeer(func() error {
		if err := SetAffinity(cpu); err != nil {
			return err
		}
		s, err := gen.NewSender(lab.PeerIndex, 0, start, 0)
		if err != nil {
			return err
		}
		defer s.Close()
		if interrupt != nil {
			stop := interrupt(unix.Gettid())
			defer stop()
		}
		sent, err := s.Send(n)
		if err != nil {
			return err
		}
		if sent != n {
			return fmt.Errorf("sent %d frames, want %d", sent, n)
		}
		interrupts = s.interrupts
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return interrupts
}

// sender is what the three senders have in common.
type sender interface {
	Send(n uint64) (uint64, error)
	Close() error
}

// senderKind opens one kind of sender of ft on the lab's Peer end, from
// cycle position start.
type senderKind struct {
	name string
	open func(start uint64) (sender, error)
}

func senderKinds(tb testing.TB, lab *vethlab.Lab, ft *FrameTable) []senderKind {
	tb.Helper()
	gen := newXDPGen(tb, ft)
	return []senderKind{
		{"xdp", func(start uint64) (sender, error) { return gen.NewSender(lab.PeerIndex, 0, start, 0) }},
		{"afxdp", func(start uint64) (sender, error) { return NewXSKSender(lab.PeerIndex, 0, ft, start) }},
		{"packet", func(start uint64) (sender, error) { return NewPacketSender(lab.PeerIndex, ft, start) }},
	}
}

// sendWith sends n frames from cycle position start with a sender of kind
// from the lab's peer end, from a thread pinned to CPU 0.
func sendWith(tb testing.TB, lab *vethlab.Lab, kind senderKind, start, n uint64) {
	tb.Helper()
	err := lab.InPeer(func() error {
		if err := SetAffinity(0); err != nil {
			return err
		}
		s, err := kind.open(start)
		if err != nil {
			return err
		}
		defer s.Close()
		sent, err := s.Send(n)
		if err == nil && sent != n {
			err = fmt.Errorf("sent %d frames, want %d", sent, n)
		}
		return err
	})
	if err != nil {
		tb.Fatalf("%s: %v", kind.name, err)
	}
}

// TestSendersAllocs checks that sending allocates nothing, per frame or per
// call.
func TestSendersAllocs(t *testing.T) {
	lab := newGenLab(t)
	ft, _ := testTable(lab.HostMAC, []int{60, 1514}, []uint32{0, 1})
	for _, tt := range senderKinds(t, lab, ft) {
		err := lab.InPeer(func() error {
			if err := SetAffinity(0); err != nil {
				return err
			}
			s, err := tt.open(0)
			if err != nil {
				return err
			}
			defer s.Close()
			// AllocsPerRun counts the whole process's allocations, and a send
			// yields to the runtime (EAGAIN) or is interrupted by its preemption
			// signals, so another goroutine can allocate now and then. An
			// allocation of Send's own happens on every call: an average under
			// one per call over 20 calls rules it out.
			if allocs := testing.AllocsPerRun(20, func() { s.Send(2 * packetBatch) }); allocs >= 1 {
				return fmt.Errorf("Send allocates %.1f times per call", allocs)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// TestSendersSend sends a cycle and a half of a table with each sender and
// checks that the Host end received exactly those frames, byte for byte and
// in order (one sending thread, one queue).
func TestSendersSend(t *testing.T) {
	lab := newGenLab(t)
	lens := []int{60, 64, 127, 128, 129, 576, 1514}
	order := []uint32{6, 0, 1, 2, 3, 4, 5, 0, 0, 6}
	ft, frames := testTable(lab.HostMAC, lens, order)
	for _, tt := range senderKinds(t, lab, ft) {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCapture(lab.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const start, n = 3, 15
			before := xdptest.HostRxPackets(t, lab)
			mapsBefore, _ := socketMappings()
			sendWith(t, lab, tt, start, n)
			if mapsAfter, _ := socketMappings(); len(mapsAfter) != len(mapsBefore) {
				t.Errorf("%d socket mappings before, %d after the sender closed", len(mapsBefore), len(mapsAfter))
			}
			got, err := c.Collect(n+1, 200*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if rx := xdptest.HostRxPackets(t, lab) - before; rx != n {
				t.Errorf("Host rx_packets grew by %d, want %d", rx, n)
			}
			if len(got) != n {
				for i, f := range got {
					t.Logf("captured %d: %d bytes %x", i, len(f), f[:min(len(f), 48)])
				}
				t.Fatalf("captured %d frames, want %d", len(got), n)
			}
			for i, f := range got {
				pos := (start + i) % len(order)
				if want := frames[order[pos]]; !bytes.Equal(f, want) {
					t.Errorf("frame %d (position %d): got %d bytes %x..., want %d bytes %x...", i, pos, len(f), f[:40], len(want), want[:40])
				}
			}
		})
	}
}

// TestXDPGenInterrupted signals the sending thread while it runs and checks
// that the count stays exact: an interrupted run resumes from the program's
// cursor. It fails when no run was interrupted, since the resume path then
// went untested.
func TestXDPGenInterrupted(t *testing.T) {
	lab := newGenLab(t)
	ft, _ := testTable(lab.HostMAC, []int{60}, []uint32{0})
	gen := newXDPGen(t, ft)
	const n = 1_000_000
	before := xdptest.HostRxPackets(t, lab)
	const maxSignals = 8
	interrupt := func(tid int) func() {
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			// A signal interrupts a run only while the kernel runs it, and
			// each interrupted run costs the kernel's per-run setup again
			// (tens of milliseconds): a few signals, spread over the send,
			// until it ends.
			for i := 0; i < maxSignals && !stop.Load(); i++ {
				time.Sleep(10 * time.Millisecond)
				// SIGURG is the Go runtime's preemption signal: its
				// handler ignores a spurious one.
				_ = unix.Tgkill(unix.Getpid(), tid, unix.SIGURG)
			}
		}()
		return func() { stop.Store(true); <-done }
	}
	interrupts := sendFromPeer(t, lab, gen, 0, 0, n, interrupt)
	if rx := xdptest.HostRxPackets(t, lab) - before; rx != n {
		t.Errorf("Host rx_packets grew by %d, want %d (%d interrupted runs)", rx, n, interrupts)
	}
	if interrupts == 0 {
		t.Errorf("no run of the %d-frame send was interrupted by up to %d signals: the resume path went untested", n, maxSignals)
	}
	t.Logf("%d interrupted runs", interrupts)
}

// TestXDPGenOneSenderPerCPU checks that a second sender on a CPU is refused:
// the program's cursor is per CPU.
func TestXDPGenOneSenderPerCPU(t *testing.T) {
	lab := newGenLab(t)
	ft, _ := testTable(lab.HostMAC, []int{60}, []uint32{0})
	gen := newXDPGen(t, ft)
	err := withXDPSender(lab, gen, func(*XDPSender) error {
		if s2, err := gen.NewSender(lab.PeerIndex, 0, 0, 0); err == nil {
			s2.Close()
			return fmt.Errorf("second sender on CPU 0 accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPaceCatchUp(t *testing.T) {
	for _, c := range []struct {
		pps  float64
		want time.Duration
	}{
		{0, PaceSlack},
		{1e6, PaceSlack},              // 1000 frames in the slack
		{PaceBurst * 1000, PaceSlack}, // exactly PaceBurst frames in it
		{1000, 64 * time.Millisecond}, // PaceBurst frames at 1 ms each
		{1, PaceBurst * time.Second},  // one a second
	} {
		if got := PaceCatchUp(c.pps); got != c.want {
			t.Errorf("PaceCatchUp(%g) = %v, want %v", c.pps, got, c.want)
		}
	}
}
