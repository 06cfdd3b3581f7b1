package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	"github.com/xdphash/xdphash/report"
	"github.com/xdphash/xdphash/runstats"
)

func init() { subcommands = append(subcommands, newRunCmd) }

// steerChoice is --steer.
type steerChoice string

// runOptions are the flags of xdphash run.
type runOptions struct {
	// The source: exactly one of iface, pcap, synthetic.
	iface, pcap, synthetic string
	metricsAddr            string // --metrics-addr: serve Prometheus metrics during the run
	queues                 string // --queues, AF_XDP
	virtualQueues          int
	replay                 string
	virtualClock           bool
	replayDrops            bool // --replay-drops
	count                  uint64
	syntheticFlows         int
	batch                  int

	workers     int
	cpus        cpuListFlag
	kernelCPUs  cpuListFlag
	hash        hash.Kind
	key         hashKeyFlag
	rssKey      string
	symmetric   hash.Symmetry
	steer       steerChoice
	retaWeights string
	gates       gatesFlag
	descent     descentFlags

	duration    time.Duration
	stopOnEOF   bool // --stop-on-eof
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
	writeWait   bool // --write-wait

	rebalance rebalanceOptions // --reta-size, --rebalance, --compare
	nic       nicOptions       // --nic, --rss-level
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
		hash: hash.KindAuto, symmetric: hash.SymmetricNone, steer: "rps", gates: gatesFlag{gates: dissect.AllGates},
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
status 1 on a conflict); --write FILE.pcapng keeps the first --write-count
frames with their queue, device hash and what xdphash made of them, and the
run's hash settings (key, kind, symmetry) in its section comment, with which
xdphash dissect and verify hash the file by default. A file's or synthetic
run's receive loops wait for the writer, so every frame asked for is
written; an AF_XDP run's buffer holds up to 16384 frames (64 MiB) and
--write-wait waits beyond that (the kernel drops meanwhile).

--virtual-clock times a file or synthetic run by the frames' own stamps rather
than the wall clock: the run goes as fast as the machine allows and, with one
queue and no --flow-limit, gives the same report every time.

A --pcap replay on the wall clock keeps its pace (--replay) while the
receive loops keep up; where they fall behind it waits for them and then
hands out what is overdue at once, as tcpreplay resends every packet of a
file however late: every frame of the file is received. --replay-drops
drops instead the frames that find a queue's ring of batches full, as a NIC
drops on a full RX ring, counted as the replay's ring_full drops (no kernel
is involved).

