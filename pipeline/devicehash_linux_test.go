package pipeline

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/hash"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/pipeline/source"
)

// udpFrame is an Ethernet/IPv4/UDP frame 198.18.0.1:sport > 198.19.0.1:53.
func udpFrame(sport uint16) []byte {
	f := []byte{
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00, // Ethernet
		0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 1, // IPv4, UDP
		0, 0, 0, 53, 0, 8, 0, 0, // UDP
	}
	binary.BigEndian.PutUint16(f[34:], sport)
	return f
}

// TestEngineHashAutoOnVeth runs the engine with --hash auto on veth, whose
// device hash is the kernel's skb_get_hash of a frame sent through the stack
// (here AF_PACKET), with type L4 for UDP: every record must carry the device
// hash, equal to the kernel oracle's hash of its frame.
func TestEngineHashAutoOnVeth(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
	oracle, err := kernel.NewHashOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer oracle.Close()
	src, err := source.OpenAFXDP(source.AFXDPConfig{Iface: lab.Host, Mode: source.XDPNative, RxMode: source.RxPoll})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if !src.Info().Metadata {
		t.Fatalf("veth on Linux %s: %s", kernel.Release(), src.Info().XDPProgram)
	}
	const flows = 200
	want := map[uint16]uint32{} // by source port
	for p := range uint16(flows) {
		if want[1024+p], err = oracle.Hash(udpFrame(1024 + p)); err != nil {
			t.Fatal(err)
		}
	}
	var rs recorders
	e, err := NewEngine(EngineConfig{
		Source:      src,
		Steering:    hash.SteerConfig{Workers: 2, Hash: hash.KindAuto, Key: testKey},
		NewConsumer: rs.factory(1 << 16),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx)
		done <- err
	}()
	var fd int
	if err := lab.InPeer(func() (err error) {
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for p := range uint16(flows) {
		if err := unix.Sendto(fd, udpFrame(1024+p), 0, &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); e.Stats().Accounting.Received < flows && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	if st.HashSources.Device != flows || st.HashSources.Kernel != 0 {
		t.Errorf("hash sources %+v, want %d device", st.HashSources, flows)
	}
	n := 0
	for _, c := range rs.all {
		for _, r := range c.got {
			n++
			if w, ok := want[r.SPort]; !ok || r.Hash != w || r.HashSource != hash.SourceDevice || !r.L4 {
				t.Errorf("record of port %d: hash %#08x from %v (l4 %v), want the device's %#08x", r.SPort, r.Hash, r.HashSource, r.L4, w)
			}
		}
	}
	if n != flows {
		t.Errorf("%d records, want %d", n, flows)
	}
}
