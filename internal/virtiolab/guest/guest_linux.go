package guest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/virtiolab/cpio"
)

// IsInit tells whether this process is the lab guest's /init: process 1,
// started as InitPath, with the lab's Config in its root file system.
func IsInit() bool {
	if os.Getpid() != 1 || len(os.Args) == 0 || os.Args[0] != InitPath {
		return false
	}
	_, err := os.Stat(ConfigPath)
	return err == nil
}

// Main is the guest's /init. It never returns: it powers the guest off,
// after sending the results whatever happened.
func Main() {
	var r Report
	files := map[string][]byte{}
	if err := run(&r, files); err != nil {
		r.Error = err.Error()
		fmt.Fprintf(os.Stderr, "virtiolab: %v\n", err)
	}
	if err := sendResults(&r, files); err != nil {
		fmt.Fprintf(os.Stderr, "virtiolab: send results: %v\n", err)
	}
	fmt.Fprintln(os.Stderr, "virtiolab: power off")
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {}
}

func run(r *Report, files map[string][]byte) error {
	r.InitUptime = uptime()
	if err := mountAll(); err != nil {
		return err
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		r.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	fmt.Fprintf(os.Stderr, "virtiolab: /init of %s at %v\n", r.Kernel, r.InitUptime)
	b, err := os.ReadFile(ConfigPath)
	if err != nil {
		return fmt.Errorf("read the lab's config: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("read the lab's config %s: %w", ConfigPath, err)
	}
	// The guest's own IPv6 (router solicitations) would only add frames.
	for _, c := range []string{"default", "all"} {
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+c+"/disable_ipv6", []byte("1"), 0o644)
	}
	for _, m := range cfg.Modules {
		if err := loadModule(m); err != nil {
			return err
		}
	}
	if err := setupIface(&cfg, &r.Iface); err != nil {
		return err
	}
	r.IfaceUp = uptime()
	fmt.Fprintf(os.Stderr, "virtiolab: %s up at %v: %d of %d queues, rxhash %v\n", cfg.Iface, r.IfaceUp, r.Iface.Combined, r.Iface.MaxCombined, r.Iface.RXHash)
	r.Iface.Before = ifaceStats(cfg.Iface)
	r.Iface.DriverBefore, _ = kernel.DriverStats(cfg.Iface)
	stop := readStops()
	for i, s := range cfg.Steps {
		sr := runStep(i, s, &cfg, &r.Iface, stop)
		r.Steps = append(r.Steps, sr)
		for _, f := range s.Files {
			if b, err := os.ReadFile(f); err == nil {
				files[f] = b
			}
		}
	}
	r.Iface.After = ifaceStats(cfg.Iface)
	r.Iface.DriverAfter, _ = kernel.DriverStats(cfg.Iface)
	return nil
}

func mountAll() error {
	for _, m := range []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"}, {"sys", "/sys", "sysfs"}, {"dev", "/dev", "devtmpfs"},
		{"bpf", "/sys/fs/bpf", "bpf"}, {"tmp", "/tmp", "tmpfs"}, {"run", "/run", "tmpfs"},
	} {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return fmt.Errorf("make %s: %w", m.dir, err)
		}
		if err := unix.Mount(m.src, m.dir, m.fstype, 0, ""); err != nil && !errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.dir, err)
		}
	}
	return nil
}

// moduleInitCompressedFile is MODULE_INIT_COMPRESSED_FILE (Linux 5.17):
// the kernel decompresses the module itself.
const moduleInitCompressedFile = 4

func loadModule(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("load module: %w", err)
	}
	defer f.Close()
	flags := 0
	if strings.HasSuffix(path, ".xz") || strings.HasSuffix(path, ".zst") || strings.HasSuffix(path, ".gz") {
		flags = moduleInitCompressedFile
	}
	if err := unix.FinitModule(int(f.Fd()), "", flags); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("load module %s: %w", filepath.Base(path), err)
	}
	return nil
}

func setupIface(cfg *Config, info *Iface) error {
	info.Name = cfg.Iface
	var link netlink.Link
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if link, err = netlink.LinkByName(cfg.Iface); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("find %s: %w", cfg.Iface, err)
	}
	if cfg.Queues > 0 {
		n, err := kernel.SetCombinedChannels(cfg.Iface, cfg.Queues)
		info.MaxCombined = n
		if err != nil {
			return err
		}
		info.Combined = cfg.Queues
	}
	if cfg.RXHash {
		if err := kernel.SetRXHash(cfg.Iface, true); err != nil {
			return err
		}
	}
	if info.RXHash, err = kernel.RXHash(cfg.Iface); err != nil {
		return err
	}
	if err := setRSS(cfg, info); err != nil {
		return err
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up: %w", cfg.Iface, err)
	}
	// The loopback carries a step's metrics (Step.Metrics).
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		err = netlink.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}

