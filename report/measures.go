package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/fairness"
	"github.com/xdphash/xdphash/runstats"
)

// SchemaVersion is the version of the Measures JSON. Bump it when a field
// changes meaning or disappears; adding fields keeps it.
const SchemaVersion = 1

// A measured max/mean counts as what hashing gives while its excess over 1
// is at most excessTolerance times the expected excess, plus excessSlack:
// the expectation is a mean and single runs scatter around it. For two bins
// of equal flows the excess is half-normal, and exceeds 2.5 times its mean
// about one run in twenty; with more bins the maximum scatters less.
const (
	excessTolerance = 2.5
	excessSlack     = 0.005
)

// asExpected reports whether a measured max/mean is within what hashing
// gives, expected on average.
func asExpected(measured, expected float64) bool {
	return measured-1 <= excessTolerance*(expected-1)+excessSlack
}

// maxTop is the top flows a ConsumerMeasures keeps.
const maxTop = 10

// Measures is what a report says about one run.
type Measures struct {
	SchemaVersion    int     `json:"schema_version"`
	RunSchemaVersion int     `json:"run_schema_version"`
	Run              RunInfo `json:"run"`
	// Flows is the run's distinct flows: the sum of each worker's active
	// flows (RPS steers a flow to one worker), estimated when large.
	Flows int `json:"flows"`

	// Queues is the load of the receive queues (one per queue), Workers
	// the load that reached each worker (taken off its rings: what the
	// steering gave it, less ring and flow limit drops), and WorkerFlows
	// the flows each worker served.
	Queues      Spread `json:"queues"`
	Workers     Spread `json:"workers"`
	WorkerFlows Spread `json:"worker_flows"`

	// Consumers describes the flows inside each worker's consumer.
	Consumers []ConsumerMeasures `json:"consumers"`

	// Drops are the run's drops by "stage/reason", kernel drops as
	// "kernel/REASON"; Received and Processed as in the run's accounting.
	Drops     map[string]uint64 `json:"drops"`
	Received  uint64            `json:"received"`
	Processed uint64            `json:"processed"`
	Unserved  uint64            `json:"unserved"` // held in a consumer at the end
	Balanced  bool              `json:"balanced"`

	// Loss is where the frames offered to the run were lost, by stage,
	// queue and worker, as shares of them.
	Loss Loss `json:"loss"`

	// Timeline is the run's windows: load, backlog and drops over time.
	Timeline []Window `json:"timeline,omitempty"`

	// Notes are observations a reader should not miss.
	Notes []string `json:"notes,omitempty"`

	// Steering is the indirection table's measures of a --steer reta run.
	Steering *SteeringMeasures `json:"steering,omitempty"`

	// Search is the rate search the run is a trial of (soak --search).
	Search *runstats.SearchReport `json:"search,omitempty"`
}

// RunInfo is how the run was set up.
type RunInfo struct {
	Source      string        `json:"source"`
	Hash        string        `json:"hash"`
	Steer       string        `json:"steer"`
	Consumer    string        `json:"consumer"`
	ServiceRate string        `json:"service_rate,omitempty"`
	Started     time.Time     `json:"started"`
	DurationNs  int64         `json:"duration_ns"`
	WindowNs    int64         `json:"window_ns"` // the length of each Window
	Host        runstats.Host `json:"host"`
	QueueSpread string        `json:"queue_spread,omitempty"`
	// Descent is the opt-in UDP tunnel descent the run's dissectors used
	// (run.json's config.descent, dissect.Descent's String), "none" when
	// off; Descended the frames they descended into each tunnel.
	Descent   string               `json:"descent"`
	Descended dissect.TunnelCounts `json:"descended"`
}

// Spread is how a load is spread over N bins (queues or workers).
type Spread struct {
	Packets []uint64 `json:"packets"`
	Bytes   []uint64 `json:"bytes"`
	// Jain's index and max/mean of Bytes (of Packets for WorkerFlows, whose
	// Bytes are empty); 0 when there is no load.
	Jain    float64 `json:"jain"`
	MaxMean float64 `json:"max_mean"`
	// JainPackets and MaxMeanPackets are the same of Packets.
	JainPackets    float64 `json:"jain_packets"`
	MaxMeanPackets float64 `json:"max_mean_packets"`
	// Flows is the F of the expectations: flows hashed into the bins.
	Flows int `json:"flows"`
	// ExpectedMaxMean and ExpectedJain are what hashing Flows equal flows
	// uniformly into the bins gives on average (fairness.ExpectedMaxMean,
	// fairness.ExpectedJain); 0 when the flows are not known (fifo).
	ExpectedMaxMean float64 `json:"expected_max_mean"`
	ExpectedJain    float64 `json:"expected_jain"`
	// Verdict says in words whether the imbalance is what hashing gives,
	// the hash's fault, or the traffic's.
	Verdict string `json:"verdict"`
}

