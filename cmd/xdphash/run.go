package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/metrics"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

func init() { subcommands = append(subcommands, newRunCmd) }

// Choices of xdphash run's flags.
type (
	hashChoice      string // --hash
	steerChoice     string // --steer
	symmetricChoice string // --symmetric
)

// runOptions are the flags of xdphash run.
type runOptions struct {
	// The source: exactly one of iface, pcap, synthetic.
	iface, pcap, synthetic string
	metricsAddr            string // --metrics-addr: serve Prometheus metrics during the run
	queues                 string // --queues, AF_XDP
	virtualQueues          int
	replay                 string
	virtualClock           bool
	count                  uint64
	syntheticFlows         int
	batch                  int

	workers     int
	cpus        cpuListFlag
	kernelCPUs  cpuListFlag
	hash        hashChoice
	key         hashKeyFlag
	rssKey      string
	symmetric   symmetricChoice
	steer       steerChoice
	retaWeights string
	gates       gatesFlag

	duration    time.Duration
	ringSize    int
	flowLimit   int
	consumer    string
	consumerCfg queues.ConsumerConfig
	serviceRate string
	out         string
	window      time.Duration

	// AF_XDP.
	xdpMode     source.XDPMode
	zeroCopy    bool
	frames      int
	frameSize   int
	xdpRingSize int
	rxMode      source.RxMode
	xdpMetadata bool
	device      deviceOptions
	write       string // --write FILE.pcapng
	writeCount  int

	rebalance rebalanceOptions // --reta-size, --rebalance, --compare
}

// cpuListFlag is --cpus: CPU numbers and ranges, "0,2-3".
type cpuListFlag struct{ cpus []int }

func (f *cpuListFlag) Set(s string) error {
	cpus, err := source.ParseQueues(s)
	if err != nil || cpus == nil {
		return errors.New("want CPU numbers and ranges such as 0,2-3, each once")
	}
	f.cpus = cpus
	return nil
}

func (f *cpuListFlag) String() string {
	if f.cpus == nil {
		return ""
	}
	return source.FormatQueues(f.cpus)
}

func (f *cpuListFlag) Type() string { return "LIST" }

