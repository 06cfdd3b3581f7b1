package pipeline

import (
	"testing"
	"time"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/nicrss"
	"github.com/xdphash/xdphash/pipeline/source"
)

// TestDeviceCheckToeplitzNICParse: with --hash toeplitz the check compares
// the device's hash with the NIC model's hash of the frame (package nicrss,
// CheckNIC), exactly, allocating nothing. A device that hashes the addresses
// only (rx-flow-hash sd) conflicts with the default model on its TCP and UDP
// frames, and the summary says why; with the model given its fields it
// does not. One that declares ports it did not take has the model's hash
// but not its type (fields_differ), and one that leaves frames unhashed
// which the model hashes is counted (not_hashed_by_device).
func TestDeviceCheckToeplitzNICParse(t *testing.T) {
	exact, err := nicrss.NewHasher(nil, hash.SymmetricNone, nicrss.ParseConfig{Types: nicrss.TypesDefault})
	if err != nil {
		t.Fatal(err)
	}
	sd, _ := nicrss.NewHasher(nil, hash.SymmetricNone, nicrss.ParseConfig{Types: nicrss.TypeIPv4 | nicrss.TypeIPv6})
	tcpOnly, _ := nicrss.NewHasher(nil, hash.SymmetricNone, nicrss.ParseConfig{Types: nicrss.TypeTCPv4 | nicrss.TypeTCPv6})
	var tu, full nicrss.Tuple
	// declared is the type a device declares for the tuple it hashed: ports
	// when it took them, or, claiming ports, wherever the default fields
	// would take them.
	declared := func(claimPorts bool) func([]byte) kernel.RSSHashType {
		return func(f []byte) kernel.RSSHashType {
			if tu.Report == nicrss.ReportNone {
				return 0
			}
			t := kernel.RSSL3IPv4
			if tu.Report.IsIPv6() {
				t = kernel.RSSL3IPv6
			}
			if claimPorts {
				exact.Hash(&full, f)
			}
			if tu.Report.HasPorts() || claimPorts && full.Report.HasPorts() {
				t |= kernel.RSSL4
			}
			return t
		}
	}
	for _, c := range []struct {
		name                    string
		device, model           *nicrss.Hasher
		claimPorts              bool
		conflicts, fieldsDiffer bool
		notHashed               bool
	}{
		{"device hashes as the model", exact, nil, false, false, false, false},
		{"device hashes addresses only, the model ports", sd, nil, false, true, true, false},
		{"device and model hash addresses only", sd, sd, false, false, false, false},
		{"device hashes addresses only and declares ports", sd, sd, true, false, true, false},
		{"device hashes TCP only", tcpOnly, nil, false, false, false, true},
	} {
		src := &metaSource{
			devHash: func(f []byte, _ dissect.VLANTag) uint32 { h, _ := c.device.Hash(&tu, f); return h },
			devType: declared(c.claimPorts), // devHash has just parsed f into tu
		}
		src.Source = syntheticSource(t, "default", source.SyntheticConfig{})
		e, err := NewEngine(EngineConfig{
			Source: src, Steering: hash.SteerConfig{Workers: 2, Key: testKey, Hash: hash.KindToeplitz},
			Flags: dissect.DefaultFlags, Gates: dissect.AllGates, Window: time.Hour, CheckDeviceHash: true, CheckNIC: c.model,
		})
		if err != nil {
			t.Fatal(err)
		}
		drive(e)
		if !c.conflicts {
			if a := testing.AllocsPerRun(50, func() { drive(e) }); a != 0 {
				t.Errorf("%s: %.1f allocations per batch, want 0", c.name, a)
			}
		} else {
			drive(e)
		}
		st := e.Stats()
		dh := st.DeviceHash
		if dh.Method != "equality" || dh.Checked == 0 || (dh.Conflicts > 0) != c.conflicts || (dh.FieldsDiffer > 0) != c.fieldsDiffer || (dh.NotHashedByDevice > 0) != c.notHashed {
			t.Fatalf("%s: check %+v", c.name, *dh)
		}
		if !c.conflicts {
			continue
		}
		if len(dh.Classes) != 1 || dh.Classes[0].Class != "addresses-only" || dh.Classes[0].Frames != dh.Conflicts {
			t.Errorf("%s: classes %+v for %d conflicts, want them all addresses-only", c.name, dh.Classes, dh.Conflicts)
		}
	}
}
