package soak

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/pipeline"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/runstats"
)

// withDefaults fills cfg's zero fields and checks it.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Duration == 0 {
		cfg.Duration = DefaultDuration
	}
	if cfg.Queues == 0 {
		cfg.Queues = DefaultQueues
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Profile == "" {
		cfg.Profile = DefaultProfile
	}
	if cfg.Consumer == "" {
		cfg.Consumer = DefaultConsumer
	}
	if cfg.RingSize == 0 {
		cfg.RingSize = pipeline.DefaultRingSize
	}
	if cfg.Threads == 0 {
		cpus, err := kernel.AllowedCPUs()
		if err != nil {
			return cfg, fmt.Errorf("configure soak: %w", err)
		}
		cfg.Threads = max(1, min(cfg.Queues, len(cpus)))
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.Duration < 0:
		return cfg, fmt.Errorf("configure soak: %w: duration %s", ErrConfig, cfg.Duration)
	case cfg.Queues < 1 || cfg.Workers < 1 || cfg.RingSize < 1 || cfg.Threads < 1 || cfg.SampleEvery < 0:
		return cfg, fmt.Errorf("configure soak: %w: want at least 1 queue, worker, ring slot and thread", ErrConfig)
	case cfg.Rate < 0:
		return cfg, fmt.Errorf("configure soak: %w: rate %g", ErrConfig, cfg.Rate)
	case cfg.CheckDevice && cfg.Mode != "" && cfg.Mode != pktgen.ModePacket:
		return cfg, fmt.Errorf("configure soak: %w: the device check sends through AF_PACKET (mode packet), not %s: frames sent with XDP or AF_XDP carry no usable device hash on veth", ErrConfig, cfg.Mode)
	}
	if cfg.CheckDevice {
		cfg.Mode = pktgen.ModePacket
	}
	return cfg, nil
}

// Run builds the lab, runs the engine on its host end and the generator on
// its peer end for cfg.Duration (or until ctx ends), lets the frames in
// flight drain, and checks the run. Everything it creates (namespace, veth
// pair, XDP program, sockets) is removed before it returns, on every path;
// the checks' verdicts are in the Result, not the error, which reports only a
// run that could not be set up or carried out.
func Run(ctx context.Context, cfg Config) (_ *Result, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	switch cfg.Lab {
	case "", LabVeth:
	case LabVirtio:
		return runVirtio(ctx, cfg)
	default:
		return nil, fmt.Errorf("configure soak: %w: lab %q, want %s or %s", ErrConfig, cfg.Lab, LabVeth, LabVirtio)
	}
	prof, err := pktgen.LoadProfile(cfg.Profile)
	if err != nil {
		return nil, err
	}
	if err := checkDeviceProfile(cfg, prof); err != nil {
		return nil, err
	}
	if _, err := (queues.ConsumerConfig{}).New(cfg.Consumer); err != nil {
		return nil, fmt.Errorf("configure soak: consumer %s: %w", cfg.Consumer, err)
	}
	log := cfg.Log

	lab, err := vethlab.New(vethlab.Config{Queues: cfg.Queues})
	if err != nil {
		return nil, fmt.Errorf("create lab: %w", err)
	}
	defer func() {
		if cerr := lab.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("remove lab: %w", cerr)
		}
	}()
	log.Info("lab", "host", lab.Host, "peer", lab.Peer, "queues", cfg.Queues)
	// GRO on and forwarding off on the host end: what XDP_TX frames into a
	// veth need when no XDP program runs there (the AF_XDP one does, but a
	// frame sent before it is attached must not go astray either).
	if err := kernel.PrepareReceiver(lab.Host); err != nil {
		return nil, fmt.Errorf("prepare %s: %w", lab.Host, err)
	}

	// The veth's receive work runs on the generator's CPUs, which it does
	// not pin, and a veth has no IRQ of its own: the plan knows it shares
	// the machine but places nothing.
	// The device metadata program only where the device check needs it:
	// the default generator's XDP live frames reach the host without an
	// skb, so veth has no metadata for them, and the program costs the
	// kernel's receive work, which here shares the generator's CPUs.
	opened, err := pipeline.OpenPlannedAFXDP(pipeline.AFXDPSourceConfig{
		AFXDP:   source.AFXDPConfig{Iface: lab.Host, NoMetadata: !cfg.CheckDevice},
		Workers: cfg.Workers,
	})
	if err != nil {
		return nil, err
	}
	src, plan := opened.Source, opened.Plan
	log.Info("cpu plan", "plan", plan.String())
	if opened.PlacementErr != nil {
		log.Warn("no CPU placement", "err", opened.PlacementErr)
	}
	defer func() {
		if cerr := src.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close AF_XDP source: %w", cerr)
		}
	}()
	sampler, err := pipeline.NewSampler(pipeline.SamplerConfig{Loops: len(src.Queues()), Every: cfg.SampleEvery})
	if err != nil {
		return nil, err
	}
	key := hash.RandomKey()
	ecfg := cfg.engineConfig()
	ecfg.Source, ecfg.Sampler, ecfg.Plan, ecfg.Steering.Key = src, sampler, &plan, key
	engine, err := pipeline.NewEngine(ecfg)
	if err != nil {
		return nil, err
	}
	sched, err := newSchedule(cfg, prof, pktgen.MACs{Dst: lab.HostMAC})
	if err != nil {
		return nil, err
	}

	var push *kernel.VLANPush
	if cfg.CheckDevice {
		if push, err = attachDevicePush(lab, src); err != nil {
			return nil, err
		}
		defer push.Close()
	}

	hostBefore, peerBefore, err := linkCounters(lab)
	if err != nil {
		return nil, err
	}

	engineCtx, stopEngine := context.WithCancel(context.Background())
	defer stopEngine()
	type runResult struct {
		st  *runstats.RunStats
		err error
	}
	ran := make(chan runResult, 1)
	go func() {
		st, err := engine.Run(engineCtx)
		ran <- runResult{st, err}
	}()

	res := &Result{}
	started := time.Now()
	monitorDone := make(chan struct{})
	var monitor sync.WaitGroup
	monitor.Go(func() { res.Memory = watch(monitorDone, started, cfg, engine) })

	log.Info("generator", "profile", prof.Name, "mode", cmp.Or(string(cfg.Mode), "auto (xdp where it runs)"), "threads", cfg.Threads, "rate", cfg.Rate, "duration", cfg.Duration)
	cpu := startCPU(0)
	gen, genErr := pktgen.Run(ctx, sched, pktgen.Config{
		Iface: lab.Peer, Enter: lab.InPeer, Mode: cfg.Mode, Threads: cfg.Threads,
		Rate: cfg.Rate, Duration: cfg.Duration, ThroughQdisc: cfg.CheckDevice,
	})
	close(monitorDone)
	monitor.Wait()
	res.Generator = gen
	for _, w := range gen.Warnings {
		log.Warn(w)
	}

	var hostAfter, peerAfter kernel.Link
	if genErr == nil {
		hostAfter, peerAfter, err = drain(lab, engine, hostBefore, cfg.Log)
	}
	res.CPU = cpu.stop(gen)
	stopEngine()
	r := <-ran
	if genErr != nil {
		return nil, genErr
	}
	if err != nil {
		return nil, err
	}
	if r.st == nil {
		return nil, r.err
	}
	if r.err != nil {
		// An unbalanced run still has statistics: the accounting check
		// says what is off.
		log.Warn("engine", "err", r.err)
	}
	res.Stats = r.st
	res.Lab, res.Duration, res.Interrupted = LabVeth, cfg.Duration, ctx.Err() != nil
	res.Links = LinkDeltas{
		PeerTxPackets: peerAfter.TxPackets - peerBefore.TxPackets,
		PeerTxDropped: peerAfter.TxDropped - peerBefore.TxDropped,
		HostRxPackets: hostAfter.RxPackets - hostBefore.RxPackets,
		HostRxDropped: hostAfter.RxDropped - hostBefore.RxDropped,
	}
	hc, sc, sum := checkDescendedSamples(sampler.Samples(), sampler.Taken(), key, cfg.Workers, cfg.Descent)
	res.Samples = sum
	res.Checks = runChecks(gen.Frames, res.Links, r.st, hc, sc, res.Memory, ctx.Err() != nil)
	if cfg.CheckDevice {
		seen, pushed, err := push.Counts()
		if err != nil {
			return nil, fmt.Errorf("soak device check: %w", err)
		}
		res.Checks = append(res.Checks, checkDeviceHash(r.st, seen, pushed))
	}
	return res, nil
}

