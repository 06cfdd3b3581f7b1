package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel/feature"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// newLab creates a namespace and veth pair, removed when the test ends.
func newLab(tb testing.TB, queues int) *vethlab.Lab {
	tb.Helper()
	return xdptest.NewLab(tb, vethlab.Config{Queues: queues})
}

// attached is the mode of the XDP program on interface ifindex, 0 for none.
func attached(tb testing.TB, ifindex int) XDPMode {
	tb.Helper()
	mode, _, err := AttachedXDP(ifindex)
	if err != nil {
		tb.Fatal(err)
	}
	return mode
}

func TestHaveXDPLinks(t *testing.T) {
	xdptest.RequireRoot(t)
	err := HaveXDPLinks()
	if attached(t, loopbackIfindex) != 0 {
		t.Error("the probe left an XDP program on lo")
	}
	xdptest.SkipIfNotSupported(t, err)
}

// TestXSKRedirectAttachProbeRefused checks that Attach attaches nothing when
// the XDP links probe could not tell (here, a refusal that the test puts in
// its place): only a kernel without XDP links falls back to netlink, whose
// program a killed process leaves attached.
func TestXSKRedirectAttachProbeRefused(t *testing.T) {
	lab := newLab(t, 1)
	saved := xdpLinks
	defer func() { xdpLinks = saved }()
	xdpLinks = feature.NewTest("XDP links", "5.9", func() error {
		return fmt.Errorf("load XDP links probe: %w: missing CAP_BPF: %w", ErrNotPermitted, unix.EPERM)
	})
	r, err := LoadXSKRedirect(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.Attach(lab.HostIndex, XDPGeneric)
	if !errors.Is(err, ErrNotPermitted) || errors.Is(err, ErrNotSupported) {
		t.Errorf("Attach = %v, want ErrNotPermitted from the probe", err)
	}
	if got := attached(t, lab.HostIndex); got != 0 {
		t.Errorf("a program is attached in %v mode after the probe could not tell", got)
	}
}

func TestXSKRedirectAttach(t *testing.T) {
	tests := []struct {
		name    string
		mode    XDPMode
		netlink bool
	}{
		{"native link", XDPNative, false},
		{"generic link", XDPGeneric, false},
		{"native netlink", XDPNative, true},
		{"generic netlink", XDPGeneric, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab := newLab(t, 2)
			forceNetlinkAttach = tt.netlink
			defer func() { forceNetlinkAttach = false }()
			r, err := LoadXSKRedirect(lab.Queues)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.Attach(lab.HostIndex, tt.mode); err != nil {
				t.Fatal(err)
			}
			mode, id, err := AttachedXDP(lab.HostIndex)
			if info, ierr := r.prog.Info(); err != nil || ierr != nil || mode != tt.mode {
				t.Errorf("AttachedXDP() = %v, %d, %v; want %v (program info: %v)", mode, id, err, tt.mode, ierr)
			} else if want, _ := info.ID(); uint32(want) != id {
				t.Errorf("program %d attached, want ours, %d", id, want)
			}
			if r.ViaLink() == tt.netlink || r.Mode() != tt.mode {
				t.Errorf("ViaLink() = %v, Mode() = %v; want %v, %v", r.ViaLink(), r.Mode(), !tt.netlink, tt.mode)
			}
			// A second program is refused, whichever way it comes.
			other, err := LoadXSKRedirect(lab.Queues)
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Attach(lab.HostIndex, tt.mode); err == nil || !strings.Contains(err.Error(), "another XDP program is attached") {
				t.Errorf("second Attach: %v, want another program attached", err)
			}
			other.Close()
			if _, got, _ := AttachedXDP(lab.HostIndex); got != id {
				t.Errorf("after the refused second program, program %d is attached, want %d", got, id)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if got := attached(t, lab.HostIndex); got != 0 {
				t.Errorf("after Close a program is attached in %v mode", got)
			}
		})
	}
}

// TestXSKRedirectNativeUnsupported attaches in native mode to the lab
// namespace's own lo, which has no native XDP.
func TestXSKRedirectNativeUnsupported(t *testing.T) {
	lab := newLab(t, 1)
	r, err := LoadXSKRedirect(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = lab.InPeer(func() error { return r.Attach(loopbackIfindex, XDPNative) })
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "use --xdp-mode generic") {
		t.Errorf("native Attach to lo: %v, want ErrNotSupported and a hint for generic mode", err)
	}
}

func TestXSKSetup(t *testing.T) {
	lab := newLab(t, 2)
	s, err := NewXSK(lab.HostIndex, 1, XSKConfig{Frames: 64, RingSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	if s.Free() != 32 || s.heldFrames() != 0 || s.Queue() != 1 {
		t.Errorf("after setup: %d frames free, %d held, queue %d; want 32 (64 less a full fill ring), 0, 1", s.Free(), s.heldFrames(), s.Queue())
	}
	if n := s.Receive(8); n != 0 {
		t.Errorf("Receive with no traffic: %d frames", n)
	}
	if st, err := s.Statistics(); err != nil || st != (XSKStatistics{}) {
		t.Errorf("Statistics() = %+v, %v; want zeros", st, err)
	}
	if n := countMappings(t, s.ino); n != 5 {
		t.Errorf("%d mappings of the socket, want 5 (the library's fill, completion and RX rings, and XSK's own of the fill and RX rings)", n)
	}
	ino := s.ino
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n := countMappings(t, ino); n != 0 {
		t.Errorf("%d mappings of the socket after Close", n)
	}
	// The queue is free again at once (after the kernel's deferred release).
	s, err = NewXSK(lab.HostIndex, 1, XSKConfig{Frames: 64, RingSize: 32})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	s.Close()
}

// TestXSKRingsWrap receives through rings far smaller than the traffic, so
// that every index wraps many times, in batches that do not divide the
// rounds: every frame arrives once, in order and whole, none is dropped
// (the fill ring was always given its frames back), and every frame of the
// UMEM is always somewhere, free, held, or in a ring.
func TestXSKRingsWrap(t *testing.T) {
	lab := newLab(t, 1)
	r, err := LoadXSKRedirect(1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Attach(lab.HostIndex, XDPNative); err != nil {
		t.Fatal(err)
	}
	const frames, ring, round, rounds, batch = 48, 16, 12, 40, 5
	s, err := NewXSK(lab.HostIndex, 0, XSKConfig{Frames: frames, RingSize: ring})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := r.Register(s); err != nil {
		t.Fatal(err)
	}
	inRings := func() int {
		return int(*s.fill.producer-atomic.LoadUint32(s.fill.consumer)) + s.Pending()
	}
	next := 0
	for k := range rounds {
		var sent [][]byte
		for i := range round {
			sent = append(sent, testFrame(lab.HostMAC, k*round+i, 60))
		}
		xdptest.Send(t, lab, sent) // fewer than the RX ring holds: none is dropped
		timer := time.AfterFunc(5*time.Second, func() { s.Wake() })
		for got := 0; got < round; {
			if err := s.Wait(); err != nil {
				t.Fatal(err)
			}
			n := s.Receive(batch)
			if n == 0 && s.Pending() == 0 {
				timer.Stop()
				t.Fatalf("round %d: %d of %d frames in 5s", k, got, round)
			}
			for i := range n {
				f := s.Frame(i)
				if want := sent[got+i]; !bytes.Equal(f, want) {
					t.Fatalf("frame %d: got % x, want frame %d, % x", next, f, next, want)
				}
				next++
			}
			got += n
			if sum := s.Free() + s.heldFrames() + inRings(); sum != frames {
				t.Fatalf("after frame %d: %d free, %d held, %d in the rings: %d frames, want %d", next, s.Free(), s.heldFrames(), inRings(), sum, frames)
			}
		}
		timer.Stop()
	}
	if st, err := s.Statistics(); err != nil || st != (XSKStatistics{}) {
		t.Errorf("Statistics() = %+v, %v; want no drop", st, err)
	}
}

// TestXSKFailedBindUnmaps binds with zero-copy on veth, which refuses it after
// the library mapped the rings: nothing may stay mapped.
func TestXSKFailedBindUnmaps(t *testing.T) {
	lab := newLab(t, 1)
	before, err := socketMappings()
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewXSK(lab.HostIndex, 0, XSKConfig{Frames: 64, RingSize: 32, ZeroCopy: true})
	if !errors.Is(err, ErrNotSupported) {
		t.Fatalf("zero-copy on veth: %v, want ErrNotSupported", err)
	}
	after, err := socketMappings()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("%d socket mappings after the failed bind, %d before", len(after), len(before))
	}
}

func countMappings(tb testing.TB, ino uint64) int {
	tb.Helper()
	maps, err := socketMappings()
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, m := range maps {
		if m.ino == ino {
			n++
		}
	}
	return n
}

func TestXSKConfigWithDefaults(t *testing.T) {
	tests := []struct {
		name    string
		cfg     XSKConfig
		wantErr string
	}{
		{"zero", XSKConfig{}, ""},
		{"4096-byte frames", XSKConfig{FrameSize: 4096}, ""},
		{"1024-byte frames", XSKConfig{FrameSize: 1024}, "frame size 1024"},
		{"3000-byte frames", XSKConfig{FrameSize: 3000}, "frame size 3000"},
		{"8192-byte frames", XSKConfig{FrameSize: 8192}, "frame size 8192"},
		{"ring of 1000", XSKConfig{RingSize: 1000}, "ring size 1000"},
		{"negative frames", XSKConfig{Frames: -1}, "-1 frames"},
		{"4 GiB UMEM", XSKConfig{Frames: 1 << 21}, "frames of 2048 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.WithDefaults()
			if tt.wantErr == "" {
				if err != nil || got.Frames == 0 || got.FrameSize == 0 || got.RingSize == 0 {
					t.Errorf("WithDefaults() = %+v, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("WithDefaults() error %v, want one saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestRXQueues(t *testing.T) {
	lab := newLab(t, 3)
	if n, err := RXQueues(lab.Host); n != 3 || err != nil {
		t.Errorf("RXQueues(%s) = %d, %v; want 3", lab.Host, n, err)
	}
	if n, err := ethtoolRXChannels(lab.Host); n != 3 || err != nil {
		t.Errorf("ethtool channels of %s: %d, %v; want 3", lab.Host, n, err)
	}
	if _, err := RXQueues("xhlnone0"); err == nil {
		t.Error("RXQueues of a missing interface succeeded")
	}
}
