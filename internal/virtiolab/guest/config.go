// Package guest is the virtio lab's side inside the QEMU guest: the /init
// that mounts the pseudo file systems, loads the guest kernel's virtio-net
// modules, configures the interface (queues, rxhash), runs the workload
// the lab asked for, sends its results back on the second serial port and
// powers the guest off. xdphash runs it when it is the guest's /init
// (IsInit); the lab's host side (package virtiolab) writes Config into the
// initramfs and reads Report back.
package guest

import "time"

// Paths and markers shared by the two sides.
const (
	// ConfigPath is where the lab puts the guest's Config in the initramfs.
	ConfigPath = "/xdphash-lab/config.json"
	// InitPath is the guest's /init: the executable the lab copied in.
	InitPath = "/init"
	// ResultsPort is the serial port the results go out on: a cpio archive,
	// gzipped, of ReportName and the steps' files.
	ResultsPort = "/dev/ttyS1"
	// ReportName is the Report's name in the results archive.
	ReportName = "report.json"
	// ReadyMarker starts the console line the guest prints when a step is
	// ready for traffic.
	ReadyMarker = "virtiolab: ready"
	// RSSMarker starts the console line the guest prints just before
	// ReadyMarker: the device's RSS configuration then (RSSState, as JSON),
	// from which the host knows each frame's receive queue.
	RSSMarker = "virtiolab: rss "
	// StopCommand starts the console line (the host writes it to QEMU's
	// stdin, the guest's ttyS0) that stops the step waiting for it: "stop
	// N", N the frames the host sent, which the guest waits to see on its
	// interface first.
	StopCommand = "stop"
)

// Config is what the guest does.
type Config struct {
	// Modules are the kernel modules to load, in order (paths in the
	// initramfs, .ko or .ko.xz).
	Modules []string
	// Iface is the interface to configure ("eth0").
	Iface string
	// Queues is the combined channel count to set (0: leave it).
	Queues int
	// RXHash turns the device's receive hash on (ethtool -K IF rxhash on).
	RXHash bool
	// RSS, when set, is given to the device before the steps.
	RSS *RSS `json:",omitempty"`
	// Steps run in order.
	Steps []Step
}

// RSS is an RSS configuration the guest sets on its device: the key and
// table (ETHTOOL_SRSSH; nil leaves either as it is), then the hash fields of
// some flow types (ETHTOOL_SRXFH), each set on its own: what the device
// answered goes into Iface.FieldsSet, and a refusal is no error of the lab.
type RSS struct {
	Key    []byte       `json:"key,omitempty"`
	Table  []uint32     `json:"table,omitempty"`
	Fields []FlowFields `json:"fields,omitempty"`
}

// FlowFields are the RXH_* bits (kernel.RXHashFields) of an ethtool flow
// type (kernel.RSSFlowType).
type FlowFields struct {
	Flow   uint32 `json:"flow"`
	Fields uint64 `json:"fields"`
}

// RSSState is the device's RSS configuration when a receiving step is
// ready: the key (hex), the indirection table and the RXH_* bits of each
// flow type (tcp4, udp4, tcp6, udp6) that the device reported.
type RSSState struct {
	Key    string            `json:"key"`
	Table  []uint32          `json:"table"`
	Fields map[string]uint64 `json:"fields"`
}

// Step is one command the guest runs.
type Step struct {
	// Args is the command line; Args[0] is a path in the guest.
	Args []string
	// Ready, when set, makes the step a receiver: once a line of its stderr
	// contains Ready, the guest re-sets the device's RSS key and table
	// (ResetRSS), prints ReadyMarker and waits for StopCommand; then it
	// waits until the interface has received the frames the host sent (for
	// two minutes at most) and has gone quiet, and stops the step: by
	// closing its standard input when StopOnEOF (xdphash run --stop-on-eof,
	// which then ends as asked, exit 0), with SIGINT otherwise (StoppedExit).
	// A step the guest must stop for another reason (a timeout) gets SIGINT
	// and an Error. Without Ready the step runs to its end.
	Ready     string
	ResetRSS  bool
	StopOnEOF bool
	// Metrics, when set, is the URL of a receiving step's Prometheus
	// metrics (xdphash run --metrics-addr): the guest reads the step's Go
	// memory and goroutines there once a second, from ready until the
	// host's stop, into StepReport.Memory.
	Metrics string
	// Timeout bounds the step (guest time); 0 takes two minutes.
	Timeout time.Duration
	// Files are files the step writes that go back to the host.
	Files []string
}

// Report is what the guest sends back.
type Report struct {
	Kernel string `json:"kernel"` // uname -r
	// InitUptime is the guest's uptime when /init began, IfaceUp when the
	// interface was up and configured.
	InitUptime time.Duration `json:"init_uptime_ns"`
	IfaceUp    time.Duration `json:"iface_up_ns"`
	Iface      Iface         `json:"iface"`
	Steps      []StepReport  `json:"steps"`
	Error      string        `json:"error,omitempty"`
}

// Iface is what the guest found of its interface.
type Iface struct {
	Name        string   `json:"name"`
	MaxCombined int      `json:"max_combined"`
	Combined    int      `json:"combined"`
	RXHash      bool     `json:"rxhash"`
	RSSKey      string   `json:"rss_key,omitempty"`   // hex
	RSSTable    []uint32 `json:"rss_table,omitempty"` // after the last ResetRSS
	// FieldsSet is what the device answered to each of RSS.Fields, in
	// order: "" for taken, else the error; HashFields the RXH_* bits of
	// tcp4, udp4, tcp6 and udp6 read back after setup (ETHTOOL_GRXFH).
	FieldsSet  []string          `json:"fields_set,omitempty"`
	HashFields map[string]uint64 `json:"hash_fields,omitempty"`
	Before     map[string]uint64 `json:"before"` // /sys/class/net/IF/statistics before the steps
	After      map[string]uint64 `json:"after"`  // and after
	// DriverBefore and DriverAfter are the driver's own counters (ethtool
	// -S) before and after the steps.
	DriverBefore map[string]uint64 `json:"driver_before,omitempty"`
	DriverAfter  map[string]uint64 `json:"driver_after,omitempty"`
}

// StoppedExit is the exit status of a receiving step stopped with SIGINT:
// xdphash's status after an interrupt (it writes what it measured first).
// A step stopped through its input (Step.StopOnEOF) exits 0.
const StoppedExit = 130

// StepReport is how a step went.
type StepReport struct {
	Args     []string      `json:"args"`
	Exit     int           `json:"exit"` // exit status; -1 when killed or not started
	Error    string        `json:"error,omitempty"`
	Ready    time.Duration `json:"ready_ns,omitempty"` // guest uptime when ready
	Stdout   string        `json:"stdout"`
	Stderr   string        `json:"stderr"` // its last lines
	Received uint64        `json:"iface_rx_packets"`
	// Memory is what Step.Metrics said, once a second.
	Memory []MemSample `json:"memory,omitempty"`
	// MemoryErrors counts the reads of Step.Metrics that failed; MemoryError
	// is the first failure.
	MemoryErrors int    `json:"memory_errors,omitempty"`
	MemoryError  string `json:"memory_error,omitempty"`
}

// MemSample is a receiving step's memory at a moment of guest uptime: the Go
// runtime's figures that its metrics export (go_memstats_heap_inuse_bytes,
// go_memstats_sys_bytes, go_goroutines).
type MemSample struct {
	Uptime     time.Duration `json:"uptime_ns"`
	HeapInuse  uint64        `json:"heap_inuse"`
	Sys        uint64        `json:"sys"`
	Goroutines int           `json:"goroutines"`
}
