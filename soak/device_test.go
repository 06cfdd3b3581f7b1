package soak

import (
	"errors"
	"strings"
	"testing"

	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

func TestCheckDeviceHash(t *testing.T) {
	ok := &runstats.RunStats{Accounting: runstats.Accounting{Received: 10},
		DeviceHash: &runstats.DeviceHashCheck{Method: "partition", Frames: 10, WithHash: 10, Checked: 10}}
	conflict := &runstats.RunStats{Accounting: runstats.Accounting{Received: 10},
		DeviceHash: &runstats.DeviceHashCheck{Method: "partition", Frames: 10, WithHash: 10, Checked: 10, Conflicts: 1,
			Samples: []runstats.DeviceHashConflict{{Frame: "00"}}}}
	missing := &runstats.RunStats{Accounting: runstats.Accounting{Received: 10},
		DeviceHash: &runstats.DeviceHashCheck{Method: "partition", Frames: 10, WithHash: 9, Checked: 9}}
	for _, tt := range []struct {
		name string
		st   *runstats.RunStats
		pass bool
	}{
		{"every frame agrees", ok, true},
		{"a conflict", conflict, false},
		{"a frame without a device hash", missing, false},
		{"no check", &runstats.RunStats{}, false},
	} {
		if c := checkDeviceHash(tt.st, 20, 10); c.Pass != tt.pass || !strings.HasPrefix(c.Name, "device hash") {
			t.Errorf("%s: %+v, want pass %v", tt.name, c, tt.pass)
		}
	}
}

func TestCheckDeviceProfile(t *testing.T) {
	for _, tt := range []struct {
		profile string
		ok      bool
	}{{"simple", true}, {"tunnels", true}, {"datacenter", false}, {"isp", false}} {
		p, err := pktgen.Builtin(tt.profile)
		if err != nil {
			t.Fatal(err)
		}
		err = checkDeviceProfile(Config{CheckDevice: true}, p)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ok %v", tt.profile, err, tt.ok)
		}
		if err := checkDeviceProfile(Config{}, p); err != nil {
			t.Errorf("%s without the device check: %v", tt.profile, err)
		}
	}
}
