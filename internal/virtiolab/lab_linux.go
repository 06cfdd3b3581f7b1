package virtiolab

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/virtiolab/cpio"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
)

// Prefix starts the names of the lab's taps and directories: "xhv", the
// creating process's id and a counter.
const Prefix = "xhv"

// QEMU is the emulator the lab runs (Debian package qemu-system-x86).
const QEMU = "qemu-system-x86_64"

// GuestMAC is the guest's address: locally administered.
var GuestMAC = net.HardwareAddr{0x02, 0x78, 0x68, 0x76, 0, 2}

// Config is a lab.
type Config struct {
	// Kernel is the guest kernel (FetchKernel).
	Kernel Kernel
	// Binary is the executable that runs as the guest's /init and that the
	// steps run as guest.InitPath; "" takes this process's executable.
	Binary string
	// Queues is the device's queue pairs (default 4); the guest sets as many
	// combined channels.
	Queues int
	// CPUs and MemoryMB size the guest (default 2 and 1024).
	CPUs, MemoryMB int
	// RXHash turns the device's receive hash on in the guest.
	RXHash bool
	// RSS, when set, is the RSS configuration the guest gives the device.
	RSS *guest.RSS
	// Steps are what the guest runs (guest.Step).
	Steps []guest.Step
	// Timeout bounds the guest's whole life, boot to power-off (default 6
	// minutes): a guest still running then is killed.
	Timeout time.Duration
	// Console, when set, also gets every line of the guest's console.
	Console io.Writer
}

// Lab is a running guest. Its zero value is not usable; see New.
type Lab struct {
	Dir      string // the lab's directory: initramfs, console.log, results
	Tap      string // the tap's name inside the namespace
	TapIndex int

	cfg     Config
	ns      netns.NsHandle
	taps    []*os.File // the tap's queues, in QEMU's order (-netdev tap,fds=)
	qemu    *exec.Cmd
	stdin   io.WriteCloser
	started time.Time
	exited  chan struct{} // closed when QEMU has exited
	exitErr error         // QEMU's exit, once exited is closed
	ready   chan struct{} // closed at the guest's first ReadyMarker
	console *tailLog

	readyOnce, closeOnce sync.Once
	closeErr             error
	rss                  atomic.Pointer[guest.RSSState] // the guest's last RSSMarker line
	steerMu              sync.Mutex
	steer                *kernel.TapSteering
	killed               atomic.Bool
	bootTime             atomic.Int64 // ns from start to the guest's "/init of" line
}

var counter atomic.Uint32

// New writes the initramfs, makes the namespace and its tap, and starts
// QEMU; the guest boots while New returns. Close undoes it all.
func New(cfg Config) (_ *Lab, err error) {
	if cfg.Queues <= 0 {
		cfg.Queues = 4
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = 2
	}
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = 1024
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 6 * time.Minute
	}
	if cfg.Binary == "" {
		if cfg.Binary, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("virtio lab: find this executable: %w", err)
		}
	}
	if _, err := exec.LookPath(QEMU); err != nil {
		return nil, fmt.Errorf("virtio lab: %w (hint: apt-get install qemu-system-x86)", err)
	}
	Sweep()
	id := fmt.Sprintf("%s%d%c", Prefix, os.Getpid(), 'a'+rune(counter.Add(1)%26))
	l := &Lab{Tap: id + "t", cfg: cfg, exited: make(chan struct{}), ready: make(chan struct{})}
	if l.Dir, err = os.MkdirTemp("", id+"-"); err != nil {
		return nil, fmt.Errorf("virtio lab: %w", err)
	}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	gcfg := guest.Config{Iface: "eth0", Queues: cfg.Queues, RXHash: cfg.RXHash, RSS: cfg.RSS, Steps: cfg.Steps}
	initrd := filepath.Join(l.Dir, "initrd.cpio")
	if err := writeInitramfs(initrd, cfg.Binary, cfg.Kernel, gcfg); err != nil {
		return nil, fmt.Errorf("virtio lab: %w", err)
	}
	if l.console, err = newTailLog(filepath.Join(l.Dir, "console.log"), cfg.Console); err != nil {
		return nil, fmt.Errorf("virtio lab: %w", err)
	}
	started := make(chan error, 1)
	// One thread, locked and never unlocked, enters the namespace, makes the
	// tap, starts QEMU and waits for it: QEMU's PR_SET_PDEATHSIG fires when
	// this thread ends, so the thread must outlive QEMU.
	go func() {
		runtime.LockOSThread()
		if err := l.startInNS(initrd); err != nil {
			started <- err
			close(l.exited)
			return
		}
		started <- nil
		l.exitErr = l.qemu.Wait()
		l.console.close()
		close(l.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("virtio lab: %w", err)
	}
	go l.watchTimeout()
	return l, nil
}