func newRunCmd(root *rootOptions) *cobra.Command {
	opts := runOptions{
		queues: "all", virtualQueues: 1, replay: "max", workers: 2,
		hash: "auto", symmetric: "none", steer: "rps", gates: gatesFlag{gates: dissect.AllGates},
		ringSize: pipeline.DefaultRingSize, consumer: "fifo", serviceRate: "max", window: pipeline.DefaultWindow,
		xdpMode: source.XDPNative, rxMode: source.RxAuto, xdpMetadata: true,
	}
	cmd := &cobra.Command{
		Use:   "run (--iface IF | --pcap FILE | --synthetic PROFILE)",
		Short: "Dissect, hash and steer packets to per-core workers, like RPS",
		Long: `Run takes packets off a source, dissects each one exactly as the kernel's flow
dissector does and hashes it (skb_get_hash, or a NIC's Toeplitz RSS hash with
--hash toeplitz) on the receive queue's loop, and steers a 64-byte record of it
to the worker the hash selects (--steer rps: get_rps_cpu's reciprocal_scale;
reta: an RSS indirection table). Each worker models one CPU: a bounded ring
per receive queue (--ring-size, netdev_max_backlog; a full ring drops, as the
kernel's backlog does, and --flow-limit adds the kernel's RPS flow limit),
pinned to a CPU with --cpus, feeding a queueing discipline (--consumer) that
it serves at --service-rate.

Sources (exactly one):
  --iface IF          AF_XDP sockets on the interface's receive queues (--queues)
  --pcap FILE         a pcap or pcapng file, replayed at --replay (max,
                      recorded, or a rate such as 500kpps), over
                      --virtual-queues queues spread by RSS as a NIC would
  --synthetic PROFILE frames of a traffic profile, as xdphash pktgen sends
                      them: a built-in (` + strings.Join(pktgen.BuiltinNames(), ", ") + `)
                      or a YAML file; --synthetic-flows overrides its flows,
                      --count frames

On an interface whose driver gives XDP RX metadata (veth, mlx5, ice, ...;
native mode), each frame comes with the device's hash, the VLAN tag the
device stripped, and its RX timestamp: the tag goes into the keys as the
kernel's dissector puts it there, and --hash auto (the default for --iface)
steers by the device's hash where it covers the ports, as skb_get_hash does,
else by the kernel's SipHash (--hash device: the device's always).
--check-device-hash compares every device hash with xdphash's own (exit
status 1 on a conflict); --write FILE.pcapng keeps the first frames with
their queue, device hash and what xdphash made of them.

--virtual-clock times a file or synthetic run by the frames' own stamps rather
than the wall clock: the run goes as fast as the machine allows and, with one
queue and no --flow-limit, gives the same report every time.

The run lasts --duration, until the source ends, or until SIGINT or SIGTERM. A
status line on stderr (when it is a terminal) shows the rates; at the end a
summary goes to stdout and the full statistics, as JSON, to --out. Every
frame is accounted for: received = processed + each counted drop.`,
		Example: `  xdphash run --synthetic datacenter --duration 5s --out run.json
  xdphash run --pcap trace.pcapng --virtual-queues 4 --workers 4 --consumer fq_codel --service-rate 1Gbit --virtual-clock
  sudo xdphash run --iface eth0 --queues 0-1 --workers 2 --cpus 2,3 --flow-limit 4096`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.check(cmd); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			return runRun(cmd, root.logger(cmd), &opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.iface, "iface", "", "receive on this interface with AF_XDP")
	f.StringVar(&opts.pcap, "pcap", "", "replay this pcap or pcapng file (- for stdin)")
	f.StringVar(&opts.synthetic, "synthetic", "", "send this traffic profile (a built-in name or a YAML file)")
	f.StringVar(&opts.queues, "queues", opts.queues, "AF_XDP: receive queues, a list such as 0,2-3, or all")
	f.IntVar(&opts.virtualQueues, "virtual-queues", opts.virtualQueues, "pcap, synthetic: receive queues to spread the frames over")
	f.StringVar(&opts.replay, "replay", opts.replay, "pcap, synthetic: pace: max, recorded (pcap) or a rate over all queues such as 500kpps")
	f.BoolVar(&opts.virtualClock, "virtual-clock", false, "pcap, synthetic: time the run by the frames' stamps, not the wall clock")
	f.Uint64Var(&opts.count, "count", 0, "synthetic: frames to send over all queues (0: until --duration or a signal)")
	f.IntVar(&opts.syntheticFlows, "synthetic-flows", 0, "synthetic: flows of the profile (default: the profile's)")
	f.IntVar(&opts.batch, "batch", pipeline.DefaultBatch, "frames taken off a receive queue at once")
	f.IntVar(&opts.workers, "workers", opts.workers, "workers (modelled CPUs)")
	f.Var(&opts.cpus, "cpus", "pin worker i to the i-th CPU of this list (default: not pinned)")
	f.Var(&opts.kernelCPUs, "kernel-cpus", "AF_XDP: the CPUs that run the queues' kernel receive work, which the pipeline keeps away from (default: the IRQ affinity of the device's queues; on a veth, the sender's CPUs, which no file names)")
	f.Var(newChoiceFlag(&opts.hash, "auto", "kernel", "toeplitz", "device"), "hash", "flow hash: auto (AF_XDP's default: the device's hash where it covers the ports, as skb_get_hash keeps it, else the kernel's), kernel (skb_get_hash's SipHash, the default elsewhere), toeplitz (a NIC's RSS hash) or device (the device's hash always)")
	f.Var(&opts.key, "hash-key", "kernel hash: SipHash key as 32 hex digits (default: a random key, logged)")
	f.StringVar(&opts.rssKey, "rss-key", "", "toeplitz hash: RSS key, 40 or 52 bytes in hex (default: the Microsoft key)")
	f.Var(newChoiceFlag(&opts.symmetric, "none", "xor", "sort"), "symmetric", "toeplitz hash: make it symmetric")
	f.Var(newChoiceFlag(&opts.steer, "rps", "reta"), "steer", "steering: RPS (hash high bits) or an RSS indirection table (low bits)")
	f.StringVar(&opts.retaWeights, "reta-weights", "", "reta steering: one weight per worker, such as 3,1 (default: equal)")
	opts.rebalance.addFlags(f)
	f.Var(&opts.gates, "gates", "fast-path gates: shapes (eth_ip,vlan,qinq,pppoe,mpls,ipip,gre), all, none or auto")
	f.DurationVar(&opts.duration, "duration", 0, "stop after this long (0: when the source ends, or on SIGINT/SIGTERM)")
	f.IntVar(&opts.ringSize, "ring-size", opts.ringSize, "netdev_max_backlog of each receive queue -> worker ring")
	f.IntVar(&opts.flowLimit, "flow-limit", 0, "RPS flow limit table length (flow_limit_table_len, e.g. 4096; 0: off)")
	f.StringVar(&opts.consumer, "consumer", opts.consumer, "queueing discipline behind each worker: "+strings.Join(queues.ConsumerNames, ", "))
	f.IntVar(&opts.consumerCfg.Limit, "limit", 0, "consumer limit in packets (default: the qdisc's)")
	f.IntVar(&opts.consumerCfg.Flows, "flows", 0, "fq_codel flows, or fq orphan_mask+1 (default 1024)")
	f.IntVar(&opts.consumerCfg.Quantum, "quantum", 0, "fq, fq_codel quantum in bytes (default: the qdisc's)")
	f.DurationVar(&opts.consumerCfg.Target, "target", 0, "fq_codel CoDel target (default 5ms)")
	f.DurationVar(&opts.consumerCfg.Interval, "interval", 0, "fq_codel CoDel interval (default 100ms)")
	f.BoolVar(&opts.consumerCfg.ECN, "ecn", false, "fq_codel: mark CE instead of dropping")
	f.StringVar(&opts.serviceRate, "service-rate", opts.serviceRate, "how fast each worker serves its consumer: max, or a rate such as 10Mbit, 1Gbit, 500kpps")
	f.StringVar(&opts.out, "out", "", "write the run statistics as JSON to this file")
	f.StringVar(&opts.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on this address during the run (off by default; :9100 means 127.0.0.1:9100)")
	f.DurationVar(&opts.window, "window", opts.window, "length of each time window of the statistics")
	f.Var(newChoiceFlag(&opts.xdpMode, source.XDPModes...), "xdp-mode", "AF_XDP: where the XDP program runs")
	f.BoolVar(&opts.zeroCopy, "zero-copy", false, "AF_XDP: bind in zero-copy mode (native mode, driver support)")
	f.IntVar(&opts.frames, "frames", 0, "AF_XDP: UMEM frames per queue (default 4096)")
	f.IntVar(&opts.frameSize, "frame-size", 0, "AF_XDP: bytes per UMEM frame, 2048 or 4096 (default 2048; 4096 for an MTU above 1500)")
	f.IntVar(&opts.xdpRingSize, "xdp-ring-size", 0, "AF_XDP: fill and RX ring entries (default 2048)")
	f.Var(newChoiceFlag(&opts.rxMode, source.RxModes...), "rx-mode", "AF_XDP: how a receive loop waits: spin, poll, or auto")
	opts.device.addFlags(f)
	f.StringVar(&opts.write, "write", "", "write the first frames, as received, to this pcapng file with each frame's queue, device hash and a comment with xdphash's hash, its source, worker, path and metadata VLAN tag")
	f.IntVar(&opts.writeCount, "write-count", defaultWriteCount, fmt.Sprintf("--write: frames to write, at most %d", maxWriteCount))
	f.BoolVar(&opts.xdpMetadata, "xdp-metadata", true, "AF_XDP: load the XDP metadata program (device hash, stripped VLAN tag, RX timestamp) where the device supports it")
	return cmd
}

// check validates the flag combinations.
func (o *runOptions) check(cmd *cobra.Command) error {
	n := 0
	for _, s := range []string{o.iface, o.pcap, o.synthetic} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("want exactly one source: --iface IF, --pcap FILE or --synthetic PROFILE (hint: --synthetic datacenter runs without a network)")
	}
	changed := cmd.Flags().Changed
	if err := o.device.check(o, changed); err != nil {
		return err
	}
	if changed("write-count") && o.write == "" || o.writeCount < 1 || o.writeCount > maxWriteCount {
		return fmt.Errorf("--write-count %d: want 1 to %d, with --write", o.writeCount, maxWriteCount)
	}
	switch {
	case o.iface != "" && (o.virtualClock || changed("virtual-queues") || changed("replay")):
		return errors.New("--virtual-clock, --virtual-queues and --replay are for --pcap and --synthetic")
	case o.iface == "" && (changed("queues") || changed("xdp-mode") || changed("zero-copy") || changed("frames") || changed("frame-size") || changed("xdp-ring-size") || changed("rx-mode") || changed("xdp-metadata") || changed("kernel-cpus")):
		return errors.New("--queues, --xdp-mode, --zero-copy, --frames, --frame-size, --xdp-ring-size, --rx-mode, --xdp-metadata and --kernel-cpus are for --iface")
	case o.synthetic == "" && (changed("count") || changed("synthetic-flows")):
		return errors.New("--count and --synthetic-flows are for --synthetic")
	case o.hash != "toeplitz" && (changed("rss-key") || changed("symmetric")) && o.pcap == "":
		return errors.New("--rss-key and --symmetric are for --hash toeplitz (or a --pcap spread over --virtual-queues)")
	case o.hash == "toeplitz" && o.key.set:
		return errors.New("--hash-key is for --hash kernel")
	case o.steer != "reta" && changed("reta-weights"):
		return errors.New("--reta-weights is for --steer reta")
	case o.workers < 1 || o.workers > pipeline.MaxWorkers:
		return fmt.Errorf("--workers %d: want 1 to %d", o.workers, pipeline.MaxWorkers)
	case o.virtualQueues < 1 || o.virtualQueues > pipeline.MaxLoops:
		return fmt.Errorf("--virtual-queues %d: want 1 to %d", o.virtualQueues, pipeline.MaxLoops)
	case o.ringSize < 1 || o.ringSize > pipeline.MaxRingSize:
		return fmt.Errorf("--ring-size %d: want 1 to %d", o.ringSize, pipeline.MaxRingSize)
	case o.batch < 1 || o.batch > pipeline.MaxBatch:
		return fmt.Errorf("--batch %d: want 1 to %d", o.batch, pipeline.MaxBatch)
	case o.flowLimit < 0 || o.flowLimit > queues.MaxFlowLimitTableLen:
		return fmt.Errorf("--flow-limit %d: want a table length up to %d (the kernel's default is %d), or 0 for none", o.flowLimit, queues.MaxFlowLimitTableLen, queues.DefaultFlowLimitTableLen)
	case o.window < pipeline.MinWindow:
		return fmt.Errorf("--window %s: want at least %s", o.window, pipeline.MinWindow)
	case o.duration < 0:
		return fmt.Errorf("--duration %s: want 0 or more", o.duration)
	case o.syntheticFlows < 0 || o.syntheticFlows > pktgen.MaxFlows:
		return fmt.Errorf("--synthetic-flows %d: want 1 to %d, or 0 for the profile's", o.syntheticFlows, pktgen.MaxFlows)
	}
	if err := checkConsumerFlags(o.consumer, changed); err != nil {
		return err
	}
	if err := o.rebalance.check(o, changed); err != nil {
		return err
	}
	if o.cpus.cpus != nil {
		if changed("workers") && len(o.cpus.cpus) != o.workers {
			return fmt.Errorf("--cpus lists %d CPUs for --workers %d: give one CPU per worker", len(o.cpus.cpus), o.workers)
		}
		o.workers = len(o.cpus.cpus)
	}
	return nil
}

// consumerFlags are the flags each consumer takes; the others would be
// ignored, so they are refused.
var consumerFlags = map[string][]string{
	"fifo":     {"limit"},
	"fq":       {"limit", "flows", "quantum"},
	"fq_codel": {"limit", "flows", "quantum", "target", "interval", "ecn"},
}

// checkConsumerFlags refuses a consumer flag that consumer does not take.
func checkConsumerFlags(consumer string, changed func(string) bool) error {
	takes, ok := consumerFlags[consumer]
	if !ok {
		return nil // New names the consumers in its error
	}
	for _, name := range []string{"limit", "flows", "quantum", "target", "interval", "ecn"} {
		if changed(name) && !slices.Contains(takes, name) {
			var for_ []string
			for _, c := range queues.ConsumerNames {
				if slices.Contains(consumerFlags[c], name) {
					for_ = append(for_, c)
				}
			}
			return fmt.Errorf("--%s is for --consumer %s, not %s", name, strings.Join(for_, " or "), consumer)
		}
	}
	return nil
}

// runSetup is what runRun builds from the flags before the source opens.
type runSetup struct {
	steer  hash.SteerConfig
	rate   queues.Rate
	replay source.Replay
}

func (o *runOptions) setup(log *slog.Logger) (*runSetup, error) {
	s := &runSetup{steer: hash.SteerConfig{Workers: o.workers}}
	var err error
	switch o.hash {
	case "toeplitz":
		s.steer.Hash = hash.KindToeplitz
	default:
		s.steer.Hash = map[hashChoice]hash.Kind{"auto": hash.KindAuto, "device": hash.KindDevice}[o.hash]
		s.steer.Key = o.key.key
		if !o.key.set {
			s.steer.Key = hash.RandomKey()
			log.Info("no --hash-key given, hashing with a random key", "hash_key", s.steer.Key.String())
		}
	}
	if o.rssKey == deviceRSSKey {
		if s.steer.RSSKey, err = readDeviceRSSKey(o.iface); err != nil {
			return nil, err
		}
	} else if o.rssKey != "" {
		if s.steer.RSSKey, err = hex.DecodeString(strings.ReplaceAll(o.rssKey, ":", "")); err != nil {
			return nil, fmt.Errorf("--rss-key: want hex bytes such as 6d5a56da...: %w", err)
		}
		if _, err := hash.NewToeplitz(s.steer.RSSKey); err != nil {
			return nil, fmt.Errorf("--rss-key: %w", err)
		}
	}
	s.steer.Symmetry = map[symmetricChoice]hash.Symmetry{"none": hash.SymmetricNone, "xor": hash.SymmetricXOR, "sort": hash.SymmetricSort}[o.symmetric]
	if o.steer == "reta" {
		s.steer.Steer = hash.SteerRETA
		if o.device.retaTable == "device" {
			if s.steer.RETATable, err = readDeviceRETA(o.iface); err != nil {
				return nil, err
			}
		}
		if o.retaWeights != "" {
			for w := range strings.SplitSeq(o.retaWeights, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(w))
				if err != nil {
					return nil, fmt.Errorf("--reta-weights %q: want whole numbers such as 3,1", o.retaWeights)
				}
				s.steer.RETAWeights = append(s.steer.RETAWeights, n)
			}
		}
	}
	if _, err = o.consumerCfg.New(o.consumer); err != nil {
		return nil, fmt.Errorf("--consumer %s: %w", o.consumer, err)
	}
	if s.rate, err = queues.ParseRate(o.serviceRate); err != nil {
		return nil, fmt.Errorf("--service-rate: %w", err)
	}
	switch o.replay {
	case "max":
	case "recorded":
		if o.pcap == "" {
			return nil, errors.New("--replay recorded is for --pcap")
		}
		s.replay.Mode = source.ReplayRecorded
	default:
		r, err := queues.ParseRate(o.replay)
		if err != nil || r.PacketsPerSec <= 0 {
			return nil, fmt.Errorf("--replay %q: want max, recorded or a packet rate such as 500kpps", o.replay)
		}
		s.replay = source.Replay{Mode: source.ReplayRate, PPS: r.PacketsPerSec}
	}
	if o.cpus.cpus != nil {
		allowed, err := kernel.AllowedCPUs()
		if err != nil {
			return nil, fmt.Errorf("--cpus: %w", err)
		}
		for _, c := range o.cpus.cpus {
			if !slices.Contains(allowed, c) {
				return nil, fmt.Errorf("--cpus: CPU %d is not one this process may run on (hint: it may use %s)", c, source.FormatQueues(allowed))
			}
		}
	}
	return s, nil
}

