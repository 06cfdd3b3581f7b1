package soak

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/report"
	"github.com/xdphash/xdphash/runstats"
)

// Errors of a soak run.
var (
	// ErrConfig reports a Config that cannot run.
	ErrConfig = errors.New("invalid soak configuration")
	// ErrNotSupported reports a platform without AF_XDP and veth (not Linux),
	// or a kernel or device without a feature the soak needs. It is
	// internal/kernel's ErrNotSupported, the one identity for a missing
	// feature, so that errors.Is holds for whichever package said it.
	ErrNotSupported = kernel.ErrNotSupported
)

// Defaults of Config.
const (
	DefaultDuration = 30 * time.Second
	DefaultQueues   = 2
	DefaultWorkers  = 2
	DefaultProfile  = "datacenter"
	DefaultConsumer = "fq_codel"
	// DefaultDrainTimeout bounds the wait, after the generator stops, for
	// the frames in flight (veth rings, AF_XDP rings) to reach the engine.
	DefaultDrainTimeout = 5 * time.Second
)

// Config is a soak run. A zero field takes its default.
type Config struct {
	Duration time.Duration // how long the generator sends
	Queues   int           // receive (and transmit) queues of each veth end
	Workers  int           // engine workers
	Profile  string        // pktgen profile: a built-in name or a YAML file
	Rate     float64       // generator frames per second over all threads; 0: as fast as it can
	// RateMax makes a Rate of 0 mean as fast as the generator can in the
	// virtio lab too, where it otherwise takes DefaultVirtioRate.
	RateMax bool
	// ServiceRate is how fast each worker serves its consumer; the zero
	// Rate is as fast as it can.
	ServiceRate queues.Rate
	Consumer    string // queueing discipline behind each worker
	// Mode is the generator's mode; "" takes xdp where the kernel runs XDP
	// programs on live frames, else afxdp.
	Mode pktgen.Mode
	// RingSize is the engine's receive loop -> worker ring size
	// (netdev_max_backlog); 0 takes pipeline.DefaultRingSize.
	RingSize int
	// Threads is the generator's sending threads; 0 takes one per queue, as
	// far as there are CPUs.
	Threads int
	// SampleEvery samples 1 frame in SampleEvery per receive loop for the
	// hash and steering checks; 0 takes pipeline.DefaultSampleEvery.
	SampleEvery int
	// CheckDevice checks every frame against the kernel's own hash: the
	// generator sends through AF_PACKET and the qdisc layer (Mode must be
	// "" or packet), a TCX program on the sending end gives every other
	// frame a hardware VLAN tag, and the engine compares each frame's
	// device hash (on veth, the kernel's skb_get_hash) with its own
	// (pipeline.EngineConfig.CheckDeviceHash).
	CheckDevice bool
	// Descent is the engine's opt-in UDP tunnel descent (veth lab only;
	// not with CheckDevice, whose kernel hash does not descend).
	Descent dissect.Descent
	// Lab is where the pipeline runs: LabVeth ("" too) or LabVirtio, a QEMU
	// guest's virtio-net device; GuestKernel is then the guest kernel series
	// ("" takes virtiolab.DefaultSeries) and GuestBinary the xdphash
	// executable the guest runs ("" takes this process's).
	Lab string
	// Pcap, when set, is a pcap or pcapng file whose frames the generator
	// sends, in order and cycling, instead of Profile's (each frame to the
	// receiver's MAC address; see pktgen.NewCaptureSchedule).
	Pcap                     string
	GuestKernel, GuestBinary string
	// Log, when set, gets the run's steps; Progress, when set, is called
	// about once a second while the generator runs.
	Log      *slog.Logger
	Progress func(Progress)
}

// Progress is the state of a running soak.
type Progress struct {
	Elapsed, Duration time.Duration
	Engine            *runstats.RunStats // the engine's statistics so far (Engine.Stats)
}

// Result is what a soak run measured and how its checks went. WriteFiles
// writes it as checks.json (ChecksFile).
type Result struct {
	Stats     *runstats.RunStats
	Generator pktgen.Report
	Links     LinkDeltas
	Memory    []MemPoint
	Samples   SampleSummary
	Checks    []Check
	// CPU is what the traffic cost, by kind of thread.
	CPU CPUUse
	// Lab is where the pipeline ran (LabVeth, LabVirtio), Duration the
	// generator's planned --duration; Interrupted is set when a signal
	// stopped the soak before it: the checks cover the run so far.
	Lab         string
	Duration    time.Duration
	Interrupted bool
}

// The outcomes of a soak and of each check: one vocabulary for the
// terminal (upper case), the reports and checks.json (lower case).
const (
	StatusPass        = "pass"
	StatusFail        = "fail"
	StatusSkip        = "skip"        // a check that could not judge
	StatusInterrupted = "interrupted" // a soak a signal stopped
)

// Status is the soak's outcome: StatusInterrupted after a signal, else
// StatusFail when a check failed (or there are none), StatusSkip when none
// failed but one could not judge, StatusPass when every check held.
func (r *Result) Status() string {
	failed, skipped := r.Count()
	switch {
	case r.Interrupted:
		return StatusInterrupted
	case failed > 0 || len(r.Checks) == 0:
		return StatusFail
	case skipped > 0:
		return StatusSkip
	}
	return StatusPass
}