// linkCounters reads the host end's counters here and the peer end's inside
// the namespace.
func linkCounters(lab *vethlab.Lab) (host, peer kernel.Link, err error) {
	if host, err = kernel.LinkByName(lab.Host); err != nil {
		return host, peer, fmt.Errorf("read counters: %w", err)
	}
	err = lab.InPeer(func() (err error) { peer, err = kernel.LinkByName(lab.Peer); return err })
	if err != nil {
		return host, peer, fmt.Errorf("read counters: %w", err)
	}
	return host, peer, nil
}

// drain waits, after the generator stopped, until every frame the host end
// counted is either taken by a receive loop or counted as an AF_XDP drop, and
// the host's counter has stopped moving, or DefaultDrainTimeout passes (the
// accounting check then shows the frames still in flight).
func drain(lab *vethlab.Lab, e *pipeline.Engine, hostBefore kernel.Link, log *slog.Logger) (host, peer kernel.Link, err error) {
	deadline := time.Now().Add(DefaultDrainTimeout)
	var lastRx uint64
	for {
		if host, peer, err = linkCounters(lab); err != nil {
			return host, peer, err
		}
		var seen uint64
		for _, q := range e.Stats().Queues {
			seen += q.Stats.Frames + q.Stats.KernelDrops()
		}
		rx := host.RxPackets - hostBefore.RxPackets
		if rx == seen && rx == lastRx {
			return host, peer, nil
		}
		if time.Now().After(deadline) {
			log.Warn("drain timed out", "host_rx", rx, "received_or_dropped", seen)
			return host, peer, nil
		}
		lastRx = rx
		time.Sleep(50 * time.Millisecond)
	}
}

// watch samples memory and goroutines once a second, and reports progress,
// until done closes.
func watch(done <-chan struct{}, started time.Time, cfg Config, e *pipeline.Engine) []MemPoint {
	points := make([]MemPoint, 0, int(cfg.Duration/time.Second)+2)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var ms runtime.MemStats
	for {
		select {
		case <-done:
			return points
		case now := <-tick.C:
			runtime.ReadMemStats(&ms)
			points = append(points, MemPoint{ElapsedNs: int64(now.Sub(started)), HeapInuse: ms.HeapInuse, Sys: ms.Sys, Goroutines: runtime.NumGoroutine()})
			if cfg.Progress != nil {
				cfg.Progress(Progress{Elapsed: now.Sub(started), Duration: cfg.Duration, Engine: e.Stats()})
			}
		}
	}
}
