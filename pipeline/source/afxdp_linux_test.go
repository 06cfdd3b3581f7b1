package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestAFXDPReceive sends every corpus shape from the lab's Peer end and checks
// that each frame arrives exactly once, byte for byte, on one of Host's
// queues, and that the queues' counters add up.
func TestAFXDPReceive(t *testing.T) {
	tests := []struct {
		name   string
		queues int
		cfg    AFXDPConfig
	}{
		{"generic/2 queues/poll", 2, AFXDPConfig{Mode: XDPGeneric, RxMode: RxPoll}},
		{"native/2 queues/poll", 2, AFXDPConfig{Mode: XDPNative, RxMode: RxPoll}},
		{"native/4 queues/poll", 4, AFXDPConfig{Mode: XDPNative, RxMode: RxPoll}},
		{"generic/4 queues/spin", 4, AFXDPConfig{Mode: XDPGeneric, RxMode: RxSpin}},
		// Every frame passes through the rings about 25 times.
		{"native/2 queues/poll/small rings", 2, AFXDPConfig{Mode: XDPNative, RxMode: RxPoll, Frames: 64, RingSize: 32, Batch: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab := xdptest.NewLab(t, vethlab.Config{Queues: tt.queues})
			cfg := tt.cfg
			cfg.Iface = lab.Host
			src := openSource(t, cfg)
			wantShown := map[XDPMode]string{XDPNative: "xdp", XDPGeneric: "xdpgeneric"}[cfg.Mode]
			if got := xdpShown(t, lab.Host); got != wantShown {
				t.Fatalf("ip link shows %q on %s after OpenAFXDP, want %q", got, lab.Host, wantShown)
			}
			if got := len(src.Queues()); got != tt.queues {
				t.Fatalf("%d queues, want all %d", got, tt.queues)
			}
			frames := taggedFrames(10)
			sender := newPeerSender(t, lab)
			got := collect(t, src, len(frames), 10*time.Second, func(received func(int, time.Duration) int) {
				if cfg.Frames == 64 {
					// Rings of 32 entries: send no faster than they drain,
					// 16 frames at a time, each 16 once the receivers have
					// the ones before (a fixed pause between them let a
					// ring overflow when the race detector and other tests
					// slowed the receivers).
					for i := 0; i < len(frames); i += 16 {
						end := min(i+16, len(frames))
						sender.sendAll(t, frames[i:end])
						received(end, 100*time.Millisecond)
					}
					return
				}
				sender.sendAll(t, frames)
			})
			checkReceived(t, frames, got)

			perQueue := map[int]uint64{}
			for _, r := range got {
				perQueue[r.queue]++
			}
			var total QueueStats
			for _, q := range src.Queues() {
				st := q.Stats()
				if st.Frames != perQueue[q.Queue()] {
					t.Errorf("queue %d: Stats().Frames = %d, the receiver got %d", q.Queue(), st.Frames, perQueue[q.Queue()])
				}
				total.Frames += st.Frames
				total.Bytes += st.Bytes
				total.RxDropped += st.KernelDrops()
			}
			var wantBytes uint64
			for _, f := range frames {
				wantBytes += uint64(len(f))
			}
			if total.Frames != uint64(len(frames)) || total.Bytes != wantBytes || total.RxDropped != 0 {
				t.Errorf("queues counted %d frames, %d bytes, %d kernel drops; want %d, %d, 0", total.Frames, total.Bytes, total.RxDropped, len(frames), wantBytes)
			}
			t.Logf("%s mode, rx %s, frames per queue %v", src.Mode(), src.RxMode(), perQueue)
			if xdpAttached(t, lab.Host) {
				t.Errorf("an XDP program is still attached to %s after Close", lab.Host)
			}
		})
	}
}

// checkReceived checks that got holds each of sent exactly once, byte for byte.
func checkReceived(tb testing.TB, sent [][]byte, got []received) {
	tb.Helper()
	seen := make([]int, len(sent))
	for _, r := range got {
		seq, ok := frameSeq(r.frame)
		if !ok || seq >= len(sent) {
			tb.Errorf("queue %d: a frame that was not sent: % x", r.queue, r.frame)
			continue
		}
		seen[seq]++
		if !bytes.Equal(r.frame, sent[seq]) {
			tb.Errorf("frame %d on queue %d changed:\n got % x\nwant % x", seq, r.queue, r.frame, sent[seq])
		}
	}
	missing := 0
	for seq, n := range seen {
		switch {
		case n == 0:
			missing++
		case n > 1:
			tb.Errorf("frame %d received %d times", seq, n)
		}
	}
	if missing > 0 {
		tb.Errorf("%d of %d frames not received", missing, len(sent))
	}
}

