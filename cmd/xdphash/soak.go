package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/report"
	"github.com/xdphash/xdphash/soak"
)

func init() { subcommands = append(subcommands, newSoakCmd) }

// soakOptions are the flags of xdphash soak.
type soakOptions struct {
	cfg         soak.Config
	rate        rateFlag
	serviceRate string
	out         string
	descent     descentFlags
	search      searchOptions
}

func newSoakCmd(root *rootOptions) *cobra.Command {
	opts := soakOptions{cfg: soak.Config{
		Duration: soak.DefaultDuration, Queues: soak.DefaultQueues, Workers: soak.DefaultWorkers,
		Profile: soak.DefaultProfile, Consumer: soak.DefaultConsumer, RingSize: pipeline.DefaultRingSize,
		Lab: soak.LabVeth,
	}}
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "Build a test network, blast traffic through the pipeline, check it and report",
		Long: `Soak shows the whole pipeline working on this machine, with nothing but root:
it creates a network namespace and a multi-queue veth pair of its own, receives
on the host end with AF_XDP through the engine (dissect, hash, steer, worker
rings, --consumer served at --service-rate), sends --profile from the peer end inside the namespace for
--duration, and then checks:

  accounting  every frame sent is received or counted as dropped at exactly
              one stage: generator, veth (tx_dropped), AF_XDP
              (XDP_STATISTICS), worker rings, flow limit, consumer
  hash        1 frame in 1009 is copied as received; dissected and hashed
              again offline, each gives the hash the pipeline computed
  steering    each sampled frame went to the worker the RPS map gives its hash
  memory      heap, Sys and goroutines stay flat after warm-up (within 10%)

With --lab virtio the pipeline runs instead inside a QEMU guest, as xdphash
run on the guest's virtio-net device (native XDP, AF_XDP copy mode, --queues
queue pairs), with the device's Toeplitz key; the generator sends into the
guest's tap from here, at --rate (default 10 kpps, what the emulated guest
takes). The checks are then: the guest's run ended cleanly; accounting (tap,
guest NIC, AF_XDP, engine); every frame's device hash equals xdphash's
Toeplitz of it; every frame came in on the queue the device's RSS table
gives for its hash.

With --search ndr (or pdr, pdr=RATIO, several comma-separated, as in
--search ndr,pdr=0.5%) the soak becomes a benchmark: RFC 2544's throughput
test, TRex's NDR and PDR, several loss ratios in one search as FD.io CSIT's
MLRsearch. Each trial is a soak of --trial at one fixed rate, with a lab of
its own; its loss is every frame sent that no consumer served or holds (a
drop at any stage counts), and a trial whose generator fell short of the
rate asked is no pass. The first trial measures the generator's maximum,
the next tries --search-floor, and each further one halves the widest
bracket (in ratio) until every bracket is within --search-width or the
budget, --duration, holds no more trials. It prints, and writes to run.json
(search section) and search.json, each goal's bracket: the rate sent at its
lower end in frames and bits per second, its loss ratio and CPU per frame
(generator threads, pipeline, softirqs, from /proc), and the drops by stage
one step up (what broke first); then every trial. The report's HTML page
charts loss against rate. Exit status 2 when the generator cannot reach or
keep the floor (the search says so), 130 when interrupted (after writing
the trials so far).

It prints each check with PASS or FAIL and writes run.json, report.txt,
report.html and checks.json into --out (checked, and made, before anything
runs). The namespace, the veth pair and the XDP program are removed on every
exit, Ctrl-C included. A check that cannot judge (the memory check of a run
too short to show a trend) says SKIP.

Exit status: 0 when every check passed, 1 when one failed, 3 when none
failed but one was skipped, 130 when interrupted (after writing the reports of
the run so far), 2 for a usage or setup error. Needs root (CAP_SYS_ADMIN for
the namespace, CAP_NET_ADMIN and CAP_BPF for the rest).`,
		Example: `  go build -o xdphash ./cmd/xdphash && sudo ./xdphash soak
  sudo xdphash soak --duration 10m --profile isp --consumer fq --out /tmp/soak
  sudo xdphash soak --ring-size 8 --duration 5s   # a tiny backlog: drops, counted
  sudo xdphash soak --search ndr,pdr=0.5% --threads 1 --duration 3m
  sudo xdphash soak --search ndr --workers 1 --consumer fifo --service-rate 10kpps`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.search.spec != "" && !cmd.Flags().Changed("duration") {
				opts.cfg.Duration = defaultSearchBudget
			}
			if err := opts.check(); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			if err := opts.checkDescent(); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			if err := opts.search.check(cmd, opts.cfg.Duration); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			if opts.cfg.CheckDevice && !cmd.Flags().Changed("profile") {
				opts.cfg.Profile = "tunnels" // the default's VLAN frames cannot pass through AF_PACKET unchanged
			}
			opts.cfg.Rate = opts.rate.pps
			undo, err := opts.claimOut()
			if err != nil {
				return err
			}
			defer undo()
			if opts.search.spec != "" {
				return runSearch(cmd, root.logger(cmd), &opts)
			}
			return runSoak(cmd, root.logger(cmd), &opts)
		},
	}
	f := cmd.Flags()
	opts.descent.register(f)
	f.DurationVar(&opts.cfg.Duration, "duration", opts.cfg.Duration, "how long the generator sends")
	f.IntVar(&opts.cfg.Queues, "queues", opts.cfg.Queues, "receive queues of the veth pair (one AF_XDP socket and receive loop each)")
	f.IntVar(&opts.cfg.Workers, "workers", opts.cfg.Workers, "workers (modelled CPUs)")
	f.StringVar(&opts.cfg.Profile, "profile", opts.cfg.Profile, "traffic profile: "+strings.Join(pktgen.BuiltinNames(), ", ")+", or a YAML file")
	f.Var(&opts.rate, "rate", "generator frames per second over all threads, such as 100000, 500k, 1.5Mpps, or max")
	f.StringVar(&opts.cfg.Consumer, "consumer", opts.cfg.Consumer, "queueing discipline behind each worker: "+strings.Join(queues.ConsumerNames, ", "))
	f.StringVar(&opts.serviceRate, "service-rate", "max", "how fast each worker serves its consumer: max, a bit rate such as 1Gbit, or a packet rate such as 50kpps")
	f.StringVar(&opts.out, "out", "", "directory for run.json, report.txt, report.html, checks.json (default ./xdphash-soak-<timestamp>)")
	f.Var(newChoiceFlag(&opts.cfg.Mode, pktgen.Modes[:3]...), "mode", "generator mode: xdp, afxdp or packet (default: xdp where the kernel has live frames, else afxdp)")
	f.IntVar(&opts.cfg.RingSize, "ring-size", opts.cfg.RingSize, "netdev_max_backlog of each receive queue -> worker ring")
	f.IntVar(&opts.cfg.Threads, "threads", 0, "generator threads, one per CPU (default: one per queue, as far as there are CPUs)")
	f.Var(newChoiceFlag(&opts.cfg.Lab, soak.LabVeth, soak.LabVirtio), "lab", "where the pipeline runs: veth (a veth pair here) or virtio (xdphash run in a QEMU guest on a virtio-net device: native XDP, the device's Toeplitz hash and RSS table, checked frame by frame; needs qemu-system-x86 and apt for the guest kernel; see docs/virtio-lab.md)")
	f.StringVar(&opts.cfg.Pcap, "pcap", "", "send the frames of this pcap or pcapng file (in order, cycling, each to the receiver's MAC address) instead of --profile's")
	f.StringVar(&opts.cfg.GuestKernel, "guest-kernel", "", "--lab virtio: the guest kernel series, "+strings.Join(virtiolab.Series, " or ")+" (default "+virtiolab.DefaultSeries+")")
	opts.search.addFlags(f)
	f.BoolVar(&opts.cfg.CheckDevice, "check-device", false, "check every frame against the kernel's own hash: the generator sends through AF_PACKET and the qdisc, every other frame with a hardware VLAN tag, and the run compares each device hash with its own")
	return cmd
}