// openSource opens the source the flags name, after planning the CPUs for
// it (the plan picks AF_XDP's receive mode).
func (o *runOptions) openSource(s *runSetup, log *slog.Logger) (source.Source, pipeline.CPUPlan, error) {
	var clock source.Clock
	if !o.virtualClock {
		clock = source.WallClock()
	}
	in := pipeline.CPUInput{Loops: o.virtualQueues, Workers: o.workers, WorkerCPUs: o.cpus.cpus, RxMode: o.rxMode}
	switch {
	case o.synthetic != "":
		plan := pipeline.PlanCPUs(in)
		frames, name, err := o.syntheticFrames()
		if err != nil {
			return nil, plan, err
		}
		cfg := source.SyntheticConfig{
			Queues: o.virtualQueues, Batch: o.batch, Count: o.count, Replay: s.replay, Clock: clock, Name: name,
		}
		if o.virtualQueues > 1 {
			if cfg.Spread, err = hash.NewRSSSpread(s.steer.RSSKey, s.steer.Symmetry, o.virtualQueues, nil); err != nil {
				return nil, plan, err
			}
		}
		src, err := source.NewSynthetic(frames, cfg)
		if err != nil {
			return nil, plan, fmt.Errorf("--synthetic %s: %w", o.synthetic, err)
		}
		return src, plan, nil
	case o.pcap != "":
		plan := pipeline.PlanCPUs(in)
		cfg := source.PcapConfig{Queues: o.virtualQueues, Batch: o.batch, Replay: s.replay, Clock: clock}
		if o.virtualQueues > 1 {
			spread, err := hash.NewRSSSpread(s.steer.RSSKey, s.steer.Symmetry, o.virtualQueues, nil)
			if err != nil {
				return nil, plan, err
			}
			cfg.Spread = spread
		}
		src, err := source.OpenPcap(o.pcap, cfg)
		return src, plan, err
	}
	qs, err := source.ParseQueues(o.queues)
	if err != nil {
		return nil, pipeline.CPUPlan{}, fmt.Errorf("--queues: %w", err)
	}
	if qs == nil {
		n, err := source.InterfaceQueues(o.iface)
		if err != nil {
			return nil, pipeline.CPUPlan{}, fmt.Errorf("open AF_XDP on %s: %w", o.iface, err)
		}
		for q := range n {
			qs = append(qs, q)
		}
	}
	in.Loops, in.KernelFed = len(qs), true
	if in.Allowed, err = kernel.AllowedCPUs(); err != nil {
		log.Warn("no CPU placement", "err", err)
	}
	if o.kernelCPUs.cpus != nil {
		in.KernelCPUs = o.kernelCPUs.cpus
	} else {
		irqs, err := kernel.QueueIRQCPUs(o.iface, qs)
		if err != nil {
			log.Warn("no CPU placement", "err", err)
		}
		for _, cpus := range irqs {
			in.KernelCPUs = append(in.KernelCPUs, cpus...)
		}
	}
	plan := pipeline.PlanCPUs(in)
	src, err := source.OpenAFXDP(source.AFXDPConfig{
		Iface: o.iface, Queues: qs, Frames: o.frames, FrameSize: o.frameSize, RingSize: o.xdpRingSize, Batch: o.batch,
		ZeroCopy: o.zeroCopy, Mode: o.xdpMode, RxMode: plan.RxMode, NoMetadata: !o.xdpMetadata,
	})
	return src, plan, err
}