// startInNS runs on the lab's locked thread.
func (l *Lab) startInNS(initrd string) (err error) {
	if l.ns, err = netns.New(); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("create network namespace: %w (needs root)", err)
		}
		return fmt.Errorf("create network namespace: %w", err)
	}
	for _, c := range []string{"default", "all"} {
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+c+"/disable_ipv6", []byte("1"), 0o644)
	}
	if l.taps, err = makeTap(l.Tap, l.cfg.Queues); err != nil {
		return err
	}
	link, err := netlink.LinkByName(l.Tap)
	if err != nil {
		return fmt.Errorf("find tap %s: %w", l.Tap, err)
	}
	l.TapIndex = link.Attrs().Index
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("set tap %s up: %w", l.Tap, err)
	}
	l.qemu = exec.Command(QEMU, l.qemuArgs(initrd)...)
	l.qemu.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	l.qemu.ExtraFiles = l.taps
	l.qemu.Stdout = l.console
	l.qemu.Stderr = l.console
	if l.stdin, err = l.qemu.StdinPipe(); err != nil {
		return err
	}
	l.console.onLine = l.line
	l.started = time.Now()
	if err := l.qemu.Start(); err != nil {
		return fmt.Errorf("start %s: %w", QEMU, err)
	}
	return nil
}

// qemuArgs is QEMU's command line. ctrl_vlan=off: with the VLAN filter
// feature the device drops every tagged frame whose VLAN the guest has not
// registered, before the guest sees it and without a counter.
//
// EnvQEMUTrace, when set, names QEMU trace events (a comma-separated list of
// patterns, as -trace enable= takes them, e.g. virtio_queue_notify,virtqueue_pop)
// that QEMU logs to qemu-trace.log in the lab's directory: for a look
// inside the device (keep the directory with XDPHASH_LAB_KEEP=1).
func (l *Lab) qemuArgs(initrd string) []string {
	c := l.cfg
	// The tap's queues are the lab's files, QEMU's descriptors 3 and on
	// (exec.Cmd.ExtraFiles): the lab keeps them to steer the tap.
	var fds []string
	for i := range l.taps {
		fds = append(fds, strconv.Itoa(3+i))
	}
	var trace []string
	if events := os.Getenv(EnvQEMUTrace); events != "" {
		for ev := range strings.SplitSeq(events, ",") {
			trace = append(trace, "-trace", "enable="+ev)
		}
		trace = append(trace, "-D", filepath.Join(l.Dir, "qemu-trace.log"))
	}
	return append(trace,
		"-accel", "tcg,thread=multi", "-cpu", "max",
		"-smp", strconv.Itoa(c.CPUs), "-m", strconv.Itoa(c.MemoryMB),
		"-kernel", c.Kernel.Vmlinuz, "-initrd", initrd,
		// no_timer_check: under TCG on a loaded host the boot's IO-APIC
		// timer check can miss its ticks and panic ("IO-APIC + timer
		// doesn't work"); the guest's timer works, it is only late.
		"-append", "console=ttyS0 panic=-1 loglevel=4 no_timer_check",
		"-display", "none", "-no-reboot", "-nodefaults",
		"-chardev", "stdio,id=con,signal=off", "-serial", "chardev:con",
		"-serial", "file:"+filepath.Join(l.Dir, "results"),
		"-netdev", "tap,id=n0,vhost=off,fds="+strings.Join(fds, ":"),
		"-device", fmt.Sprintf("virtio-net-pci,netdev=n0,mq=on,vectors=%d,rss=on,hash=on,ctrl_vlan=off,rx_queue_size=1024,mac=%s", 2*c.Queues+2, GuestMAC),
	)
}

