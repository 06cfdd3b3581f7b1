package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/runstats"
)

// Memory flatness: after the warm-up (the first WarmupFraction of the
// samples, at least MinWarmup of them), the later half's maximum must stay
// within MemTolerance of the earlier half's maximum, plus MemSlack bytes for
// the garbage collector's pacing on a small heap; goroutines within
// GoroutineSlack.
const (
	WarmupFraction = 0.25
	MinWarmup      = 2
	MemTolerance   = 0.10
	MemSlack       = 1 << 20
	GoroutineSlack = 2
	// minMemPoints is the fewest samples after warm-up that can show a
	// trend; fewer and the check is skipped: it cannot judge.
	minMemPoints = 4
)

// runChecks is checks (a) to (d) of a run, hashCheck and steerCheck from
// checkSamples. A soak interrupted before any frame was sent or received
// checked nothing: accounting, hash and steering are skipped, not failed.
// Without the interruption, a soak that moved no traffic fails them.
func runChecks(sent uint64, l LinkDeltas, st *runstats.RunStats, hashCheck, steerCheck Check, mem []MemPoint, interrupted bool) []Check {
	checks := []Check{checkAccounting(sent, l, st), hashCheck, steerCheck, checkMemory(mem)}
	if interrupted && sent == 0 && (st == nil || st.Accounting.Received == 0) {
		for i := range checks[:3] {
			c := &checks[i]
			c.Pass, c.Skipped = false, true
			c.Detail = "interrupted before any traffic: nothing to check\n" + c.Detail
		}
	}
	return checks
}

// checkAccounting is check (a): every frame the generator sent is received or
// counted as dropped at exactly one stage. The stages and what "received"
// means at each boundary:
//
//  1. generator -> peer veth: sent = peer tx_packets + peer tx_dropped. The
//     generator counts the frames it handed to the kernel; a veth counts
//     in tx_packets what its other end took into its receive ring (XDP_TX
//     frames included) and in tx_dropped what that ring refused.
//  2. peer -> host veth: peer tx_packets = host rx_packets: the same frames,
//     counted on the other end when its NAPI poll ran them through XDP.
//  3. host XDP -> AF_XDP: host rx_packets = received + AF_XDP drops, where
//     received is what the receive loops took off the AF_XDP RX rings and
//     the drops are XDP_STATISTICS rx_ring_full + rx_dropped (fill ring
//     empty, frame too big) + rx_invalid_descs. Cross-check: the veth counts
//     the same redirect failures, and the peer's refused frames, in host
//     rx_dropped = AF_XDP drops + peer tx_dropped.
//  4. engine: received = processed (served or still queued in a consumer)
//     + ring full + flow limit + consumer drops (runstats.Accounting).
func checkAccounting(sent uint64, l LinkDeltas, st *runstats.RunStats) Check {
	c := Check{Name: "accounting: sent = received + every counted drop"}
	if st == nil {
		c.Detail = "no run statistics"
		return c
	}
	a := st.Accounting
	var xsk runstats.QueueStats
	for _, q := range st.Queues {
		xsk.Add(q.Stats)
	}
	kd := xsk.KernelDrops()
	var dropped uint64
	reasons := slices.Sorted(maps.Keys(a.Dropped))
	var parts []string
	for _, r := range reasons {
		dropped += a.Dropped[r]
		parts = append(parts, fmt.Sprintf("%s %d", r, a.Dropped[r]))
	}
	type eq struct {
		text        string
		left, right uint64
	}
	eqs := []eq{
		{fmt.Sprintf("sent %d = peer tx_packets %d + peer tx_dropped %d", sent, l.PeerTxPackets, l.PeerTxDropped), sent, l.PeerTxPackets + l.PeerTxDropped},
		{fmt.Sprintf("peer tx_packets %d = host rx_packets %d", l.PeerTxPackets, l.HostRxPackets), l.PeerTxPackets, l.HostRxPackets},
		{fmt.Sprintf("host rx_packets %d = received %d + AF_XDP rx_ring_full %d + rx_dropped %d + rx_invalid_descs %d",
			l.HostRxPackets, a.Received, xsk.RxRingFull, xsk.RxDropped, xsk.RxInvalidDescs), l.HostRxPackets, a.Received + kd},
		{fmt.Sprintf("host rx_dropped %d = AF_XDP drops %d + peer tx_dropped %d", l.HostRxDropped, kd, l.PeerTxDropped), l.HostRxDropped, kd + l.PeerTxDropped},
		{fmt.Sprintf("received %d = processed %d + unserved %d + %s", a.Received, a.Processed, a.Unserved, strings.Join(parts, " + ")), a.Received, a.Processed + a.Unserved + dropped},
	}
	c.Pass = a.Balanced && sent > 0 && a.Received > 0
	lines := make([]string, 0, len(eqs)+2)
	for _, e := range eqs {
		mark := "ok"
		if e.left != e.right {
			mark = fmt.Sprintf("OFF BY %d", int64(e.left)-int64(e.right))
			c.Pass = false
		}
		lines = append(lines, fmt.Sprintf("%s [%s]", e.text, mark))
	}
	if !a.Balanced {
		lines = append(lines, "the engine's own accounting does not balance")
	}
	if sent == 0 || a.Received == 0 {
		lines = append(lines, "nothing was sent or received")
	}
	lines = append(lines, fmt.Sprintf("total: sent %d = processed %d + unserved %d + dropped %d (veth %d, AF_XDP %d, engine %d); fill ring found empty %d times (in copy mode each such frame is dropped and counted in rx_dropped)",
		sent, a.Processed, a.Unserved, l.PeerTxDropped+kd+dropped, l.PeerTxDropped, kd, dropped, xsk.FillRingEmpty))
	c.Detail = strings.Join(lines, "\n")
	return c
}