// queueSpread says what put the frames on their receive queues.
func (o *runOptions) queueSpread(queues int) string {
	switch {
	case o.iface != "":
		return "device"
	case queues > 1:
		return "rss"
	}
	return ""
}

// syntheticFrames is one cycle of the --synthetic profile's frames, with
// --synthetic-flows applied, and the profile's name.
func (o *runOptions) syntheticFrames() ([][]byte, string, error) {
	prof, err := pktgen.LoadProfile(o.synthetic)
	if err != nil {
		return nil, "", fmt.Errorf("--synthetic: %w", err)
	}
	if o.syntheticFlows != 0 {
		prof.Flows, prof.Cycle = o.syntheticFlows, 0
	}
	sched, err := pktgen.NewSchedule(prof, pktgen.MACs{Dst: syntheticDstMAC})
	if err != nil {
		return nil, "", fmt.Errorf("--synthetic: %w", err)
	}
	return sched.Frames(), prof.Name, nil
}

// syntheticDstMAC is the receiver of synthetic traffic: locally administered.
var syntheticDstMAC = net.HardwareAddr{0x02, 0x78, 0x64, 0x70, 0x00, 0x01}

func runRun(cmd *cobra.Command, log *slog.Logger, o *runOptions) (err error) {
	s, err := o.setup(log)
	if err != nil {
		return err
	}
	var out *pendingOutput
	if o.out != "" {
		if out, err = createOutput(o.out); err != nil {
			return err
		}
		defer out.Abort()
	}
	rw, err := o.prepareWrite()
	if err != nil {
		return err
	}
	defer rw.abort() // on the error paths
	src, plan, err := o.openSource(s, log)
	if err != nil {
		return err
	}
	name := src.Info().Name
	// Closing the source undoes its setup (XDP program, sockets, reader),
	// on every way out, signals included: they only cancel the context.
	defer func() {
		if cerr := src.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", name, cerr)
		}
	}()
	log.Info("cpu plan", "plan", plan.String())
	if plan.Procs > 0 && plan.Procs < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(plan.Procs)
	}
	if p := src.Info().XDPProgram; p != "" {
		log.Info("xdp program", "program", p)
	}
	warnNoMetadata(log, o, src.Info())
	explainDevice(log, o, src.Info())
	var queueTable []uint32
	if o.device.checkQueue {
		if queueTable, err = readDeviceQueueTable(o.iface); err != nil {
			return err
		}
	}
	var deviceFields *hash.NICFields
	if o.device.checkHash && s.steer.Hash == hash.KindToeplitz {
		deviceFields = readDeviceFields(log, o.iface)
	}

	ecfg := pipeline.EngineConfig{
		Source: src, Steering: s.steer,
		Flags: dissect.DefaultFlags, Gates: o.gates.gates, Auto: o.gates.auto,
		RingSize: o.ringSize, FlowLimit: o.flowLimit,
		Consumer: o.consumer, ConsumerConfig: o.consumerCfg, ServiceRate: s.rate,
		Virtual: o.virtualClock, Window: o.window, Batch: o.batch, Plan: &plan,
		QueueSpread:     o.queueSpread(len(src.Queues())),
		CheckDeviceHash: o.device.checkHash, CheckDeviceQueue: queueTable, DeviceFields: deviceFields, WithholdVLANTag: o.device.withholdTag, Capture: rw.engineCapture(),
	}
	o.rebalance.apply(&ecfg)
	engine, err := pipeline.NewEngine(ecfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	if o.metricsAddr != "" {
		addr, err := metrics.Serve(ctx, o.metricsAddr, engine.Stats)
		if err != nil {
			return err
		}
		log.Info("serving metrics", "url", "http://"+addr+"/metrics")
	}
	if err := rw.start(name); err != nil {
		return err
	}
	static, err := o.runStatic(ctx, s, ecfg, log)
	if err != nil {
		return err
	}
	stopStatus := startStatus(cmd.ErrOrStderr(), engine)
	log.Debug("run", "source", name, "queues", len(src.Queues()), "workers", o.workers, "consumer", o.consumer)
	stats, runErr := engine.Run(ctx)
	stopStatus()
	if stats == nil {
		return runErr
	}
	attachStatic(stats, static)
	writeRunSummary(cmd.OutOrStdout(), stats)
	writeDeviceSummary(cmd.OutOrStdout(), stats)
	if err := rw.finish(cmd.OutOrStdout()); err != nil {
		runErr = errors.Join(runErr, err)
	}
	writeSteeringSummary(cmd.OutOrStdout(), stats, o.iface)
	if out != nil {
		if err := writeRunStats(out, stats); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr == nil {
		runErr = deviceHashVerdict(stats)
	}
	return runErr
}

func writeRunStats(out *pendingOutput, stats *runstats.RunStats) error {
	b, err := json.MarshalIndent(stats, "", "  ")
	if err != nil {
		return fmt.Errorf("encode run statistics: %w", err)
	}
	if err := out.Commit(append(b, '\n')); err != nil {
		return fmt.Errorf("write run statistics: %w", err)
	}
	return nil
}

// startStatus prints a status line on w about once a second while the engine
// runs, when w is a terminal, and returns the function that stops it.
func startStatus(w io.Writer, e *pipeline.Engine) func() {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		prev, prevAt := e.Stats(), time.Now()
		var line []byte
		for {
			select {
			case <-done:
				fmt.Fprintln(f)
				return
			case now := <-tick.C:
				cur := e.Stats()
				line = appendStatus(line[:0], prev, cur, now.Sub(prevAt).Seconds())
				f.Write(line)
				prev, prevAt = cur, now
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// appendStatus appends the status line: per queue and per worker rates over
// the last interval, and the drops so far.
func appendStatus(b []byte, prev, cur *runstats.RunStats, secs float64) []byte {
	b = append(b, "\r\x1b[K"...)
	var kernelDrops uint64
	for i, q := range cur.Queues {
		b = fmt.Appendf(b, "q%d %.2f Mpps in  ", q.Queue, float64(q.Stats.Frames-prev.Queues[i].Stats.Frames)/secs/1e6)
		kernelDrops += q.Stats.KernelDrops()
	}
	b = append(b, "| "...)
	for i, w := range cur.Workers {
		b = fmt.Appendf(b, "w%d %.2f Mpps served  ", i, float64(w.Consumer.Dequeued-prev.Workers[i].Consumer.Dequeued)/secs/1e6)
	}
	return fmt.Appendf(b, "| drops %d after receive, %d kernel", cur.Accounting.Total(), kernelDrops)
}

// writeRunSummary prints the final tables: per queue, per worker, drops by
// reason, shapes, and the accounting.
func writeRunSummary(w io.Writer, st *runstats.RunStats) {
	c := st.Config
	secs := float64(st.DurationNs) / 1e9
	fmt.Fprintf(w, "xdphash run %s: %d queues, %d workers, hash %s, steer %s, consumer %s, service %s, %s clock, %.3fs\n",
		c.Source, len(st.Queues), len(st.Workers), c.Hash, c.Steer, c.Consumer, c.ServiceRate, c.Clock, secs)
	rate := func(n uint64) string {
		if secs <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(n)/secs/1e6, 'f', 3, 64)
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "queue\tframes\tbytes\tMpps\tkernel drops\tsteered to workers\t")
	for _, q := range st.Queues {
		steered := make([]string, len(q.Steered))
		for i, n := range q.Steered {
			steered[i] = strconv.FormatUint(n, 10)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%d\t%s\t\n", q.Queue, q.Stats.Frames, q.Stats.Bytes, rate(q.Stats.Frames), q.Stats.KernelDrops(), strings.Join(steered, " "))
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "worker\tcpu\ttaken\tserved\tMpps\tring full\tflow limit\tconsumer drops\tbacklog\t")
	for _, wr := range st.Workers {
		cpu := "-"
		if wr.CPU >= 0 {
			cpu = strconv.Itoa(wr.CPU)
		}
		var cdrops uint64
		for _, n := range wr.Consumer.Drops {
			cdrops += n
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t\n", wr.Worker, cpu, wr.Packets, wr.Consumer.Dequeued, rate(wr.Consumer.Dequeued),
			wr.Drops[runstats.DropRingFull], wr.Drops[runstats.DropFlowLimit], cdrops, wr.Consumer.Backlog)
	}
	tw.Flush()

	fmt.Fprintln(w)
	writeShapeCounters(w, &st.Shapes)

	a := st.Accounting
	fmt.Fprintln(w)
	dropped := a.Total()
	reasons := slices.Sorted(maps.Keys(a.Dropped))
	parts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		if a.Dropped[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, a.Dropped[r]))
		}
	}
	balanced := "balanced"
	if !a.Balanced {
		balanced = "NOT BALANCED"
	}
	fmt.Fprintf(w, "received %d = processed %d + dropped %d (%s)\n", a.Received, a.Processed, dropped, balanced)
	if len(parts) > 0 {
		fmt.Fprintf(w, "drops: %s\n", strings.Join(parts, ", "))
	}
	var kd uint64
	for _, n := range a.KernelDrops {
		kd += n
	}
	if kd > 0 {
		fmt.Fprintf(w, "kernel drops before the receive loops: %d\n", kd)
	}
}

// writeShapeCounters prints the dissector counters of all receive loops.
func writeShapeCounters(w io.Writer, c *dissect.Counters) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tfast\tdeclined\tslow\t")
	for s := range dissect.NumShapes {
		sc := c.Shape[s]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", s, sc.Fast, sc.Declined, sc.Slow)
	}
	fmt.Fprintf(tw, "other\t-\t-\t%d\t\n", c.Other)
	tw.Flush()
	if c.Flips > 0 {
		fmt.Fprintf(w, "auto mode: %d gate flips\n", c.Flips)
	}
}
