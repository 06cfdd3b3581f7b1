package pktgen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xdphash/xdphash/internal/kernel"
)

// The kernel's pktgen (net/core/pktgen.c) is driven by writing commands to
// files under /proc/net/pktgen of the sending namespace: one kpktgend_N file
// per CPU's kernel thread, one file per device a thread sends on, and pgctrl
// to start and stop them all (Documentation/networking/pktgen.rst and the
// kernel's samples/pktgen scripts). It crafts IPv4/UDP frames itself, so of
// a profile it can take the flows, the frame lengths and the addresses, not
// the shape mix.

// pktgenDir is the pktgen directory of the calling thread's namespace
// (/proc/net follows the process's first thread, thread-self this one).
const pktgenDir = "/proc/thread-self/net/pktgen"

// pktgenWrite is one command for one pktgen file.
type pktgenWrite struct {
	File string // relative to the pktgen directory
	Cmd  string
}

// pktgenScript is the commands that set up a run of s: for thread j on
// cpus[j], device iface@j with its share of the count (pktgen's count 0:
// until stopped; a thread whose share is zero gets no device),
// rate, frame lengths, MACs, and the profile's flows as a range of client
// addresses and ports, each flow four frames long before pktgen moves on.
func pktgenScript(s *Schedule, cfg Config, cpus []int, dst, src net.HardwareAddr) []pktgenWrite {
	p := s.Profile()
	quota, _ := split(cfg.Count, cfg.Threads, s.Len())
	var w []pktgenWrite
	for j := range cfg.Threads {
		thread := fmt.Sprintf("kpktgend_%d", cpus[j])
		dev := fmt.Sprintf("%s@%d", cfg.Iface, j)
		w = append(w, pktgenWrite{thread, "rem_device_all"})
		if quota[j] == 0 {
			continue
		}
		w = append(w, pktgenWrite{thread, "add_device " + dev})
		cmd := func(c string, args ...any) { w = append(w, pktgenWrite{dev, fmt.Sprintf(c, args...)}) }
		if quota[j] == unbounded {
			cmd("count 0")
		} else {
			cmd("count %d", quota[j])
		}
		cmd("clone_skb 0") // a fresh skb per frame, so that flows change
		cmd("burst 32")
		if cfg.Rate > 0 {
			cmd("ratep %d", max(1, uint64(cfg.Rate/float64(cfg.Threads))))
		} else {
			cmd("delay 0")
		}
		switch fs := p.FrameSizes; {
		case len(fs.Sizes) == 1:
			cmd("pkt_size %d", fs.Sizes[0].Len)
		case len(fs.Sizes) > 1:
			parts := make([]string, len(fs.Sizes))
			for i, sw := range fs.Sizes {
				parts[i] = fmt.Sprintf("%d,%d", sw.Len, max(1, int(sw.Weight)))
			}
			cmd("imix_weights %s", strings.Join(parts, " "))
		default:
			cmd("min_pkt_size %d", fs.Min)
			cmd("max_pkt_size %d", fs.Max)
		}
		cmd("dst_mac %s", dst)
		cmd("src_mac %s", src)
		clients := min(p.Flows, 1<<16)
		cmd("dst_min %s", serverV4(0))
		cmd("dst_max %s", serverV4(0))
		cmd("src_min %s", clientV4(0))
		cmd("src_max %s", clientV4(uint32(clients-1)))
		cmd("udp_src_min %d", 1024)
		cmd("udp_src_max %d", 1024+(p.Flows-1)/clients)
		cmd("udp_dst_min 443")
		cmd("udp_dst_max 443")
		cmd("flows %d", p.Flows)
		cmd("flowlen 4")
		cmd("flag QUEUE_MAP_CPU")
		cmd("flag NO_TIMESTAMP")
	}
	return w
}

// pktgenUnavailable says, once per process, why this machine has no kernel
// pktgen: the facts behind a missing /proc/net/pktgen.
var pktgenUnavailable = sync.OnceValue(func() string {
	var why []string
	if _, err := os.Stat("/proc/modules"); errors.Is(err, os.ErrNotExist) {
		why = append(why, "this kernel cannot load modules (/proc/modules is absent)")
	}
	if line := kernelConfig("CONFIG_NET_PKTGEN"); line != "" {
		why = append(why, fmt.Sprintf("/proc/config.gz says %q", line))
	}
	if _, err := exec.LookPath("modprobe"); err != nil {
		why = append(why, "there is no modprobe")
	}
	msg := fmt.Sprintf("%s does not exist, so the pktgen module is not loaded", "/proc/net/pktgen")
	if len(why) > 0 {
		msg += "; " + strings.Join(why, ", ")
	} else {
		msg += "; load it with modprobe pktgen"
	}
	return msg + " (kernel " + kernel.Release() + ")"
})

// kernelConfig returns the line of /proc/config.gz that sets or unsets
// option, or "" when it cannot tell.
func kernelConfig(option string) string {
	f, err := os.Open("/proc/config.gz")
	if err != nil {
		return ""
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, option+"=") || line == "# "+option+" is not set" {
			return line
		}
	}
	return ""
}

