package hash

import (
	"testing"

	"github.com/xdphash/xdphash/dissect"
)

// TestHashDevice pins which hash each kind takes for every answer a device
// can give, and that TakesDevice says so: a receive loop hashes the frames
// TakesDevice refuses together, with the steering's own hash.
func TestHashDevice(t *testing.T) {
	keys := flow{thoff: 34, addrType: dissect.AddrIPv4, nProto: 0x0800, ipProto: 6,
		ports: "03e80050", src: "198.18.0.1", dst: "198.18.0.2"}.keys(t)
	const dev = 0xdecafbad
	for _, tc := range []struct {
		kind       Kind
		devL4, has bool
		want       Source // the hash's source
	}{
		{KindKernel, true, true, SourceKernel},
		{KindKernel, false, false, SourceKernel},
		{KindToeplitz, true, true, SourceToeplitz},
		{KindAuto, true, true, SourceDevice},
		{KindAuto, false, true, SourceKernel}, // an L3-only device hash: skb_get_hash dissects
		{KindAuto, true, false, SourceKernel},
		{KindDevice, false, true, SourceDevice},
		{KindDevice, true, false, SourceNone},
	} {
		s, err := NewSteering(SteerConfig{Workers: 4, Hash: tc.kind, Key: Key{1, 2, 3}})
		if err != nil {
			t.Fatal(err)
		}
		h, l4, src := s.HashDevice(keys, dev, tc.devL4, tc.has)
		if src != tc.want {
			t.Errorf("%v, device L4 %v, has %v: source %v, want %v", tc.kind, tc.devL4, tc.has, src, tc.want)
		}
		own, ownL4 := s.Hash(keys)
		switch src {
		case SourceDevice:
			if h != dev || l4 != tc.devL4 {
				t.Errorf("%v: hash %#x l4 %v, want the device's %#x l4 %v", tc.kind, h, l4, uint32(dev), tc.devL4)
			}
		case SourceNone:
			if h != 0 || l4 {
				t.Errorf("%v: hash %#x l4 %v, want 0 without a device hash", tc.kind, h, l4)
			}
		default:
			if h != own || l4 != ownL4 {
				t.Errorf("%v: hash %#x l4 %v, want its own %#x l4 %v", tc.kind, h, l4, own, ownL4)
			}
		}
		if got, want := s.TakesDevice(tc.devL4, tc.has), src != s.Own(); got != want {
			t.Errorf("%v, device L4 %v, has %v: TakesDevice %v, but HashDevice's source is %v", tc.kind, tc.devL4, tc.has, got, src)
		}
	}
}