// ConsumerMeasures are the flows inside one worker's consumer.
type ConsumerMeasures struct {
	Worker  int    `json:"worker"`
	Packets uint64 `json:"packets"` // served
	Bytes   uint64 `json:"bytes"`   // served (taken, when the run has no windows)
	// Flows is the flows served (distinct hashes, estimated when large);
	// Slots the consumer's flow slots; Buckets and Served the slots that
	// served traffic (the consumers count served packets only).
	Flows   int `json:"flows"`
	Slots   int `json:"slots"`
	Buckets int `json:"buckets"`
	Served  int `json:"served"`
	// ReachableSlots is the slots this worker's flows can reach: fewer
	// than Slots when the steering and the consumer read the same bits of
	// the hash (see reachableSlots).
	ReachableSlots int `json:"reachable_slots"`
	// Collisions is the slots that served more than one flow, and
	// ExpectedCollisions what Flows flows hashed into ReachableSlots give.
	Collisions         int     `json:"collisions"`
	ExpectedCollisions float64 `json:"expected_collisions"`
	// Jain is Jain's index of the bytes the served slots got; MaxShare
	// the largest slot's share, against the fair share 1/Served.
	Jain      float64 `json:"jain"`
	MaxShare  float64 `json:"max_share"`
	FairShare float64 `json:"fair_share"`
	// Shares is every served slot's share of the bytes, largest first
	// (capped at 1024).
	Shares []float64 `json:"shares,omitempty"`
	// Drops by "stage/reason" (ring, worker, consumer), CE marks, the
	// largest backlog, and the sojourn percentiles in the consumer (ns).
	Drops      map[string]uint64 `json:"drops"`
	CEMarks    uint64            `json:"ce_marks"`
	MaxBacklog int               `json:"max_backlog"`
	SojournNs  map[string]int64  `json:"sojourn_ns,omitempty"`
	// Top is the heaviest flows, heaviest first.
	Top []runstats.TopFlow `json:"top,omitempty"`
}

// Window is one window of the run's timeline.
type Window struct {
	StartNs       int64    `json:"start_ns"`
	QueuePackets  []uint64 `json:"queue_packets"`
	WorkerPackets []uint64 `json:"worker_packets"`
	WorkerBacklog []int    `json:"worker_backlog"`
	WorkerDrops   []uint64 `json:"worker_drops"`
	// KernelDrops is the drops before the receive loops, all queues
	// together: the kernel's, or a capture replay's; QueueKernelDrops the
	// same per receive queue.
	KernelDrops      uint64   `json:"kernel_drops"`
	QueueKernelDrops []uint64 `json:"queue_kernel_drops,omitempty"`
}

// Read decodes run statistics written by `xdphash run --out`, at most
// MaxRunBytes of them, and checks that they hold together (see check).
func Read(r io.Reader) (*runstats.RunStats, error) {
	var st runstats.RunStats
	dec := json.NewDecoder(io.LimitReader(r, MaxRunBytes+1))
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("read run statistics: %w", decodeError(err, dec.InputOffset()))
	}
	if dec.More() {
		return nil, fmt.Errorf("read run statistics: %w: more data after the statistics, at byte %d (want the one JSON object xdphash run --out writes)", ErrRun, dec.InputOffset())
	}
	if st.SchemaVersion != runstats.SchemaVersion {
		return nil, fmt.Errorf("read run statistics: %w: version %d, want %d (hint: report with the xdphash that ran)", ErrSchema, st.SchemaVersion, runstats.SchemaVersion)
	}
	if err := check(&st); err != nil {
		return nil, fmt.Errorf("read run statistics: %w: %w", ErrRun, err)
	}
	return &st, nil
}

// WriteJSON writes the measures of st as indented JSON.
func WriteJSON(w io.Writer, st *runstats.RunStats) error {
	m := Compute(st)
	return m.WriteJSON(w)
}

