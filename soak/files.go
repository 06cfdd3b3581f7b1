package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/xdphash/xdphash/report"
)

// Files a soak run writes into its output directory.
const (
	FileRun        = "run.json"    // the engine's RunStats, as xdphash report reads them
	FileReportText = "report.txt"  // report.WriteText
	FileReportHTML = "report.html" // report.WriteHTML
	FileChecks     = "checks.json" // the checks, the generator, link counters, memory
)

// WriteFiles writes the run's statistics, reports and checks into dir,
// creating it.
func (r *Result) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	var files []struct {
		name string
		data []byte
	}
	add := func(name string, write func(*bytes.Buffer) error) error {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		files = append(files, struct {
			name string
			data []byte
		}{name, b.Bytes()})
		return nil
	}
	indent := func(v any) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		}
	}
	if r.Stats != nil {
		if err := add(FileRun, indent(r.Stats)); err != nil {
			return err
		}
		if err := add(FileReportText, func(b *bytes.Buffer) error { return report.WriteText(b, r.Stats) }); err != nil {
			return err
		}
		if err := add(FileReportHTML, func(b *bytes.Buffer) error { return report.WritePage(b, r.Stats, r.page()) }); err != nil {
			return err
		}
	}
	if err := add(FileChecks, indent(struct {
		Passed bool `json:"passed"`
		*Result
	}{r.Passed(), r})); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// page is what the HTML report shows of the soak beyond the run: the
// generator and every check.
func (r *Result) page() report.Page {
	g := r.Generator
	p := report.Page{
		Title: "xdphash soak",
		Facts: []string{fmt.Sprintf("Generator: profile %s, mode %s, %d threads: %d frames in %.3f s, %.3f Mpps, %.3f Gbit/s.",
			g.Profile, g.Mode, len(g.Threads), g.Frames, g.Elapsed.Seconds(), g.PPS()/1e6, g.BitsPerSecond()/1e9)},
	}
	for _, c := range r.Checks {
		p.Checks = append(p.Checks, report.Check{Verdict: c.Verdict(), Name: c.Name, Detail: c.Detail})
	}
	return p
}