// setRSS gives the device cfg.RSS, and reads back the hash fields of TCP
// and UDP over IPv4 and IPv6.
func setRSS(cfg *Config, info *Iface) error {
	if r := cfg.RSS; r != nil {
		if r.Key != nil || r.Table != nil {
			// A nil key or table: the device keeps its own.
			if err := kernel.WriteRSS(cfg.Iface, r.Key, r.Table); err != nil {
				return fmt.Errorf("set the RSS key and table of %s: %w", cfg.Iface, err)
			}
		}
		for _, f := range r.Fields {
			answer := ""
			if err := kernel.WriteRSSHashFields(cfg.Iface, kernel.RSSFlowType(f.Flow), kernel.RXHashFields(f.Fields)); err != nil {
				answer = err.Error()
			}
			info.FieldsSet = append(info.FieldsSet, answer)
		}
	}
	info.HashFields = map[string]uint64{}
	for _, flow := range []kernel.RSSFlowType{kernel.TCPv4Flow, kernel.UDPv4Flow, kernel.TCPv6Flow, kernel.UDPv6Flow} {
		if f, err := kernel.ReadRSSHashFields(cfg.Iface, flow); err == nil {
			info.HashFields[flow.String()] = uint64(f)
		}
	}
	return nil
}

// resetRSS sets the device's RSS key and table again to what they are:
// QEMU 7.2 turns RSS and hash reports off when XDP is attached after a
// table was set, and setting them again turns both back on.
func resetRSS(iface string, info *Iface) error {
	c, err := kernel.ReadRSS(iface)
	if err != nil {
		return err
	}
	if err := kernel.WriteRSS(iface, c.Key, c.Indirection); err != nil {
		return err
	}
	info.RSSKey, info.RSSTable = hex.EncodeToString(c.Key), c.Indirection
	return nil
}

// rssState is the device's RSS configuration as JSON (RSSState).
func rssState(iface string) ([]byte, error) {
	c, err := kernel.ReadRSS(iface)
	if err != nil {
		return nil, err
	}
	st := RSSState{Key: hex.EncodeToString(c.Key), Table: c.Indirection, Fields: map[string]uint64{}}
	for _, flow := range []kernel.RSSFlowType{kernel.TCPv4Flow, kernel.UDPv4Flow, kernel.TCPv6Flow, kernel.UDPv6Flow} {
		f, err := kernel.ReadRSSHashFields(iface, flow)
		if err != nil {
			return nil, err
		}
		st.Fields[flow.String()] = uint64(f)
	}
	return json.Marshal(st)
}

// readStops delivers, for every StopCommand line on the console, the
// frames it says the host sent.
func readStops() <-chan uint64 {
	c := make(chan uint64, 8)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == StopCommand {
				if n, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					c <- n
				}
			}
		}
	}()
	return c
}

func runStep(i int, s Step, cfg *Config, info *Iface, stop <-chan uint64) StepReport {
	sr := StepReport{Args: s.Args, Exit: -1}
	if len(s.Args) == 0 {
		sr.Error = "no command"
		return sr
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	var stdout bytes.Buffer
	cmd := exec.Command(s.Args[0], s.Args[1:]...)
	cmd.Stdout = &limitedBuffer{b: &stdout, max: 1 << 20}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		sr.Error = err.Error()
		return sr
	}
	// The asked-for stop: SIGINT, or with StopOnEOF the end of the step's
	// input.
	askStop := func() { _ = cmd.Process.Signal(syscall.SIGINT) }
	if s.StopOnEOF {
		stdin, err := cmd.StdinPipe()
		if err != nil {
			sr.Error = err.Error()
			return sr
		}
		defer stdin.Close()
		askStop = func() { _ = stdin.Close() }
	}
	fmt.Fprintf(os.Stderr, "virtiolab: step %d: %s\n", i, strings.Join(s.Args, " "))
	if err := cmd.Start(); err != nil {
		sr.Error = err.Error()
		return sr
	}
	ready := make(chan struct{})
	lines := make(chan []string, 1)
	go func() {
		var tail []string
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			l := sc.Text()
			fmt.Fprintf(os.Stderr, "step %d: %s\n", i, l)
			if tail = append(tail, l); len(tail) > 40 {
				tail = tail[1:]
			}
			if !seen && s.Ready != "" && strings.Contains(l, s.Ready) {
				seen = true
				close(ready)
			}
		}
		lines <- tail
	}()
	exited := make(chan error, 1)
	go func() {
		tail := <-lines
		err := cmd.Wait()
		lines <- tail
		exited <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	done := false
	if s.Ready != "" {
		select {
		case <-ready:
			sr.Ready = uptime()
			if s.ResetRSS {
				if err := resetRSS(cfg.Iface, info); err != nil {
					sr.Error = fmt.Sprintf("re-set RSS: %v", err)
				}
			}
			endWatch := watchMemory(s.Metrics, &sr)
			if st, err := rssState(cfg.Iface); err == nil {
				fmt.Fprintf(os.Stderr, "%s%s\n", RSSMarker, st)
			} else {
				fmt.Fprintf(os.Stderr, "virtiolab: read the RSS configuration of %s: %v\n", cfg.Iface, err)
			}
			fmt.Fprintf(os.Stderr, "%s %d\n", ReadyMarker, i)
			select {
			case n := <-stop:
				waitFrames(cfg.Iface, info.Before["rx_packets"]+n)
				waitQuiet(cfg.Iface)
				endWatch()
				askStop()
			case waitErr = <-exited:
				endWatch()
				done = true
			case <-timer.C:
				endWatch()
				sr.Error = "timed out waiting for the host's stop"
				_ = cmd.Process.Signal(syscall.SIGINT)
			}
		case waitErr = <-exited:
			done = true
			sr.Error = "ended before it was ready"
		case <-timer.C:
			sr.Error = "timed out before it was ready"
			_ = cmd.Process.Signal(syscall.SIGINT)
		}
	}
	if !done {
		select {
		case waitErr = <-exited:
		case <-timer.C:
			_ = cmd.Process.Kill()
			waitErr = <-exited
			if sr.Error == "" {
				sr.Error = "timed out"
			}
		}
	}
	sr.Stderr = strings.Join(<-lines, "\n")
	sr.Stdout = stdout.String()
	sr.Received = ifaceStats(cfg.Iface)["rx_packets"]
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		sr.Exit = 0
	case errors.As(waitErr, &ee):
		sr.Exit = ee.ExitCode()
	default:
		sr.Error = waitErr.Error()
	}
	fmt.Fprintf(os.Stderr, "virtiolab: step %d exit %d\n", i, sr.Exit)
	return sr
}