// maxSoakQueues bounds --queues: each queue is an AF_XDP socket with its own
// UMEM and a generator thread.
const maxSoakQueues = 64

// check refuses values the soak would otherwise replace or choke on; the
// engine's limits are the engine's (soak.Config.CheckEngine).
func (o *soakOptions) check() error {
	c := &o.cfg
	switch {
	case c.Duration <= 0:
		return fmt.Errorf("--duration %s: want a positive duration: the generator never runs unbounded", c.Duration)
	case c.Queues < 1 || c.Queues > maxSoakQueues:
		return fmt.Errorf("--queues %d: want 1 to %d", c.Queues, maxSoakQueues)
	case c.Threads < 0 || c.Threads > maxSoakQueues:
		return fmt.Errorf("--threads %d: want 1 to %d, or 0 for one per queue", c.Threads, maxSoakQueues)
	}
	var err error
	if c.ServiceRate, err = queues.ParseRate(o.serviceRate); err != nil {
		return fmt.Errorf("--service-rate: %w", err)
	}
	return limitFlagError(c.CheckEngine(), soakEngineFlags)
}

// soakEngineFlags names the flag of each engine setting a soak flag sets.
var soakEngineFlags = map[string]string{"Steering.Workers": "--workers", "RingSize": "--ring-size", "loops": "--queues"}