func TestAFXDPCloseUnblocksReceive(t *testing.T) {
	for _, mode := range []RxMode{RxPoll, RxSpin} {
		t.Run(string(mode), func(t *testing.T) {
			lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
			src := openSource(t, AFXDPConfig{Iface: lab.Host, Mode: XDPGeneric, RxMode: mode})
			errs := make(chan error, len(src.Queues()))
			for _, q := range src.Queues() {
				go func() { errs <- q.Receive(NewBatch(8)) }()
			}
			// Wait until every Receive holds its queue's lock: it is in its
			// loop, which nothing but Close ends (nothing is sent). The
			// lock signals nothing: it is polled, for 5 s at most.
			for _, q := range src.Queues() {
				aq := q.(*afxdpQueue)
				for deadline := time.Now().Add(5 * time.Second); aq.mu.TryLock(); runtime.Gosched() {
					aq.mu.Unlock()
					if time.Now().After(deadline) {
						t.Fatalf("queue %d: Receive not waiting after 5 s", aq.Queue())
					}
				}
			}
			if err := src.Close(); err != nil {
				t.Fatal(err)
			}
			for range src.Queues() {
				select {
				case err := <-errs:
					if !errors.Is(err, ErrClosed) {
						t.Errorf("Receive returned %v, want ErrClosed", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("Receive still blocked 5 s after Close")
				}
			}
			if err := src.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			for _, q := range src.Queues() {
				if err := q.Receive(NewBatch(8)); !errors.Is(err, ErrClosed) {
					t.Errorf("Receive after Close: %v, want ErrClosed", err)
				}
			}
		})
	}
}

// TestAFXDPCloseWhileHolding closes the source while the caller holds a
// batch: the frames must stay readable until the next Receive.
func TestAFXDPCloseWhileHolding(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
	src := openSource(t, AFXDPConfig{Iface: lab.Host, Mode: XDPNative, RxMode: RxPoll})
	frames := taggedFrames(1)
	newPeerSender(t, lab).sendAll(t, frames)
	q := src.Queues()[0]
	b := NewBatch(16)
	if err := q.Receive(b); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Frames {
		if seq, ok := frameSeq(f); !ok || !bytes.Equal(f, frames[seq]) {
			t.Errorf("a held frame changed after Close: % x", f)
		}
	}
	if st := q.Stats(); st.Frames != uint64(b.Len()) {
		t.Errorf("Stats after Close: %d frames, want %d", st.Frames, b.Len())
	}
	if err := q.Receive(b); !errors.Is(err, ErrClosed) || b.Len() != 0 {
		t.Errorf("Receive after Close: %v with %d frames, want ErrClosed and none", err, b.Len())
	}
	if n := xdptest.SocketMappings(); n != 0 {
		t.Errorf("%d socket mappings after the last Receive", n)
	}
}

// TestAFXDPReopen opens, closes and opens again the same queues: the first
// sockets must be gone (asavie/xdp's Close alone leaves them bound: EBUSY).
func TestAFXDPReopen(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	for range 3 {
		src, err := OpenAFXDP(AFXDPConfig{Iface: lab.Host, Mode: XDPGeneric})
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := xdptest.SocketMappings(); n != 0 {
		t.Errorf("%d socket mappings after Close", n)
	}
}

func TestAFXDPReceiveAllocs(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
	src := openSource(t, AFXDPConfig{Iface: lab.Host, Mode: XDPNative, RxMode: RxPoll})
	const runs, batch = 50, 8
	frames := taggedFrames((runs+1)*batch/len(taggedFrames(1)) + 1)
	newPeerSender(t, lab).sendAll(t, frames)
	q := src.Queues()[0]
	b := NewBatch(batch)
	allocs := testing.AllocsPerRun(runs, func() {
		if err := q.Receive(b); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Receive allocates %.1f times per batch of %d, want 0", allocs, batch)
	}
}

// killChildEnv marks the child process of TestAFXDPKilled.
const killChildEnv = "XDPHASH_AFXDP_KILL_CHILD"

func TestOpenAFXDPErrors(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	bigMTU := xdptest.NewLab(t, vethlab.Config{Queues: 1, MTU: 2000})
	jumbo := xdptest.NewLab(t, vethlab.Config{Queues: 1, MTU: 9000})
	tests := []struct {
		name string
		cfg  AFXDPConfig
		is   error    // errors.Is(err, is)
		says []string // and its text says these
	}{
		{"missing interface", AFXDPConfig{Iface: "xhlnone0"}, ErrNoInterface,
			[]string{"xhlnone0", "not found", "see `ip link`"}},
		{"queue out of range", AFXDPConfig{Iface: lab.Host, Queues: []int{0, 5}}, ErrNoQueue,
			[]string{"queue 5 does not exist on " + lab.Host, "it has 2 RX queues"}},
		{"empty queue list", AFXDPConfig{Iface: lab.Host, Queues: []int{}}, ErrAFXDPConfig, nil},
		{"zero-copy on veth", AFXDPConfig{Iface: lab.Host, ZeroCopy: true}, kernel.ErrNotSupported,
			[]string{"no AF_XDP zero-copy", "drop --zero-copy"}},
		{"zero-copy in generic mode", AFXDPConfig{Iface: lab.Host, ZeroCopy: true, Mode: XDPGeneric}, ErrAFXDPConfig,
			[]string{"zero-copy needs native XDP"}},
		{"frame size below the MTU", AFXDPConfig{Iface: bigMTU.Host, FrameSize: 2048}, ErrAFXDPConfig,
			[]string{"frame size 2048 cannot hold the MTU 2000"}},
		{"MTU above the larger frame size", AFXDPConfig{Iface: jumbo.Host}, ErrAFXDPConfig,
			[]string{"frame size 4096 cannot hold the MTU 9000"}},
		{"frame size not a power of two", AFXDPConfig{Iface: lab.Host, FrameSize: 3000}, ErrAFXDPConfig,
			[]string{"frame size 3000"}},
		{"batch above the ring size", AFXDPConfig{Iface: lab.Host, RingSize: 64, Frames: 64, Batch: 65}, ErrAFXDPConfig, nil},
		{"unknown XDP mode", AFXDPConfig{Iface: lab.Host, Mode: "offload"}, ErrAFXDPConfig, nil},
		{"unknown receive mode", AFXDPConfig{Iface: lab.Host, RxMode: "sleep"}, ErrAFXDPConfig, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := OpenAFXDP(tt.cfg)
			if err == nil {
				src.Close()
				t.Fatal("OpenAFXDP succeeded")
			}
			t.Log(err)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			for _, want := range tt.says {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			for _, iface := range []string{lab.Host, bigMTU.Host, jumbo.Host} {
				if xdpAttached(t, iface) {
					t.Errorf("the failed OpenAFXDP left an XDP program on %s", iface)
				}
			}
		})
	}
}

// TestAFXDPFrameSizeFollowsMTU: without a frame size, an interface whose
// MTU the default 2048-byte frame cannot hold gets 4096-byte frames, as
// --frame-size's help says, and opens.
func TestAFXDPFrameSizeFollowsMTU(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1, MTU: 3000})
	openSource(t, AFXDPConfig{Iface: lab.Host, Mode: XDPGeneric})
	if !xdpAttached(t, lab.Host) {
		t.Error("no XDP program attached")
	}
}

// TestOpenAFXDPTwice opens a second source on an interface that has one.
func TestOpenAFXDPTwice(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	first := openSource(t, AFXDPConfig{Iface: lab.Host, Mode: XDPGeneric})
	src, err := OpenAFXDP(AFXDPConfig{Iface: lab.Host, Mode: XDPGeneric})
	if err == nil {
		src.Close()
		t.Fatal("a second OpenAFXDP on the same interface succeeded")
	}
	if !strings.Contains(err.Error(), "another XDP program is attached") {
		t.Errorf("error %q does not say another program is attached", err)
	}
	if got := xdpShown(t, lab.Host); got != "xdpgeneric" {
		t.Errorf("the failed second open changed the first one's program: ip link shows %q", got)
	}
	first.Close()
}

// openWithout runs OpenAFXDP on a locked OS thread whose effective
// capability set lacks drop (capabilities are per thread, and every system
// call of OpenAFXDP runs on the calling thread).
func openWithout(tb testing.TB, cfg AFXDPConfig, drop []uint) (src Source, err error) {
	tb.Helper()
	if cerr := xdptest.WithoutCapabilities(drop, func() { src, err = OpenAFXDP(cfg) }); cerr != nil {
		return nil, cerr
	}
	return src, err
}

func TestOpenAFXDPWithoutPrivileges(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
	tests := []struct {
		name string
		drop []uint
		says string
	}{
		{"no CAP_NET_RAW", []uint{unix.CAP_NET_RAW}, "CAP_NET_RAW"},
		{"no CAP_BPF", []uint{unix.CAP_BPF, unix.CAP_SYS_ADMIN}, "missing CAP_BPF"},
		{"no CAP_NET_ADMIN", []uint{unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN}, "missing CAP_NET_ADMIN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := openWithout(t, AFXDPConfig{Iface: lab.Host, Mode: XDPGeneric}, tt.drop)
			if err == nil {
				src.Close()
				t.Fatal("OpenAFXDP succeeded")
			}
			t.Log(err)
			if !errors.Is(err, kernel.ErrNotPermitted) {
				t.Errorf("error %q is not ErrNotPermitted", err)
			}
			for _, want := range []string{tt.says, "run as root", "needs CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if xdpAttached(t, lab.Host) {
				t.Errorf("the failed OpenAFXDP left an XDP program on %s", lab.Host)
			}
		})
	}
}

// TestAFXDPKilled opens a source in a child process on a lab the test made,
// kills the child with SIGKILL, and checks that the kernel detached the XDP
// program: the BPF link dies with the process.
func TestAFXDPKilled(t *testing.T) {
	if iface := os.Getenv(killChildEnv); iface != "" {
		if _, err := OpenAFXDP(AFXDPConfig{Iface: iface}); err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		fmt.Println("ready")
		select {}
	}
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 2})
	// Without XDP links a killed process leaves its program attached.
	xdptest.SkipIfNotSupported(t, kernel.HaveXDPLinks())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAFXDPKilled$")
	xdptest.StartChild(t, cmd, killChildEnv+"="+lab.Host, func(line string) bool { return line == "ready" })
	if got := xdpShown(t, lab.Host); got != "xdp" {
		t.Errorf("with the child running, ip link shows %q on %s, want xdp", got, lab.Host)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The process is reaped once its files, the link among them, are
	// released; allow the kernel a moment all the same (polled: the kernel
	// signals nothing).
	for try := 0; xdpAttached(t, lab.Host); try++ {
		if try == 100 {
			t.Fatalf("an XDP program is still attached to %s 1 s after the child was killed", lab.Host)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitPending waits until the queue's RX ring holds n frames that no Receive
// took: the ring signals nothing a test can wait on without taking them, so
// it is polled, for 5 s at most.
func waitPending(t *testing.T, q QueueSource, n int) {
	t.Helper()
	aq := q.(*afxdpQueue)
	for deadline := time.Now().Add(5 * time.Second); ; runtime.Gosched() {
		aq.mu.Lock()
		got := aq.xsk.Pending()
		aq.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %d: %d frames on the RX ring after 5 s, want %d", aq.Queue(), got, n)
		}
	}
}

// TestAFXDPStopTakesTheRing delivers frames to the RX ring, stops the
// source, and receives: every frame on the ring is handed out, without a
// wait, then Receive returns ErrClosed. Stopped after one batch and closed,
// the source counts the frames left on the ring (RxLeftOnRing).
func TestAFXDPStopTakesTheRing(t *testing.T) {
	for _, mode := range []RxMode{RxPoll, RxSpin} {
		t.Run(string(mode)+"/drained", func(t *testing.T) {
			lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
			src := openSource(t, AFXDPConfig{Iface: lab.Host, Mode: XDPNative, RxMode: mode, Batch: 8})
			frames := taggedFrames(4)
			newPeerSender(t, lab).sendAll(t, frames)
			q := src.Queues()[0]
			waitPending(t, q, len(frames))
			src.Stop()
			var got []received
			b := NewBatch(8)
			for calls := 0; ; calls++ {
				err := q.Receive(b)
				for _, f := range b.Frames {
					got = append(got, received{queue: q.Queue(), frame: bytes.Clone(f)})
				}
				if errors.Is(err, ErrClosed) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if calls > len(frames) {
					t.Fatalf("Receive still hands out frames after %d calls, %d frames sent", calls, len(frames))
				}
			}
			checkReceived(t, frames, got)
			if err := q.Receive(b); !errors.Is(err, ErrClosed) || b.Len() != 0 {
				t.Errorf("Receive after the drain: %v with %d frames, want ErrClosed and none", err, b.Len())
			}
			if err := src.Close(); err != nil {
				t.Fatal(err)
			}
			if st := q.Stats(); st.Frames != uint64(len(frames)) || st.KernelDrops() != 0 {
				t.Errorf("after Close: %d frames handed out, %d dropped or unreceived; want %d and 0", st.Frames, st.KernelDrops(), len(frames))
			}
		})
	}
	t.Run("closed with frames on the ring", func(t *testing.T) {
		lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
		src := openSource(t, AFXDPConfig{Iface: lab.Host, Mode: XDPNative, RxMode: RxPoll, Batch: 8})
		frames := taggedFrames(4)
		newPeerSender(t, lab).sendAll(t, frames)
		q := src.Queues()[0]
		waitPending(t, q, len(frames))
		src.Stop()
		b := NewBatch(8)
		if err := q.Receive(b); err != nil || b.Len() != 8 {
			t.Fatalf("first Receive after Stop: %v with %d frames, want a batch of 8", err, b.Len())
		}
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
		st := q.Stats()
		if st.Frames != 8 || st.RxLeftOnRing != uint64(len(frames)-8) || st.KernelDrops() != st.RxLeftOnRing || st.Unreceived != 0 {
			t.Errorf("after Close: %d handed out, %d left on the ring, %d dropped in all, %d unreceived; want 8, %d, %d, 0", st.Frames, st.RxLeftOnRing, st.KernelDrops(), st.Unreceived, len(frames)-8, len(frames)-8)
		}
	})
}
