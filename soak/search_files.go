package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/xdphash/xdphash/report"
	"github.com/xdphash/xdphash/runstats"
)

// FileSearch is the file a search writes besides run.json and the reports:
// its record and each trial's checks.
const FileSearch = "search.json"

// WriteFiles writes the search into dir, creating it: run.json (the
// statistics of the trial that stands for the search, with the search's
// record), report.txt and report.html from them, and search.json. Without
// any trial's statistics (a search stopped in its first trial) only
// search.json.
func (s *SearchResult) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	type file struct {
		name  string
		write func(*bytes.Buffer) error
	}
	indent := func(v any) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		}
	}
	checks := make([][]Check, len(s.Trials))
	for i, t := range s.Trials {
		checks[i] = t.Checks
	}
	files := []file{{FileSearch, indent(struct {
		*runstats.SearchReport
		Checks [][]Check `json:"checks"` // each trial's soak checks, in trial order
	}{&s.Report, checks})}}
	if st := s.Stats(); st != nil {
		files = append(files,
			file{FileRun, indent(st)},
			file{FileReportText, func(b *bytes.Buffer) error { return report.WriteText(b, st) }},
			file{FileReportHTML, func(b *bytes.Buffer) error { return report.WritePage(b, st, s.page()) }})
	}
	// Render everything first: a failure leaves no partial set of files.
	out := make([][]byte, len(files))
	for i, f := range files {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		out[i] = b.Bytes()
	}
	for i, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), out[i], 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// page is the HTML report's title and facts: which trial the statistics
// are, and its checks.
func (s *SearchResult) page() report.Page {
	p := report.Page{Title: "xdphash soak --search"}
	i := s.Report.StatsTrial
	if i < 0 || i >= len(s.Trials) {
		return p
	}
	t := s.Report.Trials[i]
	g := s.Trials[i].Generator
	p.Facts = []string{fmt.Sprintf("The statistics below are trial %d's: %.0f frames per second asked, %d frames sent in %.3f s (%.3f Mpps, %.3f Gbit/s; profile %s, mode %s, %d threads).",
		i, t.Rate, g.Frames, g.Elapsed.Seconds(), g.PPS()/1e6, g.BitsPerSecond()/1e9, g.Profile, g.Mode, len(g.Threads))}
	for _, c := range s.Trials[i].Checks {
		p.Checks = append(p.Checks, report.Check{Verdict: c.Verdict(), Name: c.Name, Detail: c.Detail})
	}
	return p
}
