package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
	"github.com/xdphash/xdphash/verify"
)

// Exit statuses of the xdphash command.
const (
	exitOK          = 0
	exitDivergence  = 1   // a check failed: the implementations disagree (verify), a soak check failed
	exitFailure     = 2   // usage or runtime error
	exitSkipped     = 3   // no check failed, but one could not judge (soak: a run too short)
	exitInterrupted = 130 // SIGINT or SIGTERM, after the partial run's reports were written (soak, run)
)

// exitError is how a command asks for an exit status other than exitFailure:
// run prints err, when it is not nil, and exits with code. Every other error
// exits with exitFailure.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError is an error in the command line of cmd: run follows it with
// cmd's usage. Flag and argument errors are wrapped in it (flagError,
// usageArgs); any other error is a runtime error, printed without the usage.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }

func (e *usageError) Unwrap() error { return e.err }

func main() {
	if guest.IsInit() {
		guest.Main() // the virtio lab's guest; never returns
	}
	os.Exit(run(newRootCmd(), os.Args[1:]))
}

// run executes root with args, prints an error as "xdphash: <err>" to root's
// stderr (after the command's usage for a usage error) and returns the exit
// status.
func run(root *cobra.Command, args []string) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	code := exitFailure
	if ee, ok := errors.AsType[*exitError](err); ok {
		code = ee.code
		err = ee.err
	}
	// The usage before the error, so that the error is the last line
	// (what `| tail -1` and a terminal's last line show).
	if ue, ok := errors.AsType[*usageError](err); ok {
		fmt.Fprint(root.ErrOrStderr(), ue.cmd.UsageString())
	}
	if err != nil {
		fmt.Fprintf(root.ErrOrStderr(), "xdphash: %v\n", err)
	}
	return code
}

// rootOptions are the flags every subcommand shares.
type rootOptions struct {
	verbose bool
}

// logger returns the logger for cmd: text records on cmd's stderr.
func (o *rootOptions) logger(cmd *cobra.Command) *slog.Logger {
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
}

func newRootCmd() *cobra.Command { return newRootCmdWith(productFlow) }

// productFlow is xdphash's side of verify: the slow path, or a Dissector with
// every fast path's gate open.
func productFlow(key hash.Key, path dissectPath) verify.FlowFunc {
	if path == pathFast {
		return verify.DissectorFlow(key, dissect.AllGates)
	}
	return verify.KernelFlow(key)
}

// subcommands are the constructors of the commands that register themselves
// from their own file's init (run, report, pktgen, soak, bench), so that each
// command lives in one file.
var subcommands []func(*rootOptions) *cobra.Command

// newRootCmdWith builds the command tree with flow as verify's xdphash side.
func newRootCmdWith(flow flowFunc) *cobra.Command {
	var opts rootOptions
	root := &cobra.Command{
		Use:   "xdphash",
		Short: "xdphash dissects, hashes and steers packets exactly as the Linux kernel does",
		Long: `xdphash dissects Ethernet frames exactly like the Linux kernel's flow dissector
(net/core/flow_dissector.c) and hashes them like skb_get_hash (or a NIC's RSS
Toeplitz hash), steers them to per-core worker queues that model RPS and the
fq/fq_codel qdiscs, and reports how fairly the load spread.

  dissect   dissect and hash every frame of a pcap/pcapng capture
  verify    compare the partition into flows with the running kernel's
            skb_get_hash: built-in corpus, a capture or random mutations
  run       the pipeline on an interface (AF_XDP), a capture or synthetic
            traffic, with a statistics file for report
  report    the fairness report of a run: terminal, HTML, JSON
  pktgen    send a traffic profile out of an interface, or write it to a
            capture file
  soak      build a test network, send a profile through the whole pipeline,
            check it and report (the main job: sudo xdphash soak)
  rss       show a device's RSS setup: hash key, indirection table, fields
  bench     the dissector's A/B table, measured on this machine

Exit status: 0 success, 1 a check failed (verify's divergences, a soak
check), 2 usage or runtime error, 3 a soak check could not judge, 130 a soak
or a run interrupted by SIGINT or SIGTERM.`,
		Version: version(readBuildInfo()),
		// run prints errors once, in its own format, and the usage after
		// usage errors only.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().BoolVarP(&opts.verbose, "verbose", "v", false, "log debug messages")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newDissectCmd(&opts), newVerifyCmd(&opts, flow))
	for _, newCmd := range subcommands {
		root.AddCommand(newCmd(&opts))
	}
	return root
}

// flagError marks a flag error as a usage error, and shortens pflag's
// `invalid argument "x" for "--name" flag: reason` to "--name: reason": the
// flag values' Set methods say what was wrong.
func flagError(cmd *cobra.Command, err error) error {
	if ive, ok := errors.AsType[*pflag.InvalidValueError](err); ok {
		err = fmt.Errorf("--%s: %w", ive.GetFlag().Name, ive.Unwrap())
	}
	return &usageError{cmd: cmd, err: err}
}

// usageArgs marks the errors of an argument check as usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{cmd: cmd, err: err}
		}
		return nil
	}
}