func runSoak(cmd *cobra.Command, log *slog.Logger, o *soakOptions) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	o.cfg.Log = log
	progress, done := soakProgress(cmd.ErrOrStderr(), log, o.cfg.Duration)
	o.cfg.Progress = progress
	res, err := soak.Run(ctx, o.cfg)
	done()
	interrupted := ctx.Err() != nil
	if err != nil {
		if interrupted {
			return &exitError{code: exitInterrupted, err: fmt.Errorf("soak interrupted: %w", err)}
		}
		return err
	}
	w := cmd.OutOrStdout()
	// The files are written even when the summary could not be.
	sumErr := writeSoakSummary(w, res)
	if err := res.WriteFiles(o.out); err != nil {
		return err
	}
	if sumErr != nil {
		return fmt.Errorf("write the soak summary: %w", sumErr)
	}
	abs, _ := filepath.Abs(o.out)
	fmt.Fprintf(w, "\nreport: %s (also run.json, report.txt, checks.json there)\n", filepath.Join(abs, soak.FileReportHTML))
	return soakExit(res, interrupted)
}

// soakExit is the soak's exit status: exitInterrupted after a signal (the
// checks cover the run so far), exitDivergence when a check failed,
// exitSkipped when none failed but one could not judge, exitOK otherwise.
func soakExit(res *soak.Result, interrupted bool) error {
	failed, skipped := res.Count()
	switch {
	case interrupted:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("soak interrupted: the checks cover the run so far (%d failed, %d skipped)", failed, skipped)}
	case failed > 0:
		return &exitError{code: exitDivergence, err: fmt.Errorf("soak: %d of %d checks failed", failed, len(res.Checks))}
	case skipped > 0:
		return &exitError{code: exitSkipped, err: fmt.Errorf("soak: no check failed, but %d of %d could not judge (hint: run longer)", skipped, len(res.Checks))}
	}
	return nil
}