The run lasts --duration, until the source ends, until SIGINT or SIGTERM
(exit 130), or with --stop-on-eof until standard input ends (exit 0). A
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
	f.StringVar(&opts.replay, "replay", opts.replay, "pcap, synthetic: pace: max, recorded (pcap) or a packet rate over all queues such as 500k, 500kpps, 100000")
	f.BoolVar(&opts.virtualClock, "virtual-clock", false, "pcap, synthetic: time the run by the frames' stamps, not the wall clock")
	f.BoolVar(&opts.replayDrops, "replay-drops", false, "pcap: drop the frames a receive loop is too far behind to take, as a NIC drops on a full RX ring (counted as replay ring_full), rather than wait for it (default: the replay waits, loses nothing, and catches up)")
	f.Uint64Var(&opts.count, "count", 0, "synthetic: frames to send over all queues (0: until --duration or a signal)")
	f.IntVar(&opts.syntheticFlows, "synthetic-flows", 0, "synthetic: flows of the profile (default: the profile's)")
	f.IntVar(&opts.batch, "batch", pipeline.DefaultBatch, "frames taken off a receive queue at once")
	f.IntVar(&opts.workers, "workers", opts.workers, "workers (modelled CPUs)")
	f.Var(&opts.cpus, "cpus", "pin worker i to the i-th CPU of this list (default: not pinned)")
	f.Var(&opts.kernelCPUs, "kernel-cpus", "AF_XDP: the CPUs that run the queues' kernel receive work, which the pipeline keeps away from (default: the IRQ affinity of the device's queues; on a veth, the sender's CPUs, which no file names)")
	f.Var(newParsedFlag(&opts.hash, hash.ParseKind, hash.KindNames()), "hash", "flow hash: auto (AF_XDP's default: the device's hash where it covers the ports, as skb_get_hash keeps it, else the kernel's), kernel (skb_get_hash's SipHash, the default elsewhere), toeplitz (a NIC's RSS hash) or device (the device's hash always)")
	f.Var(&opts.key, "hash-key", "kernel hash: SipHash key as 32 hex digits (default: a random key, logged)")
	f.StringVar(&opts.rssKey, "rss-key", "", "toeplitz hash: RSS key, 40 or 52 bytes in hex (default: the Microsoft key)")
	f.Var(newParsedFlag(&opts.symmetric, hash.ParseSymmetry, hash.SymmetryNames()), "symmetric", "toeplitz hash: make it symmetric")
	f.Var(newChoiceFlag(&opts.steer, "rps", "reta"), "steer", "steering: RPS (hash high bits) or an RSS indirection table (low bits)")
	f.StringVar(&opts.retaWeights, "reta-weights", "", "reta steering: one weight per worker, such as 3,1 (default: equal)")
	opts.rebalance.addFlags(f)
	f.Var(&opts.gates, "gates", "fast-path gates: shapes (eth_ip,vlan,qinq,pppoe,mpls,ipip,gre; vxlan,gtpu under --descend), all, none or auto")
	opts.descent.register(f)
	f.DurationVar(&opts.duration, "duration", 0, "stop after this long (0: when the source ends, or on SIGINT/SIGTERM)")
	f.BoolVar(&opts.stopOnEOF, "stop-on-eof", false, "stop, as asked (exit 0), when standard input ends: for a parent process that drives the run")
	f.IntVar(&opts.ringSize, "ring-size", opts.ringSize, "netdev_max_backlog of each receive queue -> worker ring")
	f.IntVar(&opts.flowLimit, "flow-limit", 0, "RPS flow limit table length (flow_limit_table_len, e.g. 4096; 0: off)")
	f.StringVar(&opts.consumer, "consumer", opts.consumer, "queueing discipline behind each worker: "+strings.Join(queues.ConsumerNames, ", "))
	f.IntVar(&opts.consumerCfg.Limit, "limit", 0, "consumer limit in packets (default: the qdisc's)")
	f.IntVar(&opts.consumerCfg.Flows, "flows", 0, "fq_codel flows, or fq orphan_mask+1 (default 1024)")
	f.IntVar(&opts.consumerCfg.Quantum, "quantum", 0, "fq, fq_codel quantum in bytes (default: the qdisc's)")
	f.DurationVar(&opts.consumerCfg.Target, "target", 0, "fq_codel CoDel target (default 5ms)")
	f.DurationVar(&opts.consumerCfg.Interval, "interval", 0, "fq_codel CoDel interval (default 100ms)")
	f.BoolVar(&opts.consumerCfg.ECN, "ecn", false, "fq_codel: mark CE instead of dropping")
	f.StringVar(&opts.serviceRate, "service-rate", opts.serviceRate, "how fast each worker serves its consumer: max, a bit rate such as 10Mbit, 1Gbit, or a packet rate such as 500k, 500kpps")
	f.StringVar(&opts.out, "out", "", "write the run statistics as JSON to this file")
	f.StringVar(&opts.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on host:port during the run, such as "+metrics.DefaultAddr+" (xdphash's port; without a host: every interface; 127.0.0.1:PORT: the loopback only)")
	f.DurationVar(&opts.window, "window", opts.window, "length of each time window of the statistics")
	f.Var(newChoiceFlag(&opts.xdpMode, source.XDPModes...), "xdp-mode", "AF_XDP: where the XDP program runs")
	f.BoolVar(&opts.zeroCopy, "zero-copy", false, "AF_XDP: bind in zero-copy mode (native mode, driver support)")
	f.IntVar(&opts.frames, "frames", 0, "AF_XDP: UMEM frames per queue (default 4096)")
	f.IntVar(&opts.frameSize, "frame-size", 0, "AF_XDP: bytes per UMEM frame, 2048 or 4096 (default 2048, or 4096 when the MTU does not fit in 2048 with the headers and the 256-byte headroom)")
	f.IntVar(&opts.xdpRingSize, "xdp-ring-size", 0, "AF_XDP: fill and RX ring entries (default 2048)")
	f.Var(newChoiceFlag(&opts.rxMode, source.RxModes...), "rx-mode", "AF_XDP: how a receive loop waits: spin, poll, or auto")
	opts.device.addFlags(f)
	opts.nic.addFlags(f)
	f.StringVar(&opts.write, "write", "", "write the first frames, as received, to this pcapng file with each frame's queue, device hash and a comment with xdphash's hash, its source, worker, path and metadata VLAN tag")
	f.IntVar(&opts.writeCount, "write-count", defaultWriteCount, fmt.Sprintf("--write: frames to write, at most %d", maxWriteCount))
	f.BoolVar(&opts.writeWait, "write-wait", false, "AF_XDP --write: the receive loops wait for the writer rather than miss frames when the frames waiting for it fill its buffer, so that --write-count frames are written (the kernel drops on the full RX ring meanwhile); files and synthetic traffic always wait, losing nothing")
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
	if err := o.descent.resolve(); err != nil {
		return err
	}
	if !o.descent.p.IsZero() && o.device.checkHash {
		return errors.New("--descend with --check-device-hash: the device's (kernel's) hash does not descend into tunnels, so the two would differ on every tunnel frame")
	}
	if changed("write-count") && o.write == "" || o.writeCount < 1 || o.writeCount > maxWriteCount {
		return fmt.Errorf("--write-count %d: want 1 to %d, with --write", o.writeCount, maxWriteCount)
	}
	if changed("write-wait") && (o.write == "" || o.iface == "") {
		return errors.New("--write-wait is for --write with --iface (a file's or synthetic run's receive loops always wait for the writer)")
	}
	switch {
	case o.iface != "" && (o.virtualClock || changed("virtual-queues") || changed("replay")):
		return errors.New("--virtual-clock, --virtual-queues and --replay are for --pcap and --synthetic")
	case o.iface == "" && (changed("queues") || changed("xdp-mode") || changed("zero-copy") || changed("frames") || changed("frame-size") || changed("xdp-ring-size") || changed("rx-mode") || changed("xdp-metadata") || changed("kernel-cpus")):
		return errors.New("--queues, --xdp-mode, --zero-copy, --frames, --frame-size, --xdp-ring-size, --rx-mode, --xdp-metadata and --kernel-cpus are for --iface")
	case changed("replay-drops") && (o.pcap == "" || o.virtualClock):
		return errors.New("--replay-drops is for --pcap on the wall clock (a --virtual-clock replay never falls behind)")
	case o.synthetic == "" && (changed("count") || changed("synthetic-flows")):
		return errors.New("--count and --synthetic-flows are for --synthetic")
	case o.hash != hash.KindToeplitz && (changed("rss-key") || changed("symmetric")) && o.pcap == "":
		return errors.New("--rss-key and --symmetric are for --hash toeplitz (or a --pcap spread over --virtual-queues)")
	case o.hash == hash.KindToeplitz && o.key.set:
		return errors.New("--hash-key is for --hash kernel")
	case o.steer != "reta" && changed("reta-weights"):
		return errors.New("--reta-weights is for --steer reta")
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
	if err := o.nic.check(o, changed); err != nil {
		return err
	}
	if o.cpus.cpus != nil {
		if changed("workers") && len(o.cpus.cpus) != o.workers {
			return fmt.Errorf("--cpus lists %d CPUs for --workers %d: give one CPU per worker", len(o.cpus.cpus), o.workers)
		}
		o.workers = len(o.cpus.cpus)
	}
	// The engine's limits, before anything is read or opened.
	cfg := o.engineConfig(&runSetup{steer: hash.SteerConfig{Workers: o.workers, Hash: o.hash, Symmetry: o.symmetric}})
	return o.flagError(cfg.Check(o.loops()))
}

// loops is the receive queues of a file or synthetic source, 0 for AF_XDP,
// whose queues are counted when it opens.
func (o *runOptions) loops() int {
	if o.iface != "" {
		return 0
	}
	return o.virtualQueues
}

// engineFlags names the flag of each EngineConfig field a LimitError can
// name (pipeline.EngineConfig.Check).
var engineFlags = map[string]string{
	"Steering.Workers": "--workers", "loops": "--virtual-queues", "RingSize": "--ring-size", "Batch": "--batch",
	"FlowLimit": "--flow-limit", "Window": "--window", "Steering.RETASize": "--reta-size",
	"Rebalance.Interval": "--rebalance", "Rebalance.Threshold": "--rebalance-threshold", "Rebalance.Dwell": "--rebalance-dwell",
}

// flagError is err with a limit of the engine's told in terms of the flag
// that set it: "--ring-size 0: want 1 to 1048576".
func (o *runOptions) flagError(err error) error { return limitFlagError(err, engineFlags) }

// limitFlagError is err, a pipeline.LimitError of a field flags names
// turned into a message about that flag.
func limitFlagError(err error, flags map[string]string) error {
	if le, ok := errors.AsType[*pipeline.LimitError](err); ok {
		if flag, ok := flags[le.Field]; ok {
			return fmt.Errorf("%s %v: %s", flag, le.Value, le.Want)
		}
	}
	return err
}

// engineConfig is the engine's configuration from the flags and s, without
// what the source gives (the source itself, the CPU plan, the queue
// spread) or the capture.
func (o *runOptions) engineConfig(s *runSetup) pipeline.EngineConfig {
	cfg := pipeline.EngineConfig{
		Steering: s.steer,
		Flags:    dissect.DefaultFlags, Gates: o.gates.gates, Auto: o.gates.auto, Descent: o.descent.p,
		RingSize: o.ringSize, FlowLimit: o.flowLimit,
		Consumer: o.consumer, ConsumerConfig: o.consumerCfg, ServiceRate: s.rate,
		Virtual: o.virtualClock, Window: o.window, Batch: o.batch,
		CheckDeviceHash: o.device.checkHash, WithholdVLANTag: o.device.withholdTag,
	}
	if o.steer == "reta" {
		cfg.Steering.Steer = hash.SteerRETA
	}
	o.rebalance.apply(&cfg)
	return cfg
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
	s := &runSetup{steer: hash.SteerConfig{Workers: o.workers, Hash: o.hash, Symmetry: o.symmetric}}
	var err error
	if o.hash != hash.KindToeplitz {
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
		pps, err := queues.ParsePacketRate(o.replay)
		if err != nil {
			return nil, fmt.Errorf("--replay: %w (or recorded)", err)
		}
		s.replay = source.Replay{Mode: source.ReplayRate, PPS: pps}
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
		rss, err := o.rss(s)
		if err != nil {
			return nil, plan, err
		}
		src, err := pipeline.NewSynthetic(frames, cfg, rss)
		if err != nil {
			return nil, plan, fmt.Errorf("--synthetic %s: %w", o.synthetic, err)
		}
		return src, plan, nil
	case o.pcap != "":
		plan := pipeline.PlanCPUs(in)
		rss, err := o.rss(s)
		if err != nil {
			return nil, plan, err
		}
		src, err := pipeline.OpenPcap(o.pcap, source.PcapConfig{Batch: o.batch, Replay: s.replay, Clock: clock, DropBehind: o.replayDrops}, rss)
		return src, plan, err
	}
	qs, err := source.ParseQueues(o.queues)
	if err != nil {
		return nil, pipeline.CPUPlan{}, fmt.Errorf("--queues: %w", err)
	}
	a, err := pipeline.OpenPlannedAFXDP(pipeline.AFXDPSourceConfig{
		AFXDP: source.AFXDPConfig{
			Iface: o.iface, Queues: qs, Frames: o.frames, FrameSize: o.frameSize, RingSize: o.xdpRingSize, Batch: o.batch,
			ZeroCopy: o.zeroCopy, Mode: o.xdpMode, RxMode: o.rxMode, NoMetadata: !o.xdpMetadata,
		},
		Workers: o.workers, WorkerCPUs: o.cpus.cpus, KernelCPUs: o.kernelCPUs.cpus,
	})
	if err != nil {
		return nil, pipeline.CPUPlan{}, err
	}
	if a.PlacementErr != nil {
		log.Warn("no CPU placement", "err", a.PlacementErr)
	}
	return a.Source, a.Plan, nil
}

// rss is the model by which a file or synthetic source's one stream is
// spread over the virtual queues.
func (o *runOptions) rss(s *runSetup) (pipeline.RSSConfig, error) {
	rss := pipeline.RSSConfig{Queues: o.virtualQueues, Key: s.steer.RSSKey, Symmetry: s.steer.Symmetry}
	if o.virtualQueues > 1 {
		var err error
		if rss.NIC, err = o.nicModel(s); err != nil {
			return rss, err
		}
	}
	return rss, nil
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
	if err := checkFiles([]string{"--pcap", o.pcap}, []string{"--out", o.out, "--write", o.write}); err != nil {
		return err
	}
	var out *pendingOutput
	if o.out != "" {
		if out, err = createOutput(o.out); err != nil {
			return err
		}
		defer out.Abort()
	}
	ecfg := o.engineConfig(s)
	if err := ecfg.Check(o.loops()); err != nil {
		return o.flagError(err)
	}
	rw, err := o.prepareWrite(s, log)
	if err != nil {
		return err
	}
	if err := o.predictNIC(cmd.OutOrStdout()); err != nil {
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

	ecfg.Source, ecfg.Plan, ecfg.Capture = src, &plan, rw.engineCapture()
	ecfg.QueueSpread = o.queueSpread(len(src.Queues()))
	ecfg.CheckDeviceQueue, ecfg.CheckNIC = queueTable, o.checkNIC(s, log)
	engine, err := pipeline.NewEngine(ecfg)
	if err != nil {
		return err
	}

	sigCtx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx := sigCtx
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	if o.stopOnEOF {
		ctx = stopOnEOF(ctx, cmd.InOrStdin())
	}
	if o.metricsAddr != "" {
		addr, err := metrics.Serve(ctx, o.metricsAddr, engine.Stats)
		if err != nil {
			return err
		}
		log.Info("serving metrics", "url", "http://"+addr+"/metrics")
	}
	if err := rw.start(ctx, name); err != nil {
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
	pipeline.AttachStatic(stats, static)
	w := cmd.OutOrStdout()
	if err := errors.Join(report.WriteSummary(w, stats), report.WriteDeviceSummary(w, stats)); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("write the run summary: %w", err))
	}
	if err := rw.finish(w); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err := report.WriteSteeringSummary(w, stats, o.iface); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("write the steering summary: %w", err))
	}
	if out != nil {
		if err := writeRunStats(out, stats); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr == nil {
		runErr = deviceHashVerdict(stats)
	}
	if sigCtx.Err() != nil && cmd.Context().Err() == nil {
		// Signalled: the reports of the partial run are written.
		return &exitError{code: exitInterrupted, err: runErr}
	}
	return runErr
}

// stopOnEOF is ctx, done also once in ends: what in holds is read and
// dropped. A stop so asked is not an interrupt: the run exits 0.
func stopOnEOF(ctx context.Context, in io.Reader) context.Context {
	ctx, stop := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, in)
		stop()
	}()
	return ctx
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
	var kernelDrops, replayDrops uint64
	for i, q := range cur.Queues {
		b = fmt.Appendf(b, "q%d %.2f Mpps in  ", q.Queue, float64(q.Stats.Frames-prev.Queues[i].Stats.Frames)/secs/1e6)
		kernelDrops += q.Stats.KernelDrops()
		replayDrops += q.Stats.ReplayDrops()
	}
	b = append(b, "| "...)
	for i, w := range cur.Workers {
		b = fmt.Appendf(b, "w%d %.2f Mpps served  ", i, float64(w.Consumer.Dequeued-prev.Workers[i].Consumer.Dequeued)/secs/1e6)
	}
	b = fmt.Appendf(b, "| drops %d after receive, %d kernel", cur.Accounting.Total(), kernelDrops)
	if replayDrops > 0 {
		b = fmt.Appendf(b, ", %d replay", replayDrops)
	}
	return b
}