// EnvQEMUTrace names the QEMU trace events a lab logs (Lab.qemuArgs).
const EnvQEMUTrace = "XDPHASH_LAB_QEMU_TRACE"

// makeTap creates a persistent multi-queue tap in the calling thread's
// namespace and opens its queues, for QEMU: the tap goes with the
// namespace.
func makeTap(name string, queues int) (_ []*os.File, err error) {
	var files []*os.File
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	for i := range queues {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("create tap %s: %w", name, err)
		}
		files = append(files, os.NewFile(uintptr(fd), fmt.Sprintf("%s queue %d", name, i)))
		var ifr struct {
			name  [unix.IFNAMSIZ]byte
			flags uint16
			_     [22]byte
		}
		copy(ifr.name[:], name)
		ifr.flags = unix.IFF_TAP | unix.IFF_NO_PI | unix.IFF_MULTI_QUEUE | unix.IFF_VNET_HDR
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
			return nil, fmt.Errorf("create tap %s: TUNSETIFF (queue %d): %w", name, i, errno)
		}
		if i == 0 {
			if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETPERSIST, 1); errno != 0 {
				return nil, fmt.Errorf("create tap %s: TUNSETPERSIST: %w", name, errno)
			}
		}
	}
	return files, nil
}

// line sees every console line.
func (l *Lab) line(s string) {
	if strings.Contains(s, "virtiolab: /init of") && l.bootTime.Load() == 0 {
		l.bootTime.Store(int64(time.Since(l.started)))
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(s), guest.RSSMarker); ok {
		var st guest.RSSState
		if json.Unmarshal([]byte(rest), &st) == nil {
			l.rss.Store(&st)
		}
	}
	if strings.HasPrefix(strings.TrimSpace(s), guest.ReadyMarker) {
		l.readyOnce.Do(func() { close(l.ready) })
	}
}

// watchTimeout kills a guest that outlives Config.Timeout.
func (l *Lab) watchTimeout() {
	t := time.NewTimer(l.cfg.Timeout - time.Since(l.started))
	defer t.Stop()
	select {
	case <-l.exited:
	case <-t.C:
		l.killed.Store(true)
		l.kill()
	}
}

func (l *Lab) kill() {
	if l.qemu != nil && l.qemu.Process != nil {
		_ = l.qemu.Process.Kill()
	}
}