// WriteJSON writes m, indented.
func (m *Measures) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("write measures: %w", err)
	}
	return nil
}

// Compute works out the measures of a run.
func Compute(st *runstats.RunStats) Measures {
	m := Measures{
		SchemaVersion:    SchemaVersion,
		RunSchemaVersion: st.SchemaVersion,
		Run: RunInfo{
			Source: st.Config.Source, Hash: st.Config.Hash, Steer: st.Config.Steer, Consumer: st.Config.Consumer,
			ServiceRate: st.Config.ServiceRate, Started: st.Started, DurationNs: st.DurationNs, WindowNs: st.Config.WindowNs,
			Host: st.Host, QueueSpread: st.Config.QueueSpread,
			Descent: cmp.Or(st.Config.Descent, "none"), Descended: st.Shapes.Descended,
		},
		Drops:     map[string]uint64{},
		Received:  st.Accounting.Received,
		Processed: st.Accounting.Processed,
		Unserved:  st.Accounting.Unserved,
		Balanced:  st.Accounting.Balanced,
		Steering:  computeSteering(st),
		Loss:      computeLoss(st, nil),
		Search:    st.Search,
	}
	for reason, n := range st.Accounting.Dropped {
		m.Drops[string(reason)] += n
	}
	for reason, n := range st.Accounting.KernelDrops {
		m.Drops["kernel/"+reason] += n
	}
	for reason, n := range st.Accounting.ReplayDrops {
		m.Drops["replay/"+reason] += n
	}

	var qp, qb, wp, wb, wf []uint64
	for _, q := range st.Queues {
		qp, qb = append(qp, q.Stats.Frames), append(qb, q.Stats.Bytes)
	}
	for i := range st.Workers {
		w := &st.Workers[i]
		wp, wb, wf = append(wp, w.Packets), append(wb, w.Bytes), append(wf, uint64(w.Consumer.Flows.Active))
		m.Flows += w.Consumer.Flows.Active
		reach := reachableSlots(st.Config.Steer, st.Config.Consumer, len(st.Workers), w.Consumer.Flows.Slots)
		m.Consumers = append(m.Consumers, consumerMeasures(w, servedBytes(st, i), reach))
	}
	if c := m.Consumers; len(c) > 0 && c[0].ReachableSlots < c[0].Slots {
		m.Notes = append(m.Notes, fmt.Sprintf("%s steering and %s read the same bits of the hash: the flows of one worker reach only about %d of its consumer's %d slots, and collide as if it had that many.",
			st.Config.Steer, st.Config.Consumer, c[0].ReachableSlots, c[0].Slots))
	}
	m.Queues = spread(qp, qb, m.Flows)
	m.Workers = spread(wp, wb, m.Flows)
	m.WorkerFlows = spread(wf, nil, m.Flows)
	m.Queues.Verdict = verdict(&m.Queues, nil, "queues")
	if st.Config.QueueSpread == "sender" {
		m.Queues.Verdict = fmt.Sprintf("the senders chose the queues (each generator thread sends on a queue of its own), not a hash: the load per queue (max/mean %.2f) is what each thread sent", m.Queues.MaxMean)
	}
	m.Workers.Verdict = verdict(&m.Workers, &m.WorkerFlows, "workers")
	m.WorkerFlows.Verdict = verdict(&m.WorkerFlows, nil, "workers")
	for _, w := range st.Windows {
		var kernel uint64
		for _, n := range w.QueueKernelDrops {
			kernel += n
		}
		m.Timeline = append(m.Timeline, Window{
			StartNs: w.StartNs, QueuePackets: w.QueuePackets,
			WorkerPackets: w.WorkerPackets, WorkerBacklog: w.WorkerBacklog, WorkerDrops: w.WorkerDrops,
			KernelDrops: kernel, QueueKernelDrops: w.QueueKernelDrops,
		})
	}
	return m
}

// servedBytes is the bytes worker w's consumer served, from the windows;
// without windows, the bytes the worker took off its rings.
func servedBytes(st *runstats.RunStats, w int) uint64 {
	if len(st.Windows) == 0 {
		return st.Workers[w].Bytes
	}
	var b uint64
	for _, win := range st.Windows {
		if w < len(win.WorkerBytes) {
			b += win.WorkerBytes[w]
		}
	}
	return b
}

