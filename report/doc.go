// Package report turns the run statistics `xdphash run --out` writes
// ([runstats.RunStats]) into fairness measures ([Compute], [Measures]) and
// renders them: a terminal table ([WriteText]), one self-contained HTML page
// of charts drawn with gonum/plot as inline SVG ([WriteHTML]), or JSON
// ([WriteJSON]). [WriteSummary] writes the tables `xdphash run` and `xdphash
// soak` print at the end of a run, [WriteShapes] the dissector's counters.
//
// Every report opens with what was lost ([Loss], [WriteLoss]): the share of
// the frames offered (sent, where the command that made the run knows it:
// [Upstream]) that each stage dropped, per receive queue and per worker,
// each reason with its one-line meaning ([DropMeaning]). [WritePage] and
// [WriteTextPage] add what such a command knows beyond the run: its status,
// its sections and its checks.
//
// A report answers three questions about how fairly a hash spread the
// traffic: across receive queues (a NIC's RSS), across workers (RPS), and
// across flows inside each worker's queueing discipline (fq, fq_codel). For
// queues and workers it sets the measured imbalance beside what hashing F
// equal flows into N bins gives on average (balls into bins), so that a
// reader can tell an imbalance the hash causes from one the traffic brings.
//
// # Measures JSON
//
// [WriteJSON] writes [Measures], versioned by its schema_version
// ([SchemaVersion]); docs/report-schema.md describes every field. Adding a
// field keeps the version, changing or removing one bumps it.
package report
