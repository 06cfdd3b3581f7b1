package virtiolab_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

func TestMain(m *testing.M) { xdptest.Main(m, xdptest.RemoveXdphashBinary) }

// requireLab ends the test (xdptest.Unavailable) without root or QEMU, and
// returns the guest kernel, fetched into the cache if need be.
func requireLab(tb testing.TB, series string) virtiolab.Kernel {
	tb.Helper()
	xdptest.RequireRoot(tb)
	if _, err := exec.LookPath(virtiolab.QEMU); err != nil {
		xdptest.Unavailable(tb, "the virtio lab needs %s (apt-get install qemu-system-x86): %v", virtiolab.QEMU, err)
	}
	k, err := virtiolab.FetchKernel(series)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// TestFetchKernel fetches (or finds in the cache) the newest guest kernel
// of each series the lab boots, and resolves virtio-net's modules from it:
// the dependencies first.
func TestFetchKernel(t *testing.T) {
	xdptest.RequireRoot(t)
	for _, series := range virtiolab.Series {
		k, err := virtiolab.FetchKernel(series)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k.Release, series+".") {
			t.Errorf("series %s: release %s", series, k.Release)
		}
		if _, err := os.Stat(k.Vmlinuz); err != nil {
			t.Error(err)
		}
		mods, err := k.Modules("virtio_pci", "virtio_net")
		if err != nil {
			t.Fatal(err)
		}
		// Each module after what it depends on, virtio_net last.
		at := map[string]int{}
		var names []string
		for i, m := range mods {
			name, _, _ := strings.Cut(filepath.Base(m), ".ko")
			at[name] = i + 1
			names = append(names, name)
		}
		if !(at["failover"] > 0 && at["failover"] < at["net_failover"] && at["net_failover"] < at["virtio_net"] && at["virtio_net"] == len(mods)) {
			t.Errorf("series %s (%s): virtio_net's modules in load order: %v", series, k.Package, names)
		}
		t.Logf("series %s: modules %v", series, names)
		t.Logf("series %s: %s", series, k.Package)
	}
}

// newLab starts a lab for the test and closes it when the test ends,
// checking that nothing of it is left.
func newLab(tb testing.TB, cfg virtiolab.Config) *virtiolab.Lab {
	tb.Helper()
	xdptest.CatchSignals()
	l, err := virtiolab.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	forget := xdptest.UndoOnSignal(func() { l.Close() })
	tb.Cleanup(func() {
		forget()
		if err := l.Close(); err != nil {
			tb.Error(err)
		}
		if _, err := os.Stat(l.Dir); err == nil {
			tb.Errorf("the lab's directory %s outlived Close", l.Dir)
		}
	})
	return l
}