// watchMemory reads the step's memory from its metrics at url once a
// second into sr.Memory, until the returned function is called (which
// waits for the last read to end). With no url it does nothing.
func watchMemory(url string, sr *StepReport) (end func()) {
	if url == "" {
		return func() {}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		client := &http.Client{Timeout: 2 * time.Second}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			m, err := readMemory(client, url)
			if err != nil {
				if sr.MemoryErrors++; sr.MemoryError == "" {
					sr.MemoryError = err.Error()
				}
				continue
			}
			sr.Memory = append(sr.Memory, m)
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// readMemory reads the Go runtime's memory figures and goroutine count
// from the Prometheus metrics at url.
func readMemory(client *http.Client, url string) (MemSample, error) {
	m := MemSample{Uptime: uptime()}
	resp, err := client.Get(url)
	if err != nil {
		return m, fmt.Errorf("read metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("read metrics %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return m, fmt.Errorf("read metrics %s: %w", url, err)
	}
	value := func(name string) (float64, error) {
		f := families[name]
		if f == nil || len(f.GetMetric()) != 1 {
			return 0, fmt.Errorf("read metrics %s: no single %s", url, name)
		}
		mt := f.GetMetric()[0]
		if g := mt.GetGauge(); g != nil {
			return g.GetValue(), nil
		}
		return mt.GetUntyped().GetValue(), nil
	}
	var heap, sys, goroutines float64
	if heap, err = value("go_memstats_heap_inuse_bytes"); err == nil {
		if sys, err = value("go_memstats_sys_bytes"); err == nil {
			goroutines, err = value("go_goroutines")
		}
	}
	m.HeapInuse, m.Sys, m.Goroutines = uint64(heap), uint64(sys), int(goroutines)
	return m, err
}

// waitFrames waits, for two minutes at most, until the interface has
// received n frames since boot: under an emulator starved of CPU the frames
// the host sent can take that long to come through.
func waitFrames(iface string, n uint64) {
	for deadline := time.Now().Add(2 * time.Minute); ifaceStats(iface)["rx_packets"] < n && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
}

// waitQuiet waits, for a minute at most, until the interface has received
// nothing for a second: the frames the host sent have all arrived.
func waitQuiet(iface string) {
	last, still := ifaceStats(iface)["rx_packets"], 0
	for deadline := time.Now().Add(time.Minute); still < 4 && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		n := ifaceStats(iface)["rx_packets"]
		if n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
}

// ifaceStats reads /sys/class/net/IF/statistics.
func ifaceStats(iface string) map[string]uint64 {
	dir := filepath.Join("/sys/class/net", iface, "statistics")
	out := map[string]uint64{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			out[e.Name()] = v
		}
	}
	return out
}

func uptime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// sendResults writes the report and files, as a gzipped cpio archive, to
// ResultsPort in raw mode, and waits until the port has sent it all.
func sendResults(r *Report, files map[string][]byte) error {
	f, err := os.OpenFile(ResultsPort, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("read the termios of %s: %w", ResultsPort, err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CBAUD
	t.Cflag |= unix.CS8 | unix.B115200
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return fmt.Errorf("set %s raw: %w", ResultsPort, err)
	}
	rep, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	w := cpio.NewWriter(gz)
	w.File(ReportName, 0o644, rep)
	for name, b := range files {
		w.File(strings.TrimPrefix(name, "/"), 0o644, b)
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return err
	}
	// tcdrain: wait until the UART sent everything.
	return unix.IoctlSetInt(fd, unix.TCSBRK, 1)
}
