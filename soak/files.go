package soak

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
		if err := add(FileReportText, func(b *bytes.Buffer) error { return report.WriteTextPage(b, r.Stats, r.page()) }); err != nil {
			return err
		}
		if err := add(FileReportHTML, func(b *bytes.Buffer) error { return report.WritePage(b, r.Stats, r.page()) }); err != nil {
			return err
		}
	}
	if err := add(FileChecks, indent(r.ChecksFile())); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// page is what the reports show of the soak beyond the run: its status,
// what the generator sent (the loss is of those frames), the generator's
// threads and every check.
func (r *Result) page() report.Page {
	g := r.Generator
	p := report.Page{
		Title:  "xdphash soak",
		Status: strings.ToUpper(r.Status()), StatusDetail: r.StatusDetail(),
		Facts: []string{fmt.Sprintf("Generator: profile %s, mode %s, %d threads: %d frames in %.3f s, %.3f Mpps, %.3f Gbit/s.",
			g.Profile, g.Mode, len(g.Threads), g.Frames, g.Elapsed.Seconds(), g.PPS()/1e6, g.BitsPerSecond()/1e9)},
		Upstream: r.Upstream(),
	}
	gen := report.Section{Heading: "Generator", Header: []string{"thread", "cpu", "queue", "frames", "bytes", "seconds", "Mpps", "Gbit/s"}}
	for _, t := range g.Threads {
		queue := "-"
		if t.Queue >= 0 {
			queue = strconv.Itoa(t.Queue)
		}
		gen.Rows = append(gen.Rows, []string{strconv.Itoa(t.Thread), strconv.Itoa(t.CPU), queue, strconv.FormatUint(t.Frames, 10),
			strconv.FormatUint(t.Bytes, 10), fmt.Sprintf("%.3f", t.Elapsed.Seconds()), fmt.Sprintf("%.3f", t.PPS()/1e6), fmt.Sprintf("%.3f", t.BitsPerSecond()/1e9)})
	}
	gen.Lines = append(gen.Lines, fmt.Sprintf("profile %s, mode %s, on %s: %d frames, %d bytes in %.3f s of the planned %s",
		g.Profile, g.Mode, cmp.Or(g.Iface, "?"), g.Frames, g.Bytes, g.Elapsed.Seconds(), r.Duration))
	gen.Lines = append(gen.Lines, g.Warnings...)
	p.Sections = append(p.Sections, gen)
	for _, c := range r.Checks {
		p.Checks = append(p.Checks, report.Check{Verdict: c.Verdict(), Name: c.Name, Detail: c.Detail})
	}
	return p
}

// ChecksSchemaVersion is the version of checks.json (ChecksFile). Version
// 1, without the field, had "passed" (false for a skip) and the
// generator's Go field names with durations in nanoseconds.
const ChecksSchemaVersion = 2

// ChecksFile is checks.json: the soak's outcome, its checks, what the
// generator sent, the link counters, the memory samples and the hash
// samples. Every field is snake_case, every quantity with its unit.
type ChecksFile struct {
	SchemaVersion int `json:"schema_version"`
	// Status is StatusPass, StatusFail, StatusSkip or StatusInterrupted
	// (Result.Status), StatusDetail the same in words.
	Status          string  `json:"status"`
	StatusDetail    string  `json:"status_detail"`
	Interrupted     bool    `json:"interrupted"`
	Lab             string  `json:"lab"`
	DurationSeconds float64 `json:"duration_seconds"` // the planned --duration
	ElapsedSeconds  float64 `json:"elapsed_seconds"`  // how long the generator sent
	// Counts is the checks by status: pass, fail, skip.
	Counts    map[string]int `json:"counts"`
	Checks    []Check        `json:"checks"`
	Generator GeneratorJSON  `json:"generator"`
	Links     LinkDeltas     `json:"links"`
	Memory    []MemJSON      `json:"memory"`
	Samples   SampleSummary  `json:"samples"`
}

// GeneratorJSON is checks.json's account of the generator (pktgen.Report).
type GeneratorJSON struct {
	Profile         string       `json:"profile"`
	Mode            string       `json:"mode"`
	Iface           string       `json:"iface"`
	Frames          uint64       `json:"frames"`
	Bytes           uint64       `json:"bytes"`
	ElapsedSeconds  float64      `json:"elapsed_seconds"`
	FramesPerSecond float64      `json:"frames_per_second"`
	BitsPerSecond   float64      `json:"bits_per_second"`
	LinkTxPackets   uint64       `json:"link_tx_packets"`
	LinkTxDropped   uint64       `json:"link_tx_dropped"`
	LinkValid       bool         `json:"link_valid"`
	Threads         []ThreadJSON `json:"threads"`
	Warnings        []string     `json:"warnings"`
}

// ThreadJSON is one generator thread (pktgen.ThreadReport); Queue is -1
// where the kernel picked it.
type ThreadJSON struct {
	Thread          int     `json:"thread"`
	CPU             int     `json:"cpu"`
	Queue           int     `json:"queue"`
	Frames          uint64  `json:"frames"`
	Bytes           uint64  `json:"bytes"`
	ElapsedSeconds  float64 `json:"elapsed_seconds"`
	FramesPerSecond float64 `json:"frames_per_second"`
}

// MemJSON is one memory sample (MemPoint).
type MemJSON struct {
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	HeapInuseBytes uint64  `json:"heap_inuse_bytes"`
	SysBytes       uint64  `json:"sys_bytes"`
	Goroutines     int     `json:"goroutines"`
}

// ChecksFile is r as checks.json holds it.
func (r *Result) ChecksFile() ChecksFile {
	g := r.Generator
	f := ChecksFile{
		SchemaVersion: ChecksSchemaVersion, Status: r.Status(), StatusDetail: r.StatusDetail(), Interrupted: r.Interrupted,
		Lab: cmp.Or(r.Lab, LabVeth), DurationSeconds: r.Duration.Seconds(), ElapsedSeconds: g.Elapsed.Seconds(),
		Counts: map[string]int{StatusPass: 0, StatusFail: 0, StatusSkip: 0}, Checks: r.Checks,
		Generator: GeneratorJSON{
			Profile: g.Profile, Mode: string(g.Mode), Iface: g.Iface, Frames: g.Frames, Bytes: g.Bytes,
			ElapsedSeconds: g.Elapsed.Seconds(), FramesPerSecond: g.PPS(), BitsPerSecond: g.BitsPerSecond(),
			LinkTxPackets: g.LinkTxPackets, LinkTxDropped: g.LinkTxDropped, LinkValid: g.LinkValid,
			Threads: []ThreadJSON{}, Warnings: append([]string{}, g.Warnings...),
		},
		Links: r.Links, Memory: []MemJSON{}, Samples: r.Samples,
	}
	if f.Checks == nil {
		f.Checks = []Check{}
	}
	for _, c := range r.Checks {
		f.Counts[c.Status()]++
	}
	for _, t := range g.Threads {
		f.Generator.Threads = append(f.Generator.Threads, ThreadJSON{Thread: t.Thread, CPU: t.CPU, Queue: t.Queue, Frames: t.Frames, Bytes: t.Bytes,
			ElapsedSeconds: t.Elapsed.Seconds(), FramesPerSecond: t.PPS()})
	}
	for _, m := range r.Memory {
		f.Memory = append(f.Memory, MemJSON{ElapsedSeconds: float64(m.ElapsedNs) / 1e9, HeapInuseBytes: m.HeapInuse, SysBytes: m.Sys, Goroutines: m.Goroutines})
	}
	return f
}
