package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/xdphash/xdphash/bench"
	"github.com/xdphash/xdphash/internal/kernel"
)

func init() { subcommands = append(subcommands, newBenchCmd) }

func newBenchCmd(root *rootOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure xdphash's hot paths on this machine",
	}
	var (
		rounds  int
		perTime time.Duration
		jsonOut string
		descent descentFlags
	)
	dissectCmd := &cobra.Command{
		Use:   "dissect",
		Short: "A/B table: slow path, fast paths and gopacket on the same frames",
		Long: `Bench dissect runs one frame per fast-path shape, and the all-shapes mix,
through the slow path, the fast paths (a Dissector with every gate open) and
gopacket's DecodingLayerParser with a 5-tuple extracted. The contenders are
measured round by round, interleaved, so the machine's noise hits them alike;
the table gives medians. It also measures what an open gate costs on a frame of
its class that its fast path declines.

--descend (with --fou-port and --gue-port) runs the slow path and the
Dissectors under the opt-in UDP tunnel descent; with vxlan or gtpu in it, their
shapes' frames are cases and their near misses decline rows.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			policy, err := descent.policy()
			if err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			var jsonFile *pendingOutput
			if jsonOut != "" {
				f, err := createOutput(jsonOut)
				if err != nil {
					return err
				}
				defer f.Abort()
				jsonFile = f
			}
			rep := bench.Dissect(bench.Options{Rounds: rounds, PerTime: perTime, Descent: policy})
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "machine: %s; %d CPUs; kernel %s; %s\n\n", kernel.CPUModel(), runtime.NumCPU(), kernel.Release(), runtime.Version())
			if err := bench.WriteTable(out, rep); err != nil {
				return err
			}
			if jsonOut != "" {
				b, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				if err := jsonFile.Commit(append(b, '\n')); err != nil {
					return err
				}
			}
			return nil
		},
	}
	dissectCmd.Flags().IntVar(&rounds, "rounds", 7, "interleaved rounds (at least 5); medians are reported")
	dissectCmd.Flags().DurationVar(&perTime, "per", 50*time.Millisecond, "time of one measurement")
	dissectCmd.Flags().StringVar(&jsonOut, "json", "", "also write the results as JSON to this file")
	descent.register(dissectCmd.Flags())
	cmd.AddCommand(dissectCmd)
	return cmd
}