// runKernelPktgen runs the kernel's pktgen on cfg.Iface.
func runKernelPktgen(ctx context.Context, s *Schedule, cfg Config) (Report, error) {
	enter := cfg.enter()
	var dir string
	err := enter(func() error {
		real, err := filepath.EvalSymlinks(pktgenDir)
		if err != nil {
			return err
		}
		dir = real
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return Report{}, fmt.Errorf("run kernel pktgen: %w: %s: use mode xdp, afxdp or packet", ErrModeUnavailable, pktgenUnavailable())
	}
	if err != nil {
		return Report{}, fmt.Errorf("run kernel pktgen: %w", err)
	}
	cpus := cfg.CPUs
	if cpus == nil {
		if cpus, err = kernel.AllowedCPUs(); err != nil {
			return Report{}, fmt.Errorf("run kernel pktgen: %w", err)
		}
	}
	if cfg.Threads > len(cpus) {
		return Report{}, fmt.Errorf("run kernel pktgen: %d threads but %d CPUs", cfg.Threads, len(cpus))
	}
	dst, err := dstMAC(s)
	if err != nil {
		return Report{}, err
	}
	if err := writePktgen(dir, pktgenScript(s, cfg, cpus, dst, DefaultSrcMAC)); err != nil {
		return Report{}, fmt.Errorf("run kernel pktgen: %w", err)
	}
	// pgctrl's start returns when every device has sent its count or a stop
	// came; the stop is written from another goroutine.
	started := time.Now()
	done := make(chan error, 1)
	go func() { done <- os.WriteFile(filepath.Join(dir, "pgctrl"), []byte("start\n"), 0) }()
	var deadline <-chan time.Time
	if cfg.Duration > 0 {
		t := time.NewTimer(cfg.Duration)
		defer t.Stop()
		deadline = t.C
	}
	stop := func() { _ = os.WriteFile(filepath.Join(dir, "pgctrl"), []byte("stop\n"), 0) }
	select {
	case err = <-done:
	case <-deadline:
		stop()
		err = <-done
	case <-ctx.Done():
		stop()
		err = <-done
	}
	elapsed := time.Since(started)
	if err != nil {
		return Report{}, fmt.Errorf("run kernel pktgen: start: %w", err)
	}
	r := Report{Mode: ModeKernel, Profile: s.profile.Name, Iface: cfg.Iface, Elapsed: elapsed}
	quota, _ := split(cfg.Count, cfg.Threads, s.Len())
	for j := range cfg.Threads {
		if quota[j] == 0 {
			continue
		}
		res, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s@%d", cfg.Iface, j)))
		if err != nil {
			return Report{}, fmt.Errorf("run kernel pktgen: read result of thread %d: %w", j, err)
		}
		t := parsePktgenResult(res)
		t.Thread, t.CPU, t.Queue = j, cpus[j], -1
		r.Threads = append(r.Threads, t)
		r.Frames += t.Frames
		r.Bytes += t.Bytes
	}
	return r, nil
}

// dstMAC is the destination MAC of the schedule's frames.
func dstMAC(s *Schedule) (net.HardwareAddr, error) {
	if len(s.table.Lens) == 0 {
		return nil, errors.New("empty schedule")
	}
	return net.HardwareAddr(bytes.Clone(s.table.Heads[:6])), nil
}

// writePktgen writes each command with a write of its own and checks the
// file's verdict, which pktgen keeps in its "Result:" line.
func writePktgen(dir string, script []pktgenWrite) error {
	for _, w := range script {
		path := filepath.Join(dir, w.File)
		if err := os.WriteFile(path, []byte(w.Cmd+"\n"), 0); err != nil {
			return fmt.Errorf("write %q to %s: %w", w.Cmd, path, err)
		}
		if strings.HasPrefix(w.File, "kpktgend_") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if i := bytes.Index(b, []byte("Result: ")); i >= 0 {
			res := string(b[i+len("Result: "):])
			if !strings.HasPrefix(res, "OK") {
				return fmt.Errorf("write %q to %s: pktgen says %s", w.Cmd, path, strings.TrimSpace(res))
			}
		}
	}
	return nil
}

var (
	resultSent = regexp.MustCompile(`pkts-sofar: (\d+)`)
	resultTime = regexp.MustCompile(`Result: OK: (\d+)\(`)
	resultSize = regexp.MustCompile(`\((\d+)byte`)
)

// parsePktgenResult reads a device file's counters: frames sent, the run's
// time in microseconds and the frame length.
func parsePktgenResult(b []byte) ThreadReport {
	var t ThreadReport
	num := func(re *regexp.Regexp) uint64 {
		m := re.FindSubmatch(b)
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseUint(string(m[1]), 10, 64)
		return v
	}
	t.Frames = num(resultSent)
	t.Elapsed = time.Duration(num(resultTime)) * time.Microsecond
	t.Bytes = t.Frames * num(resultSize)
	return t
}