// StatusDetail says in words what Status means for this run: how much of
// it ran, and what the checks cover.
func (r *Result) StatusDetail() string {
	failed, skipped := r.Count()
	counts := fmt.Sprintf("%d of %d checks passed, %d failed, %d skipped", len(r.Checks)-failed-skipped, len(r.Checks), failed, skipped)
	if r.Interrupted {
		return fmt.Sprintf("the soak was interrupted after %s of its %s: the checks cover the run so far (%s)",
			r.Generator.Elapsed.Round(time.Millisecond), r.Duration, counts)
	}
	return counts
}

// Upstream is what the generator sent and the drops before the pipeline
// saw the frames, by "stage/reason", for the report's loss summary: a
// veth's refused frames; in the virtio lab, the guest NIC's own drops (the
// tap's refusals are sent again, not lost). The guest's eth0 counts the
// frames XDP could not redirect to AF_XDP in its rx_dropped too, as a veth
// does: those are the kernel's stage, not the NIC's.
func (r *Result) Upstream() *report.Upstream {
	up := &report.Upstream{Sent: r.Generator.Frames, Drops: map[string]uint64{}}
	if r.Lab == LabVirtio {
		var xsk uint64
		if r.Stats != nil {
			for _, q := range r.Stats.Queues {
				xsk += q.Stats.RxDropped + q.Stats.RxInvalidDescs + q.Stats.RxRingFull
			}
		}
		up.Drops["guest/rx_dropped"] = r.Links.HostRxDropped - min(xsk, r.Links.HostRxDropped)
	} else {
		up.Drops["veth/tx_dropped"] = r.Links.PeerTxDropped
	}
	return up
}

// Passed reports whether every check held: none failed and none was
// skipped.
func (r *Result) Passed() bool {
	failed, skipped := r.Count()
	return failed == 0 && skipped == 0 && len(r.Checks) > 0
}

// Count returns how many checks failed and how many could not check.
func (r *Result) Count() (failed, skipped int) {
	for _, c := range r.Checks {
		switch {
		case c.Skipped:
			skipped++
		case !c.Pass:
			failed++
		}
	}
	return failed, skipped
}

// LinkDeltas are the veth counters' changes over the run, as rtnetlink
// reports them: the peer's read inside the namespace.
type LinkDeltas struct {
	PeerTxPackets uint64 `json:"peer_tx_packets"`
	PeerTxDropped uint64 `json:"peer_tx_dropped"`
	HostRxPackets uint64 `json:"host_rx_packets"`
	HostRxDropped uint64 `json:"host_rx_dropped"`
}

// MemPoint is one memory sample, taken once a second while the generator
// runs.
type MemPoint struct {
	ElapsedNs  int64  `json:"elapsed_ns"`
	HeapInuse  uint64 `json:"heap_inuse"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
}

// SampleSummary is what the hash and steering checks looked at.
type SampleSummary struct {
	Taken         uint64 `json:"taken"`   // samples taken during the run
	Checked       int    `json:"checked"` // samples kept and re-checked offline
	HashMismatch  int    `json:"hash_mismatch"`
	SteerMismatch int    `json:"steer_mismatch"`
	Truncated     int    `json:"truncated"`
}

// Check is one verdict. A check that could not judge (too little data)
// is Skipped: it neither passes nor fails. In JSON it is {"name",
// "status", "detail"}, status one of pass, fail, skip.
type Check struct {
	Name    string
	Pass    bool
	Skipped bool
	Detail  string
}

// Status is StatusPass, StatusFail or StatusSkip.
func (c Check) Status() string {
	switch {
	case c.Skipped:
		return StatusSkip
	case c.Pass:
		return StatusPass
	}
	return StatusFail
}

// Verdict is Status in upper case, as the terminal prints it: PASS, FAIL or
// SKIP.
func (c Check) Verdict() string { return strings.ToUpper(c.Status()) }

type checkJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// What checks.json of version 1 had instead of Status.
	Pass    *bool `json:"pass,omitempty"`
	Skipped bool  `json:"skipped,omitempty"`
}

// MarshalJSON writes c as {"name", "status", "detail"}.
func (c Check) MarshalJSON() ([]byte, error) {
	return json.Marshal(checkJSON{Name: c.Name, Status: c.Status(), Detail: c.Detail})
}

// UnmarshalJSON reads a check of checks.json, of version 2 (status) or 1
// (pass and skipped).
func (c *Check) UnmarshalJSON(b []byte) error {
	var j checkJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Check{Name: j.Name, Detail: j.Detail}
	switch {
	case j.Status == StatusPass:
		c.Pass = true
	case j.Status == StatusSkip:
		c.Skipped = true
	case j.Status == StatusFail:
	case j.Status == "" && j.Pass != nil:
		c.Pass, c.Skipped = *j.Pass, j.Skipped
	default:
		return fmt.Errorf("check %q: status %q, want %s, %s or %s", j.Name, j.Status, StatusPass, StatusFail, StatusSkip)
	}
	return nil
}
