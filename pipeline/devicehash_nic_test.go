package pipeline

import (
	"testing"

	"github.com/xdphash/xdphash/dissect"
	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/nicrss"
)

// TestDeviceCheckToeplitzNICParse: with --hash toeplitz the check compares
// the device's hash with the NIC parse's, exactly, allocating nothing; a
// device that hashes the addresses only (rx-flow-hash sd) conflicts on its
// TCP and UDP frames, and the summary says why.
func TestDeviceCheckToeplitzNICParse(t *testing.T) {
	exact, err := nicrss.NewHasher(nil, hash.SymmetricNone, nicrss.ParseConfig{Types: nicrss.TypesDefault})
	if err != nil {
		t.Fatal(err)
	}
	sd, _ := nicrss.NewHasher(nil, hash.SymmetricNone, nicrss.ParseConfig{Types: nicrss.TypeIPv4 | nicrss.TypeIPv6})
	var tu nicrss.Tuple
	for _, c := range []struct {
		name      string
		device    *nicrss.Hasher
		conflicts bool
	}{{"device hashes as the model", exact, false}, {"device hashes addresses only", sd, true}} {
		src := &metaSource{devHash: func(f []byte, _ dissect.VLANTag) uint32 { h, _ := c.device.Hash(&tu, f); return h }}
		e := metaEngine(t, src, hash.KindToeplitz, true)
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
		if dh.Method != "equality" || dh.Checked == 0 || (dh.Conflicts > 0) != c.conflicts {
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
