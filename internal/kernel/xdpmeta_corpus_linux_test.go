//go:build linux

package kernel_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestXDPMetadataCorpus sends every corpus frame without an in-band VLAN
// tag through the stack of a veth end with one TX queue, each twice, the
// first of the pair with a hardware VLAN tag (VLANPush), and checks the
// device hash the metadata program reads on the other end: the kernel's
// skb_get_hash of the frame as the oracle computes it; for the tagged one,
// whose tag must be in the metadata, the hash a test run computes after
// bpf_skb_vlan_push. It logs the tagged frames whose hash is not that of the
// frame with the tag in its bytes: 802.3 length frames, whose skb->protocol
// (ETH_P_802_2 or ETH_P_802_3 from eth_type_trans) is what the kernel's
// hardware-tag branch dissects on with, not the length field.
func TestXDPMetadataCorpus(t *testing.T) {
	lab := xdptest.NewLab(t, vethlab.Config{Queues: 1})
	xdptest.SkipIfNotSupported(t, kernel.HaveXDPMetadataKfuncs())
	r, err := kernel.LoadXSKMetadataRedirect(lab.HostIndex, 1, kernel.XDPNative)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Choice().Metadata {
		t.Fatalf("veth on Linux %s: %v", kernel.Release(), r.Choice())
	}
	if err := r.Attach(lab.HostIndex, kernel.XDPNative); err != nil {
		t.Fatal(err)
	}
	xsk, err := kernel.NewXSK(lab.HostIndex, 0, kernel.XSKConfig{Frames: 512, RingSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer xsk.Close()
	if err := r.Register(xsk); err != nil {
		t.Fatal(err)
	}
	oracle, err := kernel.NewHashOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer oracle.Close()
	const tpid, tci = unix.ETH_P_8021Q, 0x0123
	// The kernel's hash of a frame received with a hardware tag: push the
	// tag into the skb's metadata, then skb_get_hash.
	pushOracle, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SchedCLS,
		Instructions: asm.Instructions{
			asm.Mov.Reg(asm.R6, asm.R1),
			asm.Mov.Imm(asm.R2, int32(tpid>>8|tpid<<8&0xff00)), // __be16
			asm.Mov.Imm(asm.R3, tci),
			asm.FnSkbVlanPush.Call(),
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.FnGetHashRecalc.Call(),
			asm.Return(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer pushOracle.Close()
	var push *kernel.VLANPush
	var fd int
	err = lab.InPeer(func() (err error) {
		if push, err = kernel.AttachVLANPush(lab.PeerIndex, tpid, tci); err != nil {
			return err
		}
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	})
	xdptest.SkipIfNotSupported(t, err) // TCX, for the tag
	defer push.Close()
	defer unix.Close(fd)
	to := &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}

	var frames []corpus.Frame
	for _, f := range corpus.Build() {
		switch binary.BigEndian.Uint16(f.Data[12:]) {
		case unix.ETH_P_8021Q, unix.ETH_P_8021AD, 0x9100:
			continue // AF_PACKET moves the network header past the tag: see docs/afxdp.md
		}
		frames = append(frames, f)
	}
	// Pairs in batches small enough for veth's ring and the socket's.
	const batch = 32
	var checked, failed int
	inBand := map[string]int{} // tagged frames whose hash is not the in-band tagged frame's, by family
	for start := 0; start < len(frames); start += batch {
		chunk := frames[start:min(start+batch, len(frames))]
		for _, f := range chunk {
			for range 2 {
				if err := unix.Sendto(fd, f.Data, 0, to); err != nil {
					t.Fatalf("send %s: %v", f.Name, err)
				}
			}
		}
		got := receiveMetadata(t, xsk, 2*len(chunk), 5*time.Second)
		for i, m := range got {
			f := chunk[i/2]
			tagged := i%2 == 0
			want, err := oracle.Hash(f.Data)
			if tagged {
				want, err = pushOracle.Run(&ebpf.RunOptions{Data: f.Data})
				if inband, ierr := oracle.Hash(withTag(f.Data, tpid, tci)); ierr == nil && inband != m.Hash {
					inBand[f.Family()]++
				}
			}
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			checked++
			if !m.HasHash() || m.Hash != want || m.HasVLAN() != tagged || tagged && (m.VLANProto != tpid || m.VLANTCI != tci) {
				failed++
				if failed <= 10 {
					t.Errorf("%s (tagged %v): metadata %+v, want hash %#08x", f.Name, tagged, m, want)
				}
			}
		}
	}
	t.Logf("tagged frames whose device hash differs from the hash of the frame with the tag in its bytes, by family: %v", inBand)
	for fam := range inBand {
		if !strings.HasPrefix(fam, "802.3/") {
			t.Errorf("family %s: a hardware tag changes its hash from the in-band tagged frame's; only 802.3 length frames should", fam)
		}
	}
	t.Logf("%d corpus frames, each plain and tagged: %d checked, %d differ", len(frames), checked, failed)
	if seen, pushed, err := push.Counts(); err != nil || seen != uint64(2*len(frames)) || pushed != uint64(len(frames)) {
		t.Errorf("VLAN push Counts() = %d, %d, %v; want %d, %d", seen, pushed, err, 2*len(frames), len(frames))
	}
}

// receiveMetadata takes n frames off xsk and returns their metadata, in
// order, waiting at most timeout (a timer wakes the socket).
func receiveMetadata(tb testing.TB, xsk *kernel.XSK, n int, timeout time.Duration) []kernel.XDPMetadata {
	tb.Helper()
	timer := time.AfterFunc(timeout, func() { xsk.Wake() })
	defer timer.Stop()
	deadline := time.Now().Add(timeout)
	out := make([]kernel.XDPMetadata, 0, n)
	for len(out) < n && time.Now().Before(deadline) {
		if err := xsk.Wait(); err != nil {
			tb.Fatal(err)
		}
		xsk.Receive(n - len(out))
		out = xsk.AppendMetadata(out)
	}
	if len(out) != n {
		tb.Fatalf("received %d frames in %v, want %d", len(out), timeout, n)
	}
	return out
}

// withTag is frame with a VLAN tag inserted after the MAC addresses.
func withTag(frame []byte, tpid, tci uint16) []byte {
	out := append([]byte(nil), frame[:12]...)
	out = binary.BigEndian.AppendUint16(out, tpid)
	out = binary.BigEndian.AppendUint16(out, tci)
	return append(out, frame[12:]...)
}