// InNS runs fn on an OS thread in the lab's namespace, where the tap is
// (pktgen.Config.Enter). The thread ends with fn.
func (l *Lab) InNS(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := netns.Set(l.ns); err != nil {
			errc <- fmt.Errorf("enter the virtio lab's namespace: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// QEMUPid is QEMU's process id.
func (l *Lab) QEMUPid() int { return l.qemu.Process.Pid }

// BootTime is how long the guest took from QEMU's start to its /init's
// first line; 0 before that.
func (l *Lab) BootTime() time.Duration { return time.Duration(l.bootTime.Load()) }

// WaitReady waits until the guest's receiving step is ready for traffic. It
// fails, with the tail of the console, when the guest ends first or the
// lab's timeout passes.
func (l *Lab) WaitReady() error {
	select {
	case <-l.ready:
		return nil
	case <-l.exited:
		if tail := l.console.tail(); strings.Contains(tail, "Kernel panic") {
			return fmt.Errorf("virtio lab: %w before the guest was ready; console (%s) ends:\n%s",
				ErrGuestPanicked, filepath.Join(l.Dir, "console.log"), tail)
		}
		return l.guestError("the guest ended before it was ready")
	}
}

// ErrGuestPanicked is WaitReady's error when the guest's kernel panicked
// before the receiving step was ready: under TCG on a loaded host the
// emulation now and then faults in the guest's own boot (a timer check, a
// code patch in flight), before xdphash runs in it. A caller may boot once
// more; the console's tail is in the error.
var ErrGuestPanicked = errors.New("the guest kernel panicked")

// Stop tells the guest's receiving step that the traffic is over: frames
// is how many the host put into the tap, which the guest waits to see on
// its interface before it stops the step.
func (l *Lab) Stop(frames uint64) error {
	if _, err := fmt.Fprintf(l.stdin, "%s %d\n", guest.StopCommand, frames); err != nil {
		return fmt.Errorf("virtio lab: tell the guest to stop: %w", err)
	}
	return nil
}

// Result is what the guest sent back.
type Result struct {
	Report guest.Report
	Files  map[string][]byte // by the path the guest had them at
}

// maxResults bounds what the lab reads of the guest's results.
const maxResults = 64 << 20

// Wait waits for the guest to power off (within the lab's timeout) and reads
// its results.
func (l *Lab) Wait() (*Result, error) {
	<-l.exited
	if l.killed.Load() {
		return nil, l.guestError(fmt.Sprintf("the guest ran longer than %v and was killed", l.cfg.Timeout))
	}
	b, err := os.ReadFile(filepath.Join(l.Dir, "results"))
	if err != nil || len(b) == 0 {
		return nil, l.guestError(fmt.Sprintf("the guest sent no results (%v, QEMU: %v)", err, l.exitErr))
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, l.guestError(fmt.Sprintf("read the guest's results: %v", err))
	}
	entries, err := cpio.Read(io.LimitReader(gz, maxResults), maxResults)
	if err != nil {
		return nil, l.guestError(fmt.Sprintf("read the guest's results: %v", err))
	}
	r := &Result{Files: map[string][]byte{}}
	for _, e := range entries {
		if e.Name == guest.ReportName {
			if err := json.Unmarshal(e.Data, &r.Report); err != nil {
				return nil, fmt.Errorf("virtio lab: read the guest's report: %w", err)
			}
			continue
		}
		r.Files["/"+e.Name] = e.Data
	}
	if r.Report.Error != "" {
		return r, l.guestError("the guest failed: " + r.Report.Error)
	}
	return r, nil
}

// ConsoleTail is the last lines of the guest's console.
func (l *Lab) ConsoleTail() string { return l.console.tail() }

func (l *Lab) guestError(what string) error {
	return fmt.Errorf("virtio lab: %s; console (%s) ends:\n%s", what, filepath.Join(l.Dir, "console.log"), l.console.tail())
}

// Close kills QEMU if it still runs, and removes the namespace (with its
// tap) and the lab's directory. It is safe to call more than once.
func (l *Lab) Close() error {
	l.closeOnce.Do(func() {
		l.kill()
		if l.qemu != nil {
			<-l.exited
		}
		l.steerMu.Lock()
		if l.steer != nil {
			if err := l.steer.Close(); err != nil {
				l.closeErr = fmt.Errorf("virtio lab: %w", err)
			}
			l.steer = nil
		}
		l.steerMu.Unlock()
		for _, f := range l.taps {
			f.Close()
		}
		if l.ns.IsOpen() {
			l.ns.Close()
		}
		if l.console != nil {
			l.console.close()
		}
		if l.Dir != "" && os.Getenv("XDPHASH_LAB_KEEP") == "" {
			l.closeErr = errors.Join(l.closeErr, os.RemoveAll(l.Dir))
		}
	})
	return l.closeErr
}

// Sweep removes the directories of labs whose process is gone (SIGKILL
// leaves them; the namespace, tap and QEMU go with the process).
func Sweep() {
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), Prefix)
		if !ok || !e.IsDir() {
			continue
		}
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end <= 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", rest[:end])); errors.Is(err, os.ErrNotExist) {
			os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

// tailLog writes the console to a file (and to an optional writer), calls
// onLine for each line and keeps the last lines.
type tailLog struct {
	mu     sync.Mutex
	f      *os.File
	also   io.Writer
	part   []byte
	lines  []string
	onLine func(string)
}

const tailLines = 40

func newTailLog(path string, also io.Writer) (*tailLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &tailLog{f: f, also: also}, nil
}

func (t *tailLog) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil {
		t.f.Write(p)
	}
	if t.also != nil {
		t.also.Write(p)
	}
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		s := strings.TrimRight(string(t.part[:i]), "\r")
		t.part = t.part[i+1:]
		if t.lines = append(t.lines, s); len(t.lines) > tailLines {
			t.lines = t.lines[1:]
		}
		if t.onLine != nil {
			t.onLine(s)
		}
	}
	if len(t.part) > 4096 {
		t.part = t.part[:0]
	}
	return len(p), nil
}

func (t *tailLog) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(append(t.lines, string(t.part)), "\n")
}

func (t *tailLog) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}
