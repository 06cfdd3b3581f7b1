package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/queues"
)

func init() { subcommands = append(subcommands, newPktgenCmd) }

// pktgenOptions are the flags of xdphash pktgen.
type pktgenOptions struct {
	iface    string
	netns    string
	profile  string
	rate     rateFlag
	count    uint64
	duration time.Duration
	threads  int
	mode     pktgen.Mode
	dstMAC   string
	batch    int
	write    string
	descent  descentFlags // --write: check the frames under this policy
}

// rateFlag is --rate: a packet rate as queues.ParsePacketRate reads it
// (100000, 500k, 1.5M, 500kpps, 1.5Mpps), or max (0) for as fast as possible.
type rateFlag struct{ pps float64 }

func (f *rateFlag) Set(s string) error {
	pps, err := queues.ParsePacketRate(s)
	if err != nil {
		return err
	}
	f.pps = pps
	return nil
}

func (f *rateFlag) String() string {
	return queues.Rate{PacketsPerSec: f.pps}.String()
}

func (f *rateFlag) Type() string { return "PPS|max" }

func newPktgenCmd(root *rootOptions) *cobra.Command {
	opts := pktgenOptions{threads: 1, mode: pktgen.ModeXDP, profile: "simple"}
	cmd := &cobra.Command{
		Use:   "pktgen (--iface IF | --write FILE.pcapng) --profile NAME|FILE (--count N | --duration D)",
		Short: "Send a traffic profile out of an interface, fast enough to load AF_XDP",
		Long: `Pktgen builds the frames of a traffic profile (built in: ` + strings.Join(pktgen.BuiltinNames(), ", ") + `,
or a YAML file) and sends them out of --iface from --threads threads, each pinned
to a CPU of its own, until --count frames are sent or --duration has passed.

Modes: xdp (default) runs an XDP program on live frames with BPF_PROG_RUN, which
transmits them with XDP_TX (Linux 5.18; on a veth the receiving end needs an XDP
program or GRO on); afxdp transmits from AF_XDP sockets; packet writes to an
AF_PACKET socket with sendmmsg past the qdisc; kernel drives the kernel's pktgen
module when the kernel has it.

Frames are addressed to --dst-mac, or, when --iface is a veth whose other end
is in this network namespace, to that end. Only interfaces you name are used.
Needs root (CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW).

--write FILE.pcapng writes --count frames of the profile to a capture file
instead (1 µs apart, or at --rate), with no interface and no privileges: a
sample for xdphash dissect, verify --pcap and run --pcap. With --descend (and
--fou-port, --gue-port) it also dissects each frame written under that opt-in
UDP tunnel descent, as dissect, verify and run --descend will, and says how
many frames it descends into per tunnel and how many distinct flows the hash
then sees against without it (or that no frame enters the policy's tunnels).`,
		Example: `  xdphash pktgen --profile datacenter --count 10000 --write sample.pcapng
  sudo xdphash pktgen --netns lab --iface veth1 --profile datacenter --count 10000000 --threads 2
  sudo xdphash pktgen --iface veth1 --profile my.yaml --duration 10s --rate 1M --mode afxdp`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.write == "" && (cmd.Flags().Changed("descend") || cmd.Flags().Changed("fou-port") || cmd.Flags().Changed("gue-port")) {
				return &usageError{cmd: cmd, err: errors.New("--descend, --fou-port and --gue-port check the frames of --write; a sending pktgen does not dissect")}
			}
			if opts.write != "" {
				if opts.iface != "" || opts.duration != 0 || opts.count == 0 || opts.count > maxWriteFrames {
					return &usageError{cmd: cmd, err: fmt.Errorf("--write takes --count (1 to %d frames) and no --iface or --duration", maxWriteFrames)}
				}
				return writeProfile(cmd, root.logger(cmd), &opts)
			}
			switch {
			case opts.iface == "":
				return &usageError{cmd: cmd, err: errors.New("--iface is required: name the interface to send out of (or --write a capture file)")}
			case opts.count == 0 && opts.duration <= 0:
				return &usageError{cmd: cmd, err: errors.New("give --count or --duration: the generator never runs unbounded")}
			case opts.threads < 1:
				return &usageError{cmd: cmd, err: fmt.Errorf("--threads %d: want at least 1", opts.threads)}
			}
			return runPktgen(cmd, root.logger(cmd), &opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.iface, "iface", "", "interface to send out of")
	f.StringVar(&opts.netns, "netns", "", "named network namespace of --iface (as ip netns names it)")
	f.StringVar(&opts.profile, "profile", "simple", "built-in profile name or YAML profile file")
	f.Var(&opts.rate, "rate", "frames per second over all threads, such as 100000, 500k, 1.5Mpps, or max")
	f.Uint64Var(&opts.count, "count", 0, "frames to send")
	f.DurationVar(&opts.duration, "duration", 0, "how long to send")
	f.IntVar(&opts.threads, "threads", 1, "sending threads, one per CPU")
	f.Var(newChoiceFlag(&opts.mode, pktgen.Modes...), "mode", "how to send (unset: afxdp on kernels without XDP live frames, before 5.18)")
	f.StringVar(&opts.dstMAC, "dst-mac", "", "destination MAC (default: the other end of a veth --iface)")
	f.IntVar(&opts.batch, "batch", 0, "xdp: frames per kernel batch (default the kernel's 64, at most 256)")
	f.StringVar(&opts.write, "write", "", "write --count frames to this pcapng file instead of sending them")
	opts.descent.register(f)
	return cmd
}

func runPktgen(cmd *cobra.Command, log *slog.Logger, opts *pktgenOptions) error {
	mode := opts.mode
	if !cmd.Flags().Changed("mode") {
		mode = "" // xdp where the kernel has live frames, else afxdp
	}
	cfg := pktgen.Config{
		Iface: opts.iface, Netns: opts.netns, Mode: mode, Threads: opts.threads,
		Rate: opts.rate.pps, Count: opts.count, Duration: opts.duration, Batch: opts.batch,
	}
	var (
		dst net.HardwareAddr
		err error
	)
	if opts.dstMAC != "" {
		if dst, err = net.ParseMAC(opts.dstMAC); err != nil {
			return &usageError{cmd: cmd, err: fmt.Errorf("--dst-mac: %w", err)}
		}
	}
	prof, err := pktgen.LoadProfile(opts.profile)
	if err != nil {
		return err
	}
	// The interface and the CPUs before the schedule: a large profile's
	// schedule takes seconds and gigabytes to build.
	if err := pktgen.Check(cfg); err != nil {
		return err
	}
	if dst == nil {
		if dst, err = pktgen.ReceiverMAC(opts.iface, opts.netns, nil); err != nil {
			return fmt.Errorf("%w (--dst-mac)", err)
		}
	}
	built := time.Now()
	sched, err := pktgen.NewSchedule(prof, pktgen.MACs{Dst: dst})
	if err != nil {
		return err
	}
	log.Debug("built schedule", "profile", prof.Name, "frames", sched.Len(), "distinct", sched.Distinct(), "dst", dst.String(), "took", time.Since(built))
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A line per second on a terminal; elsewhere only the report at the end.
	endLines := func() {}
	if w := cmd.ErrOrStderr(); isTerminal(w) {
		stopLines := make(chan struct{})
		linesDone := make(chan struct{})
		ticker := time.NewTicker(time.Second)
		read := func() (uint64, error) { n, _, err := pktgen.LinkTx(cfg); return n, err }
		go func() {
			defer close(linesDone)
			pktgenProgress(w, opts.iface, read, time.Now(), ticker.C, stopLines)
		}()
		endLines = func() { ticker.Stop(); close(stopLines); <-linesDone }
	}
	rep, err := pktgen.Run(ctx, sched, cfg)
	endLines()
	if err != nil {
		return err
	}
	writePktgenReport(cmd.OutOrStdout(), sched, rep)
	for _, w := range rep.Warnings {
		log.Warn(w)
	}
	return nil
}

// writePktgenReport prints the profile's cycle, each thread's rate and the
// total.
func writePktgenReport(w io.Writer, s *pktgen.Schedule, r pktgen.Report) {
	fmt.Fprintf(w, "profile %s: %d frames per cycle, %d distinct, %d flows; mode %s on %s\n",
		r.Profile, s.Len(), s.Distinct(), s.Flows(), r.Mode, r.Iface)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "thread\tcpu\tqueue\tframes\tseconds\tMpps\tGbit/s\t")
	queue := func(q int) string {
		if q < 0 {
			return "-"
		}
		return strconv.Itoa(q)
	}
	for _, t := range r.Threads {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%.3f\t%.3f\t%.3f\t\n", t.Thread, t.CPU, queue(t.Queue), t.Frames, t.Elapsed.Seconds(), t.PPS()/1e6, t.BitsPerSecond()/1e9)
	}
	fmt.Fprintf(tw, "total\t\t\t%d\t%.3f\t%.3f\t%.3f\t\n", r.Frames, r.Elapsed.Seconds(), r.PPS()/1e6, r.BitsPerSecond()/1e9)
	tw.Flush()
	if r.LinkValid {
		fmt.Fprintf(w, "link %s: tx_packets +%d, tx_dropped +%d\n", r.Iface, r.LinkTxPackets, r.LinkTxDropped)
	}
}

