package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/xdphash/xdphash/internal/output"
	"github.com/xdphash/xdphash/report"
	"github.com/xdphash/xdphash/runstats"
)

func init() { subcommands = append(subcommands, newReportCmd) }

// reportOptions are the flags of xdphash report.
type reportOptions struct {
	html, json string
}

func newReportCmd(*rootOptions) *cobra.Command {
	var opts reportOptions
	cmd := &cobra.Command{
		Use:   "report RUN.json",
		Short: "Report how fairly a run spread its traffic over queues, workers and flows",
		Long: `Report reads the statistics of a run (xdphash run --out RUN.json, or - for
stdin) and prints first what was lost: the share of the frames the receive
queues saw that the kernel, the worker rings and the consumers dropped, per
queue and per worker, each reason with its meaning. Then how fairly the hash
spread the traffic: over the receive
queues (RSS) and the workers (RPS), each set beside what hashing that many
equal flows gives on average (balls into bins), with a verdict on whether an
imbalance is the hash's fault or the traffic's; and over the flows inside each
worker's queueing discipline (fq, fq_codel): Jain's index, slot collisions
against their expectation, the heaviest flows, drops, CE marks and sojourn
times.

--html writes the same as one self-contained HTML page with charts (inline
SVG, nothing loaded from the network), among them the throughput per queue
and per worker over the run's windows and the drops per stage; --json writes
the computed measures (schema in docs/report-schema.md).`,
		Example: `  xdphash run --synthetic datacenter --consumer fq_codel --virtual-clock --count 200000 --out run.json
  xdphash report run.json --html report.html --json measures.json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, args[0], &opts)
		},
	}
	cmd.Flags().StringVar(&opts.html, "html", "", "also write the report as a self-contained HTML page to this file")
	cmd.Flags().StringVar(&opts.json, "json", "", "also write the computed measures as JSON to this file")
	return cmd
}

func runReport(cmd *cobra.Command, path string, opts *reportOptions) error {
	if err := checkFiles([]string{"RUN.json", path}, []string{"--html", opts.html, "--json", opts.json}); err != nil {
		return err
	}
	st, err := readRunFile(cmd.InOrStdin(), path)
	if err != nil {
		return err
	}
	m := report.Compute(st)
	// The files first: a reader who pipes the text into head still gets them.
	if opts.html != "" {
		if err := writeFile(opts.html, m.WriteHTML); err != nil {
			return err
		}
	}
	if opts.json != "" {
		if err := writeFile(opts.json, m.WriteJSON); err != nil {
			return err
		}
	}
	if err := m.WriteText(cmd.OutOrStdout()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// readRunFile reads run statistics from path, or from stdin for "-".
func readRunFile(stdin io.Reader, path string) (*runstats.RunStats, error) {
	if path == "-" {
		return report.Read(stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open run statistics: %w (hint: write them with xdphash run --out FILE)", err)
	}
	defer f.Close()
	st, err := report.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// writeFile creates path and writes it with write; a failed write leaves
// what was at path as it was.
func writeFile(path string, write func(io.Writer) error) error {
	return output.WriteWith(path, write)
}
