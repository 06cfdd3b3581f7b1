package pipeline

import (
	"errors"
	"testing"
	"time"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/pipeline/source"
	"github.com/xdphash/xdphash/queues"
	"github.com/xdphash/xdphash/rebalance"
)

// validConfig is a configuration Check takes: every limit of Check is one
// field away from it.
func validConfig() EngineConfig {
	return EngineConfig{
		Steering: hash.SteerConfig{Workers: 2, Key: testKey},
		RingSize: DefaultRingSize, Batch: DefaultBatch, Window: DefaultWindow,
	}
}

// TestCheckLimits moves each field of a valid configuration to each end of
// what the engine takes and one step beyond: Check takes the first, refuses
// the second with a LimitError naming the field, and so does NewEngine.
func TestCheckLimits(t *testing.T) {
	frames := profileFrames(t, "datacenter")[:1]
	reta := func(c *EngineConfig) { c.Steering.Steer = hash.SteerRETA; c.Steering.RETASize = 128 }
	rebal := func(c *EngineConfig) {
		reta(c)
		c.Rebalance = RebalanceConfig{Interval: 10 * time.Millisecond, Threshold: 1.05, Dwell: 1}
	}
	for _, c := range []struct {
		field   string
		ok, bad func(*EngineConfig)
		want    string
	}{
		{"Steering.Workers", func(c *EngineConfig) { c.Steering.Workers = MaxWorkers; c.RingSize = 16 }, func(c *EngineConfig) { c.Steering.Workers = MaxWorkers + 1 }, "want 1 to 1024"},
		{"Steering.Workers", func(c *EngineConfig) { c.Steering.Workers = 1 }, func(c *EngineConfig) { c.Steering.Workers = 0 }, "want 1 to 1024"},
		{"RingSize", func(c *EngineConfig) { c.RingSize = 1 }, func(c *EngineConfig) { c.RingSize = 0 }, "want 1 to 1048576"},
		{"RingSize", func(c *EngineConfig) { c.RingSize = MaxRingSize }, func(c *EngineConfig) { c.RingSize = MaxRingSize + 1 }, "want 1 to 1048576"},
		{"Batch", func(c *EngineConfig) { c.Batch = 1 }, func(c *EngineConfig) { c.Batch = 0 }, "want 1 to 16384"},
		{"Batch", func(c *EngineConfig) { c.Batch = MaxBatch }, func(c *EngineConfig) { c.Batch = MaxBatch + 1 }, "want 1 to 16384"},
		{"FlowLimit", func(c *EngineConfig) { c.FlowLimit = queues.MaxFlowLimitTableLen }, func(c *EngineConfig) { c.FlowLimit = queues.MaxFlowLimitTableLen + 1 },
			"want a table length up to 65536 (the kernel's default is 4096), or 0 for none"},
		{"FlowLimit", func(c *EngineConfig) { c.FlowLimit = 0 }, func(c *EngineConfig) { c.FlowLimit = -1 }, "want a table length up to 65536 (the kernel's default is 4096), or 0 for none"},
		{"Window", func(c *EngineConfig) { c.Window = MinWindow }, func(c *EngineConfig) { c.Window = MinWindow - 1 }, "want at least 1ms"},
		{"Steering.RETASize", func(c *EngineConfig) { reta(c); c.Steering.RETASize = 2048 }, func(c *EngineConfig) { reta(c); c.Steering.RETASize = 256 }, "want one of 128, 512, 2048"},
		{"Rebalance.Interval", func(c *EngineConfig) { rebal(c); c.Rebalance.Interval = MinRebalanceInterval }, func(c *EngineConfig) { rebal(c); c.Rebalance.Interval = MinRebalanceInterval - 1 },
			"want an interval of at least 1ms"},
		{"Rebalance.Threshold", func(c *EngineConfig) { rebal(c); c.Rebalance.Threshold = 1 }, func(c *EngineConfig) { rebal(c); c.Rebalance.Threshold = 0.99 }, "want a max/mean from 1 to 65536"},
		{"Rebalance.Threshold", func(c *EngineConfig) { rebal(c); c.Rebalance.Threshold = rebalance.MaxThreshold }, func(c *EngineConfig) { rebal(c); c.Rebalance.Threshold = rebalance.MaxThreshold + 1 },
			"want a max/mean from 1 to 65536"},
		{"Rebalance.Dwell", func(c *EngineConfig) { rebal(c); c.Rebalance.Dwell = 0 }, func(c *EngineConfig) { rebal(c); c.Rebalance.Dwell = -1 }, "want 0 to 1073741824 intervals"},
		{"Rebalance.Dwell", func(c *EngineConfig) { rebal(c); c.Rebalance.Dwell = rebalance.MaxDwell }, func(c *EngineConfig) { rebal(c); c.Rebalance.Dwell = rebalance.MaxDwell + 1 },
			"want 0 to 1073741824 intervals"},
	} {
		ok, bad := validConfig(), validConfig()
		c.ok(&ok)
		c.bad(&bad)
		if err := ok.Check(1); err != nil {
			t.Errorf("%s: Check(%+v) = %v, want nil", c.field, ok, err)
		}
		err := bad.Check(1)
		le, isLimit := errors.AsType[*LimitError](err)
		if !isLimit || le.Field != c.field || le.Want != c.want || !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Check = %v, want a LimitError of the field, %q, an ErrConfig", c.field, err, c.want)
			continue
		}
		if bad.RingSize == 0 || bad.Batch == 0 {
			continue // NewEngine gives them their default (TestCheckDefaults)
		}
		src, err := source.NewSynthetic(frames, source.SyntheticConfig{Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		bad.Source = src
		if _, err := NewEngine(bad); !errors.As(err, &le) || le.Field != c.field {
			t.Errorf("%s: NewEngine = %v, want the same LimitError", c.field, err)
		}
		src.Close()
	}
}

// TestCheckQueues bounds the receive queues, and the rings they make with
// the workers, before the source opens.
func TestCheckQueues(t *testing.T) {
	c := validConfig()
	for _, loops := range []int{0, 1, MaxLoops} {
		if err := c.Check(loops); err != nil {
			t.Errorf("Check(%d) = %v", loops, err)
		}
	}
	if le, ok := errors.AsType[*LimitError](c.Check(MaxLoops + 1)); !ok || le.Field != "loops" || le.Value != MaxLoops+1 {
		t.Errorf("Check(%d) = %v, want a LimitError of loops", MaxLoops+1, le)
	}
	c.Steering.Workers, c.RingSize = MaxWorkers, MaxRingSize
	if err := c.Check(1); !errors.Is(err, ErrConfig) {
		t.Errorf("rings of 1024 workers × 2^20 records: %v, want ErrConfig", err)
	} else if _, ok := errors.AsType[*LimitError](err); ok {
		t.Errorf("the rings' memory is no one field's limit: %v", err)
	}
	if err := c.Check(0); err != nil {
		t.Errorf("rings with the queues unknown: %v, want nil", err)
	}
}

// TestCheckDefaults checks that a zero setting with a default is refused as
// it stands, taken after WithDefaults, and taken by NewEngine, which fills
// it in.
func TestCheckDefaults(t *testing.T) {
	zero := EngineConfig{Steering: hash.SteerConfig{Workers: 2, Steer: hash.SteerRETA}, Rebalance: RebalanceConfig{Interval: time.Second}}
	if err := zero.Check(1); !errors.Is(err, ErrConfig) {
		t.Errorf("zero RingSize: %v, want refused", err)
	}
	d := zero.WithDefaults()
	if err := d.Check(1); err != nil {
		t.Errorf("after WithDefaults: %v", err)
	}
	if d.RingSize != DefaultRingSize || d.Batch != DefaultBatch || d.Window != DefaultWindow || d.Tick != DefaultTick || d.Consumer != "fifo" ||
		d.Steering.RETASize != hash.DefaultRETASize || d.Rebalance.Threshold != rebalance.DefaultThreshold {
		t.Errorf("WithDefaults = %+v", d)
	}
	src, err := source.NewSynthetic(profileFrames(t, "datacenter")[:1], source.SyntheticConfig{Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	zero.Source = src
	if _, err := NewEngine(zero); err != nil {
		t.Errorf("NewEngine of zero defaults: %v", err)
	}
}

// TestCheckSteering refuses, before any source, a steering that cannot be
// built: a RETA with more weights than workers, an RSS key of a length no NIC
// uses.
func TestCheckSteering(t *testing.T) {
	c := validConfig()
	c.Steering.Steer, c.Steering.RETASize, c.Steering.RETAWeights = hash.SteerRETA, 128, []int{1, 2, 3}
	if err := c.Check(1); !errors.Is(err, hash.ErrRETA) {
		t.Errorf("three weights for two workers: %v, want hash.ErrRETA", err)
	}
	c = validConfig()
	c.Steering.Hash, c.Steering.RSSKey = hash.KindToeplitz, make([]byte, 12)
	if err := c.Check(1); !errors.Is(err, hash.ErrRSSKeyLength) {
		t.Errorf("a 12-byte RSS key: %v, want hash.ErrRSSKeyLength", err)
	}
}
