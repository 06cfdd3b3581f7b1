//go:build linux

package kernel

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// tcxEgressPrograms is the number of TCX egress programs on interface
// ifindex of the lab's namespace.
func tcxEgressPrograms(tb testing.TB, lab *vethlab.Lab, ifindex int) int {
	tb.Helper()
	var n int
	err := lab.InPeer(func() error {
		res, err := link.QueryPrograms(link.QueryOptions{Target: ifindex, Attach: ebpf.AttachTCXEgress})
		if err != nil {
			return err
		}
		n = len(res.Programs)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestVLANPush tags the frames the peer sends through its stack, and checks
// on the host end that every other one, from the first, arrived with the tag
// (as the receive path's auxiliary data shows it; Capture puts it back into
// the bytes).
func TestVLANPush(t *testing.T) {
	lab := newLab(t, 1)
	capture, err := NewCapture(lab.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer capture.Close()
	const tci = 0xa00a // priority 5, VLAN 10
	var push *VLANPush
	err = lab.InPeer(func() (err error) {
		push, err = AttachVLANPush(lab.PeerIndex, unix.ETH_P_8021AD, tci)
		return err
	})
	xdptest.SkipIfNotSupported(t, err)
	defer push.Close()
	if n := tcxEgressPrograms(t, lab, lab.PeerIndex); n != 1 {
		t.Fatalf("%d TCX egress programs on the peer, want 1", n)
	}
	var sent [][]byte
	for i := range 6 {
		sent = append(sent, testFrame(lab.HostMAC, i, 60+i))
	}
	xdptest.Send(t, lab, sent)
	got, err := capture.Collect(len(sent), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sent) {
		t.Fatalf("captured %d frames, want %d", len(got), len(sent))
	}
	for i, f := range got {
		want := sent[i]
		if i%2 == 0 {
			want = withTag(sent[i], unix.ETH_P_8021AD, tci)
		}
		if !bytes.Equal(f, want) {
			t.Errorf("frame %d:\n got % x\nwant % x", i, f, want)
		}
	}
	seen, pushed, err := push.Counts()
	if err != nil || seen != 6 || pushed != 3 {
		t.Errorf("Counts() = %d, %d, %v; want 6, 3", seen, pushed, err)
	}
	if err := push.Close(); err != nil {
		t.Fatal(err)
	}
	if err := push.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := push.Counts(); err == nil {
		t.Error("Counts after Close succeeded")
	}
	if n := tcxEgressPrograms(t, lab, lab.PeerIndex); n != 0 {
		t.Errorf("%d TCX egress programs on the peer after Close, want 0", n)
	}
	// Nothing is tagged any more.
	xdptest.Send(t, lab, sent[:2])
	got, err = capture.Collect(2, 2*time.Second)
	if err != nil || len(got) != 2 || !bytes.Equal(got[0], sent[0]) {
		t.Errorf("after Close: captured %d frames (%v), the first % x; want %d untagged", len(got), err, got, 2)
	}
}

func TestVLANPushRefused(t *testing.T) {
	lab := newLab(t, 1)
	tests := []struct {
		name    string
		ifindex int
		tpid    uint16
		want    string
	}{
		{"TPID of no VLAN", lab.HostIndex, 0x0800, "want 0x8100 or 0x88a8"},
		{"no such interface", 1 << 30, unix.ETH_P_8021Q, "attach VLAN push program to ifindex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := AttachVLANPush(tt.ifindex, tt.tpid, 1)
			if err == nil {
				v.Close()
				t.Fatal("attached")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("AttachVLANPush() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestVLANPushProgram runs the program over test frames (BPF_PROG_TEST_RUN)
// and checks the alternation on its counters, independent of any interface.
func TestVLANPushProgram(t *testing.T) {
	newHashOracle(t) // root, and the test-run machinery
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.SchedCLS, Instructions: vlanPushProgram(m.FD(), unix.ETH_P_8021Q, 5)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range 5 {
		ret, err := p.Run(&ebpf.RunOptions{Data: ipv4TCP()})
		if err != nil || int32(ret) != tcxNext {
			t.Fatalf("run %d: %d, %v; want TCX_NEXT", i, int32(ret), err)
		}
		var val [2]uint64
		if err := m.Lookup(uint32(0), &val); err != nil {
			t.Fatal(err)
		}
		if want := [2]uint64{uint64(i + 1), uint64(i/2 + 1)}; val != want {
			t.Errorf("after %d frames: seen, pushed = %v, want %v", i+1, val, want)
		}
	}
}

// TestVLANPushSenders checks which of the generators' senders pass the
// egress hook: only AF_PACKET through the qdisc layer; the bypassing
// PacketSender, AF_XDP transmission and XDP live frames skip it.
func TestVLANPushSenders(t *testing.T) {
	lab := newGenLab(t)
	ft, frames := testTable(lab.HostMAC, []int{60, 61, 62, 63}, []uint32{0, 1, 2, 3})
	kinds := append(senderKinds(t, lab, ft), senderKind{"packet through qdisc", func(start uint64) (sender, error) {
		s, err := NewPacketSender(lab.PeerIndex, ft, start)
		if err == nil {
			err = s.ThroughQdisc()
		}
		return s, err
	}})
	for _, tt := range kinds {
		t.Run(tt.name, func(t *testing.T) {
			viaHook := tt.name == "packet through qdisc"
			c, err := NewCapture(lab.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var push *VLANPush
			err = lab.InPeer(func() (err error) {
				push, err = AttachVLANPush(lab.PeerIndex, unix.ETH_P_8021Q, 7)
				return err
			})
			xdptest.SkipIfNotSupported(t, err)
			defer push.Close()
			sendWith(t, lab, tt, 0, 4)
			got, err := c.Collect(4, 2*time.Second)
			if err != nil || len(got) != 4 {
				t.Fatalf("captured %d frames (%v), want 4", len(got), err)
			}
			for i, f := range got {
				want := frames[i]
				if viaHook && i%2 == 0 {
					want = withTag(frames[i], unix.ETH_P_8021Q, 7)
				}
				if !bytes.Equal(f, want) {
					t.Errorf("frame %d:\n got % x\nwant % x", i, f, want)
				}
			}
			seen, _, err := push.Counts()
			if want := map[bool]uint64{true: 4}[viaHook]; err != nil || seen != want {
				t.Errorf("the program saw %d frames (%v), want %d", seen, err, want)
			}
		})
	}
}