// checkSamples is checks (b) and (c): each sampled frame, dissected again by
// the slow path and hashed with the run's key, gives the hash the receive
// loop computed; and the worker it went to is the RPS map's CPU for that hash.
func checkSamples(samples []pipeline.Sample, taken uint64, key hash.Key, workers int) (hashCheck, steerCheck Check, sum SampleSummary) {
	return checkDescendedSamples(samples, taken, key, workers, dissect.Descent{})
}

// checkDescendedSamples is checkSamples for an engine whose dissectors
// descend into UDP tunnels by policy p: the offline dissector does too.
func checkDescendedSamples(samples []pipeline.Sample, taken uint64, key hash.Key, workers int, p dissect.Descent) (hashCheck, steerCheck Check, sum SampleSummary) {
	k := hash.NewKernel(key)
	return checkSampled(samples, taken, workers, p, func(keys *dissect.FlowKeys) uint32 {
		h, _ := k.Hash(keys)
		return h
	})
}

// checkSampled is checkDescendedSamples with the run's hash of a frame's
// keys given as rehash.
func checkSampled(samples []pipeline.Sample, taken uint64, workers int, p dissect.Descent, rehash func(*dissect.FlowKeys) uint32) (hashCheck, steerCheck Check, sum SampleSummary) {
	hashCheck = Check{Name: "hash: sampled frames hash as the offline dissector says"}
	steerCheck = Check{Name: "steering: sampled worker = RPS map of the sampled hash"}
	sum.Taken, sum.Checked = taken, len(samples)
	idx := make([]int, workers)
	for i := range idx {
		idx[i] = i
	}
	rps, err := hash.NewRPSMap(idx)
	if err != nil {
		hashCheck.Detail, steerCheck.Detail = err.Error(), err.Error()
		return hashCheck, steerCheck, sum
	}
	var keys dissect.FlowKeys
	var firstHash, firstSteer string
	for _, s := range samples {
		if s.Truncated {
			sum.Truncated++
			continue
		}
		dissect.DissectFrameTaggedDescend(&keys, s.Frame, s.Tag, dissect.DefaultFlags, p)
		if h := rehash(&keys); h != s.Hash {
			sum.HashMismatch++
			if firstHash == "" {
				firstHash = fmt.Sprintf("; first: queue %d frame %x: loop hash %#08x, offline %#08x", s.Queue, s.Frame, s.Hash, h)
			}
		}
		want := rps.CPU(s.Hash)
		if want < 0 { // no hash: the packet stays on its receiving CPU
			want = s.Queue % workers
		}
		if s.Worker != want {
			sum.SteerMismatch++
			if firstSteer == "" {
				firstSteer = fmt.Sprintf("; first: hash %#08x on queue %d went to worker %d, want %d", s.Hash, s.Queue, s.Worker, want)
			}
		}
	}
	checked := sum.Checked - sum.Truncated
	hashCheck.Pass = checked > 0 && sum.HashMismatch == 0
	steerCheck.Pass = checked > 0 && sum.SteerMismatch == 0
	hashCheck.Detail = fmt.Sprintf("%d samples taken, %d kept, %d re-hashed offline, %d mismatches, %d truncated%s",
		taken, sum.Checked, checked, sum.HashMismatch, sum.Truncated, firstHash)
	steerCheck.Detail = fmt.Sprintf("%d samples, %d mismatches (%d workers)%s", checked, sum.SteerMismatch, workers, firstSteer)
	return hashCheck, steerCheck, sum
}

// checkMemory is check (d): HeapInuse, Sys and the goroutine count flat
// after warm-up.
func checkMemory(points []MemPoint) Check {
	c := Check{Name: "memory and goroutines flat after warm-up"}
	warm := max(MinWarmup, int(float64(len(points))*WarmupFraction))
	if len(points)-warm < minMemPoints {
		c.Skipped = true
		c.Detail = fmt.Sprintf("%d samples, %d after warm-up: too few to show a trend (need %d; run longer)", len(points), max(0, len(points)-warm), minMemPoints)
		return c
	}
	rest := points[warm:]
	first, last := rest[:len(rest)/2], rest[len(rest)/2:]
	maxOf := func(ps []MemPoint, f func(MemPoint) uint64) uint64 {
		var m uint64
		for _, p := range ps {
			m = max(m, f(p))
		}
		return m
	}
	c.Pass = true
	var lines []string
	for _, m := range []struct {
		name  string
		f     func(MemPoint) uint64
		slack func(uint64) uint64
	}{
		{"HeapInuse", func(p MemPoint) uint64 { return p.HeapInuse }, func(v uint64) uint64 { return uint64(float64(v)*MemTolerance) + MemSlack }},
		{"Sys", func(p MemPoint) uint64 { return p.Sys }, func(v uint64) uint64 { return uint64(float64(v)*MemTolerance) + MemSlack }},
		{"goroutines", func(p MemPoint) uint64 { return uint64(p.Goroutines) }, func(uint64) uint64 { return GoroutineSlack }},
	} {
		a, b := maxOf(first, m.f), maxOf(last, m.f)
		ok := b <= a+m.slack(a)
		c.Pass = c.Pass && ok
		verdict := "flat"
		if !ok {
			verdict = "GROWING"
		}
		lines = append(lines, fmt.Sprintf("%s: max %d in the first half, %d in the second (allowed %d): %s", m.name, a, b, a+m.slack(a), verdict))
	}
	c.Detail = fmt.Sprintf("%d samples, 1/s, first %d are warm-up; ", len(points), warm) + strings.Join(lines, "; ")
	return c
}