// maxWriteFrames bounds pktgen --write: a capture of at most a few GB.
const maxWriteFrames = 10_000_000

// writeDstMAC is the destination of frames written to a file without
// --dst-mac: locally administered.
var writeDstMAC = net.HardwareAddr{0x02, 0x78, 0x64, 0x70, 0x00, 0x01}

// writeProfile writes opts.count frames of the profile to opts.write as
// pcapng, stamped 1 µs apart or at --rate.
func writeProfile(cmd *cobra.Command, log *slog.Logger, opts *pktgenOptions) error {
	dst := writeDstMAC
	if opts.dstMAC != "" {
		var err error
		if dst, err = net.ParseMAC(opts.dstMAC); err != nil {
			return &usageError{cmd: cmd, err: fmt.Errorf("--dst-mac: %w", err)}
		}
	}
	policy, err := opts.descent.policy()
	if err != nil {
		return &usageError{cmd: cmd, err: err}
	}
	prof, err := pktgen.LoadProfile(opts.profile)
	if err != nil {
		return err
	}
	pps := 1e6 // 1 µs apart
	if opts.rate.pps > 0 {
		pps = opts.rate.pps
	}
	// The frames are stamped from now at pps; the last stamp must fit the
	// nanoseconds since 1970 that a pcapng's 64-bit timestamps and
	// time.Duration hold, or the stamps wrap and run backwards.
	start := time.Now()
	nsPerFrame := 1e9 / pps
	if span := float64(opts.count-1) * nsPerFrame; span >= float64(math.MaxInt64-start.UnixNano()) {
		return &usageError{cmd: cmd, err: fmt.Errorf("--rate %s with --count %d: the last frame would be stamped %.3g s after the first, past the year 2262 that nanosecond timestamps reach; raise --rate or lower --count",
			opts.rate.String(), opts.count, span/1e9)}
	}
	out, err := createOutput(opts.write)
	if err != nil {
		return err
	}
	defer out.Abort()
	sched, err := pktgen.NewSchedule(prof, pktgen.MACs{Dst: dst})
	if err != nil {
		return err
	}
	w, err := capture.NewWriter(out.tmp, capture.WriterConfig{Application: "xdphash pktgen"})
	if err != nil {
		return fmt.Errorf("write %s: %w", opts.write, err)
	}
	// SIGINT or SIGTERM ends the writing: the frames written so far are a
	// valid capture, committed as any other.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Debug("writing frames", "profile", prof.Name, "frames", opts.count, "to", opts.write)
	st := sched.Stream(1)
	var chk *descentCheck
	if !policy.IsZero() {
		chk = newDescentCheck(policy)
	}
	var written uint64
	for ; written < opts.count && ctx.Err() == nil; written++ {
		f := capture.Frame{Data: st.Next(), Time: start.Add(time.Duration(float64(written) * nsPerFrame))}
		if err := w.Write(&f); err != nil {
			return fmt.Errorf("write %s: %w", opts.write, err)
		}
		if chk != nil {
			chk.add(f.Data)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", opts.write, err)
	}
	if err := out.Commit(nil); err != nil {
		return err
	}
	if written < opts.count {
		fmt.Fprintf(cmd.OutOrStdout(), "profile %s: interrupted: %d of %d frames written to %s\n", prof.Name, written, opts.count, opts.write)
		return &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted after %d of %d frames", written, opts.count)}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "profile %s: %d frames written to %s\n", prof.Name, opts.count, opts.write)
	if chk != nil {
		chk.write(cmd.OutOrStdout())
	}
	return nil
}
