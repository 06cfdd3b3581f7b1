package soak

import (
	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline"
)

// engineConfig is the engine of a soak of cfg, but for what Run adds once
// the lab is up: the source, its CPU plan, the sampler and the hash key.
func (cfg Config) engineConfig() pipeline.EngineConfig {
	return pipeline.EngineConfig{
		Steering: hash.SteerConfig{Workers: cfg.Workers},
		Flags:    dissect.DefaultFlags, Gates: dissect.AllGates, Descent: cfg.Descent,
		RingSize: cfg.RingSize, Consumer: cfg.Consumer, ServiceRate: cfg.ServiceRate,
		Batch: pipeline.DefaultBatch, Window: pipeline.DefaultWindow,
		QueueSpread:     "sender", // each generator thread sends on its own veth queue
		CheckDeviceHash: cfg.CheckDevice,
	}
}

// CheckEngine reports the first setting of cfg that the soak's engine does
// not take, with pipeline.EngineConfig.Check (whose limits come as a
// *pipeline.LimitError naming the engine's field: "Steering.Workers" for
// Workers, "RingSize", "loops" for Queues), before anything is made. It
// checks cfg as it stands, where Run first gives zero fields their
// defaults.
func (cfg Config) CheckEngine() error { return cfg.engineConfig().Check(cfg.Queues) }