// spread measures a load over bins; bytes may be nil (a count of flows).
func spread(packets, bytes []uint64, flows int) Spread {
	s := Spread{
		Packets: packets, Bytes: bytes,
		JainPackets: fairness.Jain(packets), MaxMeanPackets: fairness.MaxMean(packets),
		Flows: flows,
	}
	s.Jain, s.MaxMean = s.JainPackets, s.MaxMeanPackets
	if bytes != nil {
		s.Jain, s.MaxMean = fairness.Jain(bytes), fairness.MaxMean(bytes)
	}
	if n := len(packets); n > 0 && flows > 0 {
		s.ExpectedMaxMean = fairness.ExpectedMaxMean(flows, n)
		s.ExpectedJain = fairness.ExpectedJain(flows, n)
	}
	return s
}

// verdict says whose fault s's imbalance is. A max/mean near the
// expectation (asExpected) is what hashing this many flows gives. Above it, flows
// (the flows per bin, when known) tell the hash from the traffic: flows
// spread no worse than hashing expects, but bytes spread worse, means the
// flows are unequal; flows spread worse means the hash is.
func verdict(s, flows *Spread, what string) string {
	n := len(s.Packets)
	switch {
	case n < 2:
		return fmt.Sprintf("one bin: nothing to spread over %s", what)
	case s.MaxMean == 0:
		return "no traffic"
	case s.Flows == 0:
		return fmt.Sprintf("no flow counts (the consumer does not count flows), so no expectation: max/mean %.2f", s.MaxMean)
	case asExpected(s.MaxMean, s.ExpectedMaxMean):
		return fmt.Sprintf("as expected: hashing %d flows into %d %s gives max/mean %.2f on average, measured %.2f",
			s.Flows, n, what, s.ExpectedMaxMean, s.MaxMean)
	case flows == nil:
		return fmt.Sprintf("more imbalance than hashing %d equal flows explains (max/mean %.2f, expected %.2f): unequal flows or a non-uniform hash",
			s.Flows, s.MaxMean, s.ExpectedMaxMean)
	case !asExpected(flows.MaxMean, flows.ExpectedMaxMean):
		return fmt.Sprintf("the hash: flows spread over %s worse than a random hash would (flows max/mean %.2f, expected %.2f)",
			what, flows.MaxMean, flows.ExpectedMaxMean)
	}
	return fmt.Sprintf("the traffic: flows spread over %s as hashing expects (max/mean %.2f, expected %.2f), but unequal flows make the load uneven (max/mean %.2f)",
		what, flows.MaxMean, flows.ExpectedMaxMean, s.MaxMean)
}

// reachableSlots is how many of a consumer's slots the flows steered to one
// of workers workers reach. RPS and fq_codel both scale the hash's high bits
// (reciprocal_scale), an RSS indirection table and fq both mask its low
// bits: either way the flows of one worker fall in about 1/workers of the
// slots, as in the kernel when both use the same skb->hash.
func reachableSlots(steer, consumer string, workers, slots int) int {
	if workers > 1 && (steer == "rps" && consumer == "fq_codel" || steer == "reta" && consumer == "fq") {
		return (slots + workers - 1) / workers
	}
	return slots
}

func consumerMeasures(w *runstats.WorkerReport, bytes uint64, reachable int) ConsumerMeasures {
	c := &w.Consumer
	f := &c.Flows
	cm := ConsumerMeasures{
		Worker: w.Worker, Packets: c.Dequeued, Bytes: bytes,
		Flows: f.Active, Slots: f.Slots, Buckets: f.Buckets, Served: f.Served,
		ReachableSlots: reachable,
		Collisions:     f.Collisions, ExpectedCollisions: fairness.ExpectedCollisions(f.Active, reachable),
		Jain: f.Jain, Shares: f.Shares,
		Drops: map[string]uint64{}, CEMarks: c.CEMarks, MaxBacklog: c.MaxBacklog, SojournNs: c.SojournNs,
		Top: f.Top[:min(len(f.Top), maxTop)],
	}
	if len(f.Shares) > 0 {
		cm.MaxShare = slices.Max(f.Shares)
	}
	if f.Served > 0 {
		cm.FairShare = 1 / float64(f.Served)
	}
	for reason, n := range w.Drops {
		cm.Drops[string(reason)] += n
	}
	for reason, n := range c.Drops {
		cm.Drops[string(reason)] += n
	}
	return cm
}
