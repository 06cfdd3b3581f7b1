package soak

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

// Where the guest's xdphash run writes its statistics and its first
// frames (the samples of the hash and steering checks), and where it serves
// its metrics (the memory check's).
const (
	guestRunJSON    = "/tmp/run.json"
	guestFrames     = "/tmp/frames.pcapng"
	guestMetrics    = "127.0.0.1:9464"
	guestMetricsURL = "http://" + guestMetrics + "/metrics"
)

// runVirtio is Run with Config.Lab virtio: the pipeline runs as `xdphash
// run` inside a virtio lab guest on its virtio-net device (native XDP, the
// device's Toeplitz hash, --check-device-hash and --check-device-queue),
// and the generator sends into the lab's tap from here.
func runVirtio(ctx context.Context, cfg Config) (_ *Result, err error) {
	if cfg.CheckDevice {
		return nil, fmt.Errorf("configure soak: %w: the virtio lab always checks the device hash (by equality with its Toeplitz key); --check-device is veth's check", ErrConfig)
	}
	if cfg.Mode != "" && cfg.Mode != pktgen.ModePacket {
		return nil, fmt.Errorf("configure soak: %w: the virtio lab's generator sends into a tap through AF_PACKET (mode packet), not %s", ErrConfig, cfg.Mode)
	}
	if cfg.Rate == 0 && !cfg.RateMax {
		cfg.Rate = DefaultVirtioRate
	}
	prof, err := pktgen.LoadProfile(cfg.Profile)
	if err != nil {
		return nil, err
	}
	sched, err := newSchedule(cfg, prof, pktgen.MACs{Dst: virtiolab.GuestMAC})
	if err != nil {
		return nil, err
	}
	log := cfg.Log
	k, err := virtiolab.FetchKernel(cfg.GuestKernel)
	if err != nil {
		return nil, err
	}
	log.Info("guest kernel", "package", k.Package)
	args := []string{guest.InitPath, "run", "--iface", "eth0", "--queues", "all", "--xdp-mode", "native",
		"--hash", "toeplitz", "--rss-key", "device", "--check-device-hash", "--check-device-queue",
		"--workers", strconv.Itoa(cfg.Workers), "--consumer", cfg.Consumer, "--ring-size", strconv.Itoa(cfg.RingSize),
		"--service-rate", cfg.ServiceRate.String(),
		"--out", guestRunJSON, "--write", guestFrames, "--write-count", strconv.Itoa(virtioSamples), "--metrics-addr", guestMetrics, "--stop-on-eof"}
	// The NIC model of the device-hash check copies the lab's QEMU.
	quirks, err := virtiolab.NICQuirks()
	if err != nil {
		return nil, err
	}
	if len(quirks) > 0 {
		args = append(args, "--rss-quirks", strings.Join(quirks, ","))
	}
	lab, err := virtiolab.New(virtiolab.Config{
		Kernel: k, Binary: cfg.GuestBinary, Queues: cfg.Queues, RXHash: true,
		Steps: []guest.Step{{Args: args, Ready: "xdp program", ResetRSS: true, StopOnEOF: true, Metrics: guestMetricsURL, Files: []string{guestRunJSON, guestFrames},
			Timeout: cfg.Duration + 4*time.Minute}},
		Timeout: cfg.Duration + 6*time.Minute,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := lab.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("remove virtio lab: %w", cerr)
		}
	}()
	log.Info("virtio lab", "dir", lab.Dir, "tap", lab.Tap, "queues", cfg.Queues)
	// A signal closes the lab, which ends every wait on the guest.
	stopWatch := context.AfterFunc(ctx, func() { lab.Close() })
	defer stopWatch()
	if err := lab.WaitReady(); err != nil {
		return nil, err
	}
	log.Info("guest ready", "boot_to_init", lab.BootTime().Round(time.Millisecond))
	before, err := tapCounters(lab)
	if err != nil {
		return nil, err
	}
	// Each frame enters QEMU on the tap queue of its RSS queue: QEMU 7.2's
	// software RSS stalls the guest when it has to move frames between
	// queues (docs/virtio-lab.md).
	mark, err := lab.SteerByRSS()
	if err != nil {
		return nil, err
	}
	log.Info("generator", "profile", prof.Name, "mode", pktgen.ModePacket, "rate", cfg.Rate, "duration", cfg.Duration)
	cpu := startCPU(lab.QEMUPid())
	gen, genErr := pktgen.Run(ctx, sched, pktgen.Config{
		Iface: lab.Tap, Enter: lab.InNS, Mode: pktgen.ModePacket, Threads: 1, Rate: cfg.Rate, Duration: cfg.Duration, Mark: mark,
	})
	if genErr != nil {
		return nil, genErr
	}
	for _, w := range gen.Warnings {
		log.Warn(w)
	}
	cpuUse := cpu.stop(gen)
	if err := lab.Stop(gen.Frames); err != nil {
		return nil, err
	}
	gr, err := lab.Wait()
	if err != nil {
		return nil, err
	}
	// The tap counts a frame out when QEMU reads it: after the guest is
	// gone, every frame QEMU will read has been. The tap outlives QEMU, in
	// the namespace the lab still holds.
	after, err := tapCounters(lab)
	if err != nil {
		return nil, err
	}
	res := &Result{Generator: gen, Lab: LabVirtio, Duration: cfg.Duration, Interrupted: ctx.Err() != nil, CPU: cpuUse}
	step := gr.Report.Steps[0]
	var st runstats.RunStats
	if b, ok := gr.Files[guestRunJSON]; ok {
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("soak: the guest's %s: %w", guestRunJSON, err)
		}
		res.Stats = &st
	}
	ifc := gr.Report.Iface
	res.Links = LinkDeltas{
		PeerTxPackets: after.TxPackets - before.TxPackets, PeerTxDropped: after.TxDropped - before.TxDropped,
		HostRxPackets: ifc.After["rx_packets"] - ifc.Before["rx_packets"], HostRxDropped: ifc.After["rx_dropped"] - ifc.Before["rx_dropped"],
	}
	guestCheck := Check{Name: "guest: xdphash run on the virtio-net device ended cleanly", Pass: step.Exit == 0 && step.Error == "" && res.Stats != nil,
		Detail: fmt.Sprintf("guest %s (%s): /init at %v of guest time, eth0 up at %v, %d of %d queues; xdphash run exit %d %s",
			gr.Report.Kernel, k.Package, gr.Report.InitUptime.Round(time.Millisecond), gr.Report.IfaceUp.Round(time.Millisecond),
			ifc.Combined, ifc.MaxCombined, step.Exit, step.Error)}
	if !guestCheck.Pass {
		guestCheck.Detail += "\n" + lastLines(step.Stderr, 10)
	}
	key, err := hex.DecodeString(ifc.RSSKey)
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("soak: the guest reported no RSS key (%q): %v", ifc.RSSKey, err)
	}
	hc, sc, sum := checkVirtioSamples(gr.Files[guestFrames], key, cfg.Workers)
	res.Samples = sum
	res.Memory = guestMemory(step.Memory)
	mc := checkMemory(res.Memory)
	if step.MemoryErrors > 0 {
		mc.Detail += fmt.Sprintf("; %d reads of the guest's metrics failed, the first: %s", step.MemoryErrors, step.MemoryError)
	}
	// A profile's frames are all IP, which the device hashes; a capture may
	// hold frames it does not (ARP, runts), which the checks leave out.
	everyFrame := cfg.Pcap == ""
	res.Checks = []Check{guestCheck, checkVirtioAccounting(gen.Frames, res.Links, res.Stats), hc, sc, mc,
		checkDeviceEquality(res.Stats, everyFrame), checkDeviceQueue(res.Stats, everyFrame)}
	return res, nil
}

// tapCounters reads the lab's tap counters inside its namespace.
func tapCounters(lab *virtiolab.Lab) (netlink.LinkStatistics, error) {
	var s netlink.LinkStatistics
	err := lab.InNS(func() error {
		link, err := netlink.LinkByName(lab.Tap)
		if err != nil {
			return fmt.Errorf("read the counters of %s: %w", lab.Tap, err)
		}
		s = *link.Attrs().Statistics
		return nil
	})
	return s, err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