// TestDeviceHashAndQueue boots the guest with 4 queue pairs, runs xdphash's
// pipeline on its virtio-net device (native XDP, the metadata program,
// AF_XDP copy mode) with the device's Toeplitz key, and sends it 20,480
// frames of the datacenter profile from the host at 10 kpps: every frame's
// device hash must equal xdphash's Toeplitz of it with the device's key and
// fields, every frame must have come in on the queue the device's table
// gives for that hash, and every frame sent must be received or counted as
// dropped.
func TestDeviceHashAndQueue(t *testing.T) {
	k := requireLab(t, "")
	bin := xdptest.XdphashBinary(t)
	const sent = 20480
	l := bootDeviceLab(t, k, bin)
	rep, err := pktgen.Run(context.Background(), datacenter(t), pktgen.Config{
		Iface: l.Tap, Enter: l.InNS, Mode: pktgen.ModePacket, Count: sent, Rate: 10000, Mark: steer(t, l),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Frames != sent {
		t.Fatalf("the generator sent %d frames, want %d", rep.Frames, sent)
	}
	if err := l.Stop(rep.Frames); err != nil {
		t.Fatal(err)
	}
	res, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	// The tap counts a frame out when QEMU reads it: once QEMU is gone.
	tap := tapStats(t, l)
	var st runstats.RunStats
	if err := json.Unmarshal(res.Files["/tmp/run.json"], &st); err != nil {
		t.Fatalf("the guest's run.json: %v (step: %+v)", err, res.Report.Steps)
	}
	step := res.Report.Steps[0]
	if step.Exit != 0 || step.Error != "" {
		t.Errorf("xdphash run in the guest: exit %d %s, want 0 (stopped as asked, at the end of its input)\n%s", step.Exit, step.Error, step.Stderr)
	}
	t.Logf("guest %s: /init at %v (guest uptime), eth0 up at %v; %d of %d queues", res.Report.Kernel, res.Report.InitUptime, res.Report.IfaceUp, res.Report.Iface.Combined, res.Report.Iface.MaxCombined)
	t.Logf("xdp program: %s", st.Config.XDPProgram)

	a := st.Accounting
	var kernelDrops uint64
	for _, n := range a.KernelDrops {
		kernelDrops += n
	}
	guestDrops := res.Report.Iface.After["rx_dropped"] - res.Report.Iface.Before["rx_dropped"]
	t.Logf("sent %d; tap: %d out, %d refused (and sent again); guest eth0: %d received, %d dropped; xdphash: %d received, %d kernel drops, balanced %v",
		sent, tap.TxPackets, tap.TxDropped, res.Report.Iface.After["rx_packets"]-res.Report.Iface.Before["rx_packets"], guestDrops, a.Received, kernelDrops, a.Balanced)
	// The generator counts a frame once the tap took it: a refusal (the
	// tap's queue to QEMU full, tx_dropped) is sent again.
	guestRx := res.Report.Iface.After["rx_packets"] - res.Report.Iface.Before["rx_packets"]
	if tap.TxPackets != sent || guestRx != sent {
		t.Errorf("accounting: %d sent, %d out of the tap, %d received by the guest's eth0; want all equal", sent, tap.TxPackets, guestRx)
	}
	// eth0 counts a frame XDP could not hand to AF_XDP in its rx_dropped
	// too; a frame left on an AF_XDP ring at the stop it delivered.
	unreceived := a.KernelDrops["unreceived"]
	if got := a.Received + unreceived + guestDrops; got != guestRx || kernelDrops-unreceived > guestDrops {
		t.Errorf("accounting: %d received + %d left on the AF_XDP rings + %d guest drops (of which AF_XDP's %d) = %d, want the guest's %d",
			a.Received, unreceived, guestDrops, kernelDrops-unreceived, got, guestRx)
	}
	if !a.Balanced {
		t.Errorf("xdphash's accounting does not balance: %+v", a)
	}
	checkSteered(t, l, sent, res.Report.Iface)
	for _, q := range st.Queues {
		t.Logf("queue %d: %d frames", q.Queue, q.Stats.Frames)
		if q.Stats.Frames == 0 {
			t.Errorf("queue %d received nothing: the device spread no frame to it", q.Queue)
		}
	}

	h := st.DeviceHash
	if h == nil {
		t.Fatal("run.json has no device_hash")
	}
	t.Logf("device hash check (%s): %d frames, %d with a hash, %d checked, %d conflicts", h.Method, h.Frames, h.WithHash, h.Checked, h.Conflicts)
	if h.Method != "equality" || h.Frames != a.Received || h.WithHash != h.Frames || h.Checked != h.Frames || h.Conflicts != 0 {
		t.Errorf("device hash check: method %s, %d frames, %d with a device hash, %d checked, %d conflicts; want equality on all %d received frames, no conflict; samples %+v",
			h.Method, h.Frames, h.WithHash, h.Checked, h.Conflicts, a.Received, h.Samples)
	}
	q := st.DeviceQueue
	if q == nil {
		t.Fatal("run.json has no device_queue")
	}
	t.Logf("device queue check: table of %d, %d frames, %d checked, %d mismatches", q.TableLen, q.Frames, q.Checked, q.Mismatches)
	if q.Frames != a.Received || q.Checked != q.Frames || q.Mismatches != 0 {
		t.Errorf("device queue check: %d frames, %d checked, %d mismatches; want all %d received frames checked, none on another queue; samples %+v", q.Frames, q.Checked, q.Mismatches, a.Received, q.Samples)
	}
}

// tapStats reads the counters of the lab's tap.
func tapStats(tb testing.TB, l *virtiolab.Lab) *netlink.LinkStatistics {
	tb.Helper()
	var s *netlink.LinkStatistics
	err := l.InNS(func() error {
		link, err := netlink.LinkByName(l.Tap)
		if err != nil {
			return err
		}
		s = link.Attrs().Statistics
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestKilledLabLeavesNothing starts a lab in a child process, kills the
// child with SIGKILL, and checks that QEMU dies with it, that no process is
// left in the lab's namespace (so the kernel frees it, and the tap with
// it), and that the next lab's sweep removes the lab's directory.
func TestKilledLabLeavesNothing(t *testing.T) {
	if os.Getenv("VIRTIOLAB_CHILD") == "1" {
		k, err := virtiolab.FetchKernel("")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		l, err := virtiolab.New(virtiolab.Config{Kernel: k, Binary: os.Args[0]})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Println(l.QEMUPid(), l.Dir)
		select {}
	}
	requireLab(t, "")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledLabLeavesNothing$")
	line := xdptest.StartChild(t, cmd, "VIRTIOLAB_CHILD=1", func(s string) bool { return !strings.HasPrefix(s, "error") })
	pidText, dir, _ := strings.Cut(line, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q", line)
	}
	netNS, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	cmd.Process.Kill()
	cmd.Wait()
	// The pidfd turns readable when QEMU has exited.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 30000); err != nil || n != 1 {
		t.Fatalf("QEMU (pid %d) outlived its killed parent by 30 s (%v)", pid, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	for _, p := range procs {
		if ns, err := os.Readlink(p); err == nil && ns == netNS {
			t.Errorf("%s is still in the killed lab's namespace %s", filepath.Dir(filepath.Dir(p)), netNS)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed lab's directory %s: %v (want it there until a sweep)", dir, err)
	}
	virtiolab.Sweep()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the killed lab's directory %s outlived the sweep (%v)", dir, err)
	}
}

// TestVerifyPerKernel runs `xdphash verify` (the built-in corpus against the
// running kernel's skb_get_hash) inside the guest on each kernel series the
// lab boots: the dissector must agree with every one of them. The same boot
// asks for AF_XDP zero-copy, which virtio-net has only from Linux 6.13:
// both series must refuse it, and xdphash must say why; and `xdphash rss
// show` must read the device's own Toeplitz key, table and hash fields.
func TestVerifyPerKernel(t *testing.T) {
	for _, series := range virtiolab.Series {
		t.Run(series, func(t *testing.T) {
			k := requireLab(t, series)
			l := newLab(t, virtiolab.Config{
				Kernel: k, Binary: xdptest.XdphashBinary(t),
				Steps: []guest.Step{
					{Args: []string{guest.InitPath, "verify"}, Timeout: 4 * time.Minute},
					{Args: []string{guest.InitPath, "run", "--iface", "eth0", "--queues", "0", "--xdp-mode", "native", "--zero-copy", "--duration", "2s"}, Timeout: time.Minute},
					{Args: []string{guest.InitPath, "rss", "show", "--iface", "eth0"}, Timeout: time.Minute},
				},
			})
			res, err := l.Wait()
			if err != nil {
				t.Fatal(err)
			}
			s := res.Report.Steps[0]
			t.Logf("guest %s: %s", res.Report.Kernel, strings.TrimSpace(s.Stdout))
			if s.Exit != 0 || !strings.Contains(s.Stdout, " 0 divergences") {
				t.Errorf("xdphash verify on %s: exit %d, %s\nstdout:\n%s\nstderr:\n%s", res.Report.Kernel, s.Exit, s.Error, s.Stdout, s.Stderr)
			}
			zc := res.Report.Steps[1]
			t.Logf("guest %s: run --zero-copy: exit %d: %s", res.Report.Kernel, zc.Exit, zc.Stderr)
			if zc.Exit == 0 || !strings.Contains(zc.Stderr, "no AF_XDP zero-copy") {
				t.Errorf("run --zero-copy on %s: exit %d, stderr %q; want a refusal that names the missing zero-copy", res.Report.Kernel, zc.Exit, zc.Stderr)
			}
			// rss show reads the virtio device's own key, table and fields.
			rs := res.Report.Steps[2]
			t.Logf("guest %s: rss show:\n%s", res.Report.Kernel, rs.Stdout)
			for _, want := range []string{"hash function: toeplitz", "hash key (40 bytes): ", "indirection table (128 entries):", "hash fields tcp4: "} {
				if rs.Exit != 0 || !strings.Contains(rs.Stdout, want) {
					t.Errorf("rss show --iface eth0 on %s: exit %d, stdout lacks %q:\n%s%s", res.Report.Kernel, rs.Exit, want, rs.Stdout, rs.Stderr)
				}
			}
		})
	}
}

// TestKilledQEMU kills the lab's QEMU with SIGKILL while the guest boots:
// Wait must fail, saying what happened with the console's tail, and Close
// must still remove everything.
func TestKilledQEMU(t *testing.T) {
	k := requireLab(t, "")
	l := newLab(t, virtiolab.Config{Kernel: k, Binary: xdptest.XdphashBinary(t)})
	if err := syscall.Kill(l.QEMUPid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Wait(); err == nil || !strings.Contains(err.Error(), "console") {
		t.Errorf("Wait after QEMU was killed: %v; want an error with the console's tail", err)
	}
	if err := l.WaitReady(); err == nil {
		t.Error("WaitReady after QEMU was killed: no error")
	}
}

// TestHungGuestKilled gives the guest less time than a boot takes: the lab
// must kill it at its timeout and say so, with the console's tail.
func TestHungGuestKilled(t *testing.T) {
	k := requireLab(t, "")
	l := newLab(t, virtiolab.Config{Kernel: k, Binary: xdptest.XdphashBinary(t), Timeout: time.Second})
	_, err := l.Wait()
	if err == nil || !strings.Contains(err.Error(), "longer than 1s and was killed") || !strings.Contains(err.Error(), "console") {
		t.Errorf("Wait on a guest past its timeout: %v; want a kill with the console's tail", err)
	}
}

// bootDeviceLab boots TestDeviceHashAndQueue's guest and waits until its
// run is ready for traffic.
func bootDeviceLab(tb testing.TB, k virtiolab.Kernel, bin string) *virtiolab.Lab {
	tb.Helper()
	quirks, err := virtiolab.NICQuirks()
	if err != nil {
		tb.Fatal(err)
	}
	cfg := virtiolab.Config{
		Kernel: k, Binary: bin, RXHash: true, Queues: 4,
		Steps: []guest.Step{{
			Args: []string{guest.InitPath, "run", "--iface", "eth0", "--queues", "all", "--xdp-mode", "native",
				"--hash", "toeplitz", "--rss-key", "device", "--check-device-hash", "--check-device-queue",
				"--workers", "2", "--out", "/tmp/run.json", "--stop-on-eof"},
			Ready: "xdp program", ResetRSS: true, StopOnEOF: true, Files: []string{"/tmp/run.json"}, Timeout: 4 * time.Minute,
		}},
	}
	if len(quirks) > 0 {
		cfg.Steps[0].Args = append(cfg.Steps[0].Args, "--rss-quirks", strings.Join(quirks, ","))
	}
	l := bootLab(tb, cfg)
	tb.Logf("boot to /init: %v", l.BootTime())
	return l
}

// bootLab starts a lab and waits until its receiving step is ready,
// booting once more when the guest's kernel panicked in its boot
// (virtiolab.ErrGuestPanicked: an emulation fault under TCG on a loaded
// host, before xdphash runs in the guest), with the console's tail in the
// log. Any other failure, or a second panic, fails the test.
func bootLab(tb testing.TB, cfg virtiolab.Config) *virtiolab.Lab {
	tb.Helper()
	for try := 1; ; try++ {
		l := newLab(tb, cfg)
		err := l.WaitReady()
		if err == nil {
			return l
		}
		if !errors.Is(err, virtiolab.ErrGuestPanicked) || try == 2 {
			tb.Fatal(err)
		}
		tb.Logf("boot %d: %v; booting again once", try, err)
		l.Close()
	}
}

// datacenter is the datacenter profile's schedule, to the guest.
func datacenter(tb testing.TB) *pktgen.Schedule {
	tb.Helper()
	prof, err := pktgen.Builtin("datacenter")
	if err != nil {
		tb.Fatal(err)
	}
	sched, err := pktgen.NewSchedule(prof, pktgen.MACs{Dst: virtiolab.GuestMAC})
	if err != nil {
		tb.Fatal(err)
	}
	return sched
}

// steer sets the lab's tap steering (virtiolab.Lab.SteerByRSS) and returns
// the frames' marks.
func steer(tb testing.TB, l *virtiolab.Lab) func([]byte) uint32 {
	tb.Helper()
	mark, err := l.SteerByRSS()
	if err != nil {
		tb.Fatal(err)
	}
	return mark
}

// checkSteered checks that the tap's steering program put every frame on a
// queue by its mark, and that QEMU moved no frame from one queue to
// another: the guest's driver got on each queue the frames that entered
// QEMU on it. The program sees a frame the tap then refuses (its queue to
// QEMU full; counted in the tap's tx_dropped, and sent again), so each
// queue's count may exceed the driver's by refusals, which add up to the
// tap's.
func checkSteered(tb testing.TB, l *virtiolab.Lab, sent uint64, rep guest.Iface) {
	tb.Helper()
	c, err := l.Steered()
	if err != nil {
		tb.Fatal(err)
	}
	refused := tapStats(tb, l).TxDropped
	tb.Logf("tap steering: %v per queue, %d unmarked; %d refused by the tap", c.Queues, c.Unmarked, refused)
	if c.Total() != sent+refused || c.Unmarked != 0 {
		tb.Errorf("tap steering: %d frames steered (%d unmarked), want the %d sent and %d refused, each by its mark", c.Total(), c.Unmarked, sent, refused)
	}
	var excess uint64
	for q, n := range c.Queues {
		// The driver's frames of the queue: 6.12 counts only those its
		// XDP program saw, which is every frame while a run has it attached.
		var name string
		var after uint64
		ok := false
		for _, name = range []string{fmt.Sprintf("rx_queue_%d_packets", q), fmt.Sprintf("rx%d_packets", q), fmt.Sprintf("rx%d_xdp_packets", q)} {
			if after, ok = rep.DriverAfter[name]; ok {
				break
			}
		}
		if !ok {
			tb.Errorf("the guest's driver counts no frames of queue %d (ethtool -S): %v", q, rep.DriverAfter)
			continue
		}
		got := after - rep.DriverBefore[name]
		if got > n {
			tb.Errorf("queue %d: %d frames entered QEMU on tap queue %d, the guest's driver received %d on it (%s): QEMU moved frames between queues", q, n, q, got, name)
			continue
		}
		excess += n - got
	}
	if excess != refused {
		tb.Errorf("tap steering: %d frames steered beyond what the driver received on their queues, want the %d the tap refused: QEMU moved frames between queues", excess, refused)
	}
}