// soakProgress returns the progress callback: a progress bar over the
// duration when w is a terminal, a log line every 5 seconds otherwise.
func soakProgress(w io.Writer, log *slog.Logger, d time.Duration) (func(soak.Progress), func()) {
	var prev soak.Progress
	rate := func(p soak.Progress) (pps float64, drops uint64) {
		secs := (p.Elapsed - prev.Elapsed).Seconds()
		var frames, prevFrames uint64
		for i, q := range p.Engine.Queues {
			frames += q.Stats.Frames
			drops += q.Stats.KernelDrops()
			if prev.Engine != nil && i < len(prev.Engine.Queues) {
				prevFrames += prev.Engine.Queues[i].Stats.Frames
			}
		}
		drops += p.Engine.Accounting.Total()
		if secs > 0 {
			pps = float64(frames-prevFrames) / secs
		}
		return pps, drops
	}
	if isTerminal(w) {
		bar := newSoakBar(w, d)
		return func(p soak.Progress) {
				pps, drops := rate(p)
				prev = p
				bar.update(p.Elapsed, fmt.Sprintf("%.2f Mpps received, %d dropped", pps/1e6, drops))
			}, func() {
				_ = bar.bar.Finish()
			}
	}
	return func(p soak.Progress) {
		pps, drops := rate(p)
		if p.Elapsed-prev.Elapsed < 5*time.Second && p.Elapsed < d {
			return
		}
		prev = p
		log.Info("soak", "elapsed", p.Elapsed.Round(time.Second), "of", d, "received_mpps", fmt.Sprintf("%.3f", pps/1e6), "drops", drops)
	}, func() {}
}

// writeSoakSummary prints the soak's status when it was interrupted, the
// loss of the frames sent and the pipeline's summary (WriteSummaryWith),
// the generator, and each check with PASS, FAIL or SKIP.
func writeSoakSummary(w io.Writer, r *soak.Result) error {
	if r.Interrupted {
		fmt.Fprintf(w, "status: %s: %s\n\n", strings.ToUpper(r.Status()), r.StatusDetail())
	}
	if err := report.WriteSummaryWith(w, r.Stats, r.Upstream()); err != nil {
		return err
	}
	g := r.Generator
	fmt.Fprintf(w, "\ngenerator: profile %s, mode %s, %d threads: %d frames in %.3fs, %.3f Mpps, %.3f Gbit/s\n",
		g.Profile, g.Mode, len(g.Threads), g.Frames, g.Elapsed.Seconds(), g.PPS()/1e6, g.BitsPerSecond()/1e9)
	fmt.Fprintln(w)
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%s  %s\n", c.Verdict(), c.Name)
		for line := range strings.SplitSeq(c.Detail, "\n") {
			if _, err := fmt.Fprintf(w, "      %s\n", line); err != nil {
				return err
			}
		}
	}
	return nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// soakBar is the soak's progress bar over its fixed duration: the time
// elapsed and left come from the duration, not from a rate's prediction.
type soakBar struct {
	bar *progressbar.ProgressBar
	d   time.Duration
}

func newSoakBar(w io.Writer, d time.Duration) *soakBar {
	return &soakBar{d: d, bar: progressbar.NewOptions64(int64(d/time.Second), progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30), progressbar.OptionSetPredictTime(false), progressbar.OptionClearOnFinish())}
}

// update moves the bar to elapsed with the line's what.
func (b *soakBar) update(elapsed time.Duration, what string) {
	elapsed = min(elapsed, b.d)
	_ = b.bar.Set64(int64(elapsed / time.Second))
	b.bar.Describe("soak: " + soakTimes(elapsed, b.d) + ": " + what)
}

// soakTimes is "15s of 1m0s, 45s left": elapsed of the fixed duration d.
func soakTimes(elapsed, d time.Duration) string {
	elapsed = min(elapsed, d).Truncate(time.Second)
	return fmt.Sprintf("%s of %s, %s left", elapsed, d, (d - elapsed).Round(time.Second))
}

// checkDescent reads --descend into the soak's configuration: for the veth
// lab, without the device check (the kernel's own hash does not descend).
func (o *soakOptions) checkDescent() error {
	if err := o.descent.resolve(); err != nil {
		return err
	}
	if o.descent.p.IsZero() {
		return nil
	}
	if o.cfg.Lab == soak.LabVirtio || o.cfg.CheckDevice {
		return errors.New("--descend takes the veth lab without --check-device: the device's (kernel's) hash does not descend into tunnels")
	}
	o.cfg.Descent = o.descent.p
	return nil
}
