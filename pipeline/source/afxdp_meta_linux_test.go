package source

import (
	"strings"
	"testing"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestAFXDPMetadata checks which XDP program the source chooses and that,
// under the metadata program, each batch carries one metadata record per
// frame: on veth, frames sent through AF_PACKET reach it as skbs, so every
// one has a device hash.
func TestAFXDPMetadata(t *testing.T) {
	tests := []struct {
		name     string
		cfg      AFXDPConfig
		metadata bool
		reason   string // in Info().XDPProgram
	}{
		{"native", AFXDPConfig{Mode: XDPNative, RxMode: RxPoll}, true, "metadata program"},
		{"native/turned off", AFXDPConfig{Mode: XDPNative, RxMode: RxPoll, NoMetadata: true}, false, "turned off"},
		{"generic", AFXDPConfig{Mode: XDPGeneric, RxMode: RxPoll}, false, "native mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
			cfg := tt.cfg
			cfg.Iface = lab.Host
			src := openSource(t, cfg)
			info := src.Info()
			if info.Metadata != tt.metadata || !strings.Contains(info.XDPProgram, tt.reason) {
				t.Fatalf("Info() = %+v, want Metadata %v and a program that says %q", info, tt.metadata, tt.reason)
			}
			frames := taggedFrames(2)
			newPeerSender(t, lab).sendAll(t, frames)
			q := src.Queues()[0]
			b := NewBatch(len(frames))
			withHash := 0
			for got := 0; got < len(frames); got += b.Len() {
				if err := q.Receive(b); err != nil {
					t.Fatal(err)
				}
				if !tt.metadata {
					if len(b.Meta) != 0 {
						t.Fatalf("the plain program's batch has %d metadata records", len(b.Meta))
					}
					continue
				}
				if len(b.Meta) != b.Len() {
					t.Fatalf("a batch of %d frames with %d metadata records", b.Len(), len(b.Meta))
				}
				for _, m := range b.Meta {
					if m.HasHash() {
						withHash++
					}
				}
			}
			if tt.metadata && withHash != len(frames) {
				t.Errorf("%d of %d frames sent through AF_PACKET have a device hash, want all", withHash, len(frames))
			}
		})
	}
}
