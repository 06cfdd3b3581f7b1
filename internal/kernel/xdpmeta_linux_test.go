//go:build linux

package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

func TestParseXDPMetadata(t *testing.T) {
	// meta builds the 32 bytes the program writes, in front of two bytes of
	// a frame that the parser must ignore.
	meta := func(ts uint64, hash, typ uint32, tpid, tci uint16, tsRet, hashRet, vlanRet int16, magic uint32) []byte {
		b := make([]byte, XDPMetadataLen, XDPMetadataLen+2)
		ne := binary.NativeEndian
		ne.PutUint64(b[0:], ts)
		ne.PutUint32(b[8:], hash)
		ne.PutUint32(b[12:], typ)
		binary.BigEndian.PutUint16(b[16:], tpid) // __be16, as the kfunc writes it
		ne.PutUint16(b[18:], tci)
		ne.PutUint16(b[20:], uint16(tsRet))
		ne.PutUint16(b[22:], uint16(hashRet))
		ne.PutUint16(b[24:], uint16(vlanRet))
		ne.PutUint32(b[28:], magic)
		return b
	}
	enodata, eopnotsupp := -int16(unix.ENODATA), -int16(unix.EOPNOTSUPP)
	tests := []struct {
		name string
		head []byte
		want XDPMetadata
	}{
		{"everything", append([]byte{0xff, 0xff}, meta(1234567890, 0xdeadbeef, uint32(RSSL4|RSSL4UDP|RSSL3IPv4), 0x88a8, 0x2064, 0, 0, 0, xdpMetadataMagic)...),
			XDPMetadata{Valid: true, Timestamp: 1234567890, Hash: 0xdeadbeef, HashType: RSSL4 | RSSL4UDP | RSSL3IPv4, VLANProto: 0x88a8, VLANTCI: 0x2064}},
		{"veth frame without skb", meta(0, 0, 0, 0, 0, enodata, enodata, enodata, xdpMetadataMagic),
			XDPMetadata{Valid: true, HashErr: KfuncErr(unix.ENODATA), VLANErr: KfuncErr(unix.ENODATA), TimestampErr: KfuncErr(unix.ENODATA)}},
		{"untagged frame, driver without timestamps", meta(0, 7, 0, 0, 0, eopnotsupp, 0, enodata, xdpMetadataMagic),
			XDPMetadata{Valid: true, Hash: 7, VLANErr: KfuncErr(unix.ENODATA), TimestampErr: KfuncErr(unix.EOPNOTSUPP)}},
		{"no magic: nothing written", meta(1, 2, 3, 0x8100, 5, 0, 0, 0, 0), XDPMetadata{}},
		{"magic of another layout", meta(1, 2, 3, 0x8100, 5, 0, 0, 0, xdpMetadataMagic+1), XDPMetadata{}},
		{"head one byte short", meta(1, 2, 3, 0x8100, 5, 0, 0, 0, xdpMetadataMagic)[1:], XDPMetadata{}},
		{"no head", nil, XDPMetadata{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseXDPMetadata(tt.head); got != tt.want {
				t.Errorf("ParseXDPMetadata() = %+v, want %+v", got, tt.want)
			}
		})
	}
	if size := unsafe.Sizeof(XDPMetadata{}); size != 32 {
		t.Errorf("XDPMetadata is %d bytes, want 32 (its doc says so)", size)
	}
	head := meta(1, 2, 3, 0x8100, 5, 0, 0, 0, xdpMetadataMagic)
	if allocs := testing.AllocsPerRun(100, func() { ParseXDPMetadata(head) }); allocs != 0 {
		t.Errorf("ParseXDPMetadata allocates %.0f times", allocs)
	}
}

func TestXDPMetadataHas(t *testing.T) {
	tests := []struct {
		name              string
		m                 XDPMetadata
		hash, vlan, stamp bool
	}{
		{"zero value", XDPMetadata{}, false, false, false},
		{"all there", XDPMetadata{Valid: true, Timestamp: 1}, true, true, true},
		{"veth: timestamp 0 with success", XDPMetadata{Valid: true, VLANErr: KfuncErr(unix.ENODATA)}, true, false, false},
		{"no skb", XDPMetadata{Valid: true, HashErr: KfuncErr(unix.ENODATA), VLANErr: KfuncErr(unix.ENODATA), TimestampErr: KfuncErr(unix.ENODATA)}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if h, v, s := tt.m.HasHash(), tt.m.HasVLAN(), tt.m.HasTimestamp(); h != tt.hash || v != tt.vlan || s != tt.stamp {
				t.Errorf("HasHash, HasVLAN, HasTimestamp = %v, %v, %v; want %v, %v, %v", h, v, s, tt.hash, tt.vlan, tt.stamp)
			}
		})
	}
}

func TestRSSHashTypeString(t *testing.T) {
	tests := []struct {
		t    RSSHashType
		want string
		l4   bool
	}{
		{RSSTypeNone, "none", false},
		{RSSL4, "l4", true},
		{RSSL3IPv6 | RSSL4 | RSSL4TCP, "l3-ipv6|l4|l4-tcp", true},
		{RSSL3IPv4 | 1<<12, "l3-ipv4|0x1000", false},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want || tt.t.IsL4() != tt.l4 {
			t.Errorf("%#x: String() = %q, IsL4() = %v; want %q, %v", uint32(tt.t), got, tt.t.IsL4(), tt.want, tt.l4)
		}
	}
}

func TestXDPMetadataFeaturesString(t *testing.T) {
	if got, want := (XDPMetaHash | XDPMetaVLANTag | XDPMetaTimestamp).String(), "timestamp|hash|vlan-tag"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := XDPMetadataFeatures(0).String(); got != "none" {
		t.Errorf("String() = %q, want none", got)
	}
}

// TestXDPMetadataFeaturesOf asks for veth's features (all three since 6.8)
// and lo's (none: lo has no XDP metadata ops).
func TestXDPMetadataFeaturesOf(t *testing.T) {
	lab := newLab(t, 1)
	f, err := XDPMetadataFeaturesOf(lab.HostIndex)
	if err != nil {
		t.Fatal(err)
	}
	if want := XDPMetaTimestamp | XDPMetaHash | XDPMetaVLANTag; f != want {
		t.Errorf("veth: features %v, want %v", f, want)
	}
	if _, err := XDPMetadataFeaturesOf(1 << 30); !errors.Is(err, unix.ENODEV) {
		t.Errorf("no such interface: %v, want ENODEV", err)
	}
	err = lab.InPeer(func() error {
		f, err := XDPMetadataFeaturesOf(loopbackIfindex)
		if err == nil && f != 0 {
			err = fmt.Errorf("lo: features %v, want none", f)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

func TestLoadXSKMetadataRedirectChoice(t *testing.T) {
	lab := newLab(t, 1)
	xdptest.SkipIfNotSupported(t, HaveXDPMetadataKfuncs())
	t.Run("native on veth", func(t *testing.T) {
		r, err := LoadXSKMetadataRedirect(lab.HostIndex, 1, XDPNative)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if c := r.Choice(); !c.Metadata || !strings.HasPrefix(c.String(), "metadata program") {
			t.Fatalf("Choice() = %v, want the metadata program", c)
		}
		// Bound to the host end in native mode: anything else is refused
		// before the kernel sees it.
		if err := r.Attach(lab.HostIndex, XDPGeneric); err == nil || !strings.Contains(err.Error(), "bound to") {
			t.Errorf("Attach in generic mode: %v, want a refusal", err)
		}
		if err := lab.InPeer(func() error { return r.Attach(loopbackIfindex, XDPNative) }); err == nil {
			t.Error("Attach to another interface succeeded")
		}
		if err := r.Attach(lab.HostIndex, XDPNative); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if got := attached(t, lab.HostIndex); got != 0 {
			t.Errorf("after Close a program is attached in %v mode", got)
		}
	})
	t.Run("generic", func(t *testing.T) {
		r, err := LoadXSKMetadataRedirect(lab.HostIndex, 1, XDPGeneric)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if c := r.Choice(); c.Metadata || !strings.Contains(c.String(), "native mode") {
			t.Errorf("Choice() = %v, want the plain program, for generic mode", c)
		}
		if err := r.Attach(lab.HostIndex, XDPGeneric); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("lo", func(t *testing.T) {
		err := lab.InPeer(func() error {
			r, err := LoadXSKMetadataRedirect(loopbackIfindex, 1, XDPNative)
			if err != nil {
				return err
			}
			defer r.Close()
			if c := r.Choice(); c.Metadata || !strings.Contains(c.String(), "implements no XDP RX metadata kfunc") {
				return fmt.Errorf("Choice() = %v, want the plain program, for lo", c)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	})
}

// metaLab is a veth pair with one queue per end (one TX queue on the
// sending end: with several, the sender computes skb_get_hash to pick one and
// the receiver reuses that hash), the metadata program on Host in native
// mode, and an AF_XDP socket on Host's queue 0.
type metaLab struct {
	*vethlab.Lab
	xsk *XSK
}

func newMetaLab(tb testing.TB) *metaLab {
	tb.Helper()
	lab := newLab(tb, 1)
	xdptest.SkipIfNotSupported(tb, HaveXDPMetadataKfuncs())
	r, err := LoadXSKMetadataRedirect(lab.HostIndex, 1, XDPNative)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	if !r.Choice().Metadata {
		tb.Fatalf("veth on Linux %s: %v, want the metadata program", Release(), r.Choice())
	}
	if err := r.Attach(lab.HostIndex, XDPNative); err != nil {
		tb.Fatal(err)
	}
	xsk, err := NewXSK(lab.HostIndex, 0, XSKConfig{Frames: 256, RingSize: 128})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { xsk.Close() })
	if err := r.Register(xsk); err != nil {
		tb.Fatal(err)
	}
	if !xsk.HasMetadata() {
		tb.Fatal("the socket does not know its frames carry metadata")
	}
	return &metaLab{Lab: lab, xsk: xsk}
}

// received is a frame the socket got, copied, with its metadata.
type received struct {
	frame []byte
	meta  XDPMetadata
}

// receive takes n frames off the socket, waiting at most timeout for them
// (a timer wakes the socket: no sleep), and fails the test with fewer.
func (l *metaLab) receive(tb testing.TB, n int, timeout time.Duration) []received {
	tb.Helper()
	timer := time.AfterFunc(timeout, func() { l.xsk.Wake() })
	defer timer.Stop()
	deadline := time.Now().Add(timeout)
	var out []received
	for len(out) < n && time.Now().Before(deadline) {
		if err := l.xsk.Wait(); err != nil {
			tb.Fatal(err)
		}
		k := l.xsk.Receive(n - len(out))
		for i := range k {
			out = append(out, received{append([]byte(nil), l.xsk.Frame(i)...), l.xsk.Metadata(i)})
		}
	}
	if len(out) != n {
		tb.Fatalf("received %d frames in %v, want %d", len(out), timeout, n)
	}
	return out
}

// metaFrame is a test frame with whether the kernel's hash of it covers ports.
type metaFrame struct {
	name  string
	frame []byte
	l4    bool
}

func metaFrames(dst net.HardwareAddr) []metaFrame {
	tcp := ipv4TCP()
	copy(tcp, dst)
	udp := testFrame(dst, 7, 60)
	icmp := testFrame(dst, 8, 60)
	icmp[14+9] = 1 // IPv4 protocol ICMP: no ports for the dissector
	udp6 := make([]byte, 14+40+8+4)
	copy(udp6, dst)
	copy(udp6[6:], []byte{0x02, 0, 0, 0, 0, 0x01})
	binary.BigEndian.PutUint16(udp6[12:], 0x86dd)
	// IPv6: version 6, no flow label, payload 12, UDP, hop limit 64,
	// 2001:db8::1 -> 2001:db8::2; UDP 5000 -> 53, length 12.
	ip6 := udp6[14:]
	ip6[0] = 0x60
	binary.BigEndian.PutUint16(ip6[4:], 12)
	ip6[6], ip6[7] = 17, 64
	copy(ip6[8:], net.ParseIP("2001:db8::1"))
	copy(ip6[24:], net.ParseIP("2001:db8::2"))
	binary.BigEndian.PutUint16(ip6[40:], 5000)
	binary.BigEndian.PutUint16(ip6[42:], 53)
	binary.BigEndian.PutUint16(ip6[44:], 12)
	// ICMPv6 with flow label 0x12345: no ports, but the kernel counts a
	// flow label as L4 (flow_keys_have_l4).
	icmp6 := append([]byte(nil), udp6...)
	icmp6[14+1], icmp6[14+2], icmp6[14+3] = 0x01, 0x23, 0x45
	icmp6[14+6] = 58
	return []metaFrame{{"ipv4 tcp", tcp, true}, {"ipv4 udp", udp, true}, {"ipv4 icmp", icmp, false}, {"ipv6 udp", udp6, true}, {"ipv6 icmp flow label", icmp6, true}}
}

// TestXDPMetadataHash sends frames through the peer's stack: each arrives
// with the device hash veth gives, the kernel's skb_get_hash of the frame
// (which the oracle computes too), of type L4 when the hash covers ports.
func TestXDPMetadataHash(t *testing.T) {
	l := newMetaLab(t)
	o := newHashOracle(t)
	frames := metaFrames(l.HostMAC)
	var raw [][]byte
	for _, f := range frames {
		raw = append(raw, f.frame)
	}
	xdptest.Send(t, l.Lab, raw)
	got := l.receive(t, len(frames), 5*time.Second)
	for i, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			m := got[i].meta
			if !m.HasHash() {
				t.Fatalf("metadata %+v: no hash", m)
			}
			if want := kernelHash(t, o, f.frame); m.Hash != want {
				t.Errorf("device hash %#08x, kernel's %#08x", m.Hash, want)
			}
			if m.HashType.IsL4() != f.l4 {
				t.Errorf("hash type %v, want L4 = %v", m.HashType, f.l4)
			}
			if m.HasVLAN() || m.VLANErr.Errno() != unix.ENODATA {
				t.Errorf("VLAN %#04x/%#04x (%v) on an untagged frame, want ENODATA", m.VLANProto, m.VLANTCI, m.VLANErr)
			}
			if m.TimestampErr != 0 {
				t.Errorf("timestamp error %v: veth gives the skb's (zero) hardware stamp", m.TimestampErr)
			}
		})
	}
}

// TestXDPMetadataVLAN sends frames through a peer whose egress tags every
// other one with a hardware tag: they arrive untagged with the tag in the
// metadata, and their device hash is the kernel's hash of the frame with the
// tag in its bytes.
func TestXDPMetadataVLAN(t *testing.T) {
	for _, tpid := range []uint16{unix.ETH_P_8021Q, unix.ETH_P_8021AD} {
		t.Run(fmt.Sprintf("%#04x", tpid), func(t *testing.T) {
			l := newMetaLab(t)
			o := newHashOracle(t)
			const tci = 0x2064 // priority 1, VLAN 100
			var push *VLANPush
			err := l.InPeer(func() (err error) {
				push, err = AttachVLANPush(l.PeerIndex, tpid, tci)
				return err
			})
			xdptest.SkipIfNotSupported(t, err)
			defer push.Close()
			frames := metaFrames(l.HostMAC)
			var raw [][]byte
			for _, f := range frames {
				// Each frame twice: the first of a pair is tagged (even).
				raw = append(raw, f.frame, f.frame)
			}
			xdptest.Send(t, l.Lab, raw)
			got := l.receive(t, len(raw), 5*time.Second)
			for i, r := range got {
				f := frames[i/2]
				tagged := i%2 == 0
				m := r.meta
				if string(r.frame) != string(f.frame) {
					t.Errorf("frame %d (%s): received bytes differ from those sent", i, f.name)
				}
				if m.HasVLAN() != tagged || tagged && (m.VLANProto != tpid || m.VLANTCI != tci) {
					t.Errorf("frame %d (%s): VLAN %#04x/%#04x (%v), want tagged = %v", i, f.name, m.VLANProto, m.VLANTCI, m.VLANErr, tagged)
				}
				want := kernelHash(t, o, f.frame)
				if tagged {
					want = kernelHash(t, o, withTag(f.frame, tpid, tci))
				}
				if !m.HasHash() || m.Hash != want {
					t.Errorf("frame %d (%s): device hash %#08x (%v), want %#08x", i, f.name, m.Hash, m.HashErr, want)
				}
			}
			seen, pushed, err := push.Counts()
			if err != nil || seen != uint64(len(raw)) || pushed != seen/2 {
				t.Errorf("Counts() = %d, %d, %v; want %d, %d", seen, pushed, err, len(raw), len(raw)/2)
			}
		})
	}
}

// withTag is frame with a VLAN tag inserted after the MAC addresses.
func withTag(frame []byte, tpid, tci uint16) []byte {
	out := append([]byte(nil), frame[:12]...)
	out = binary.BigEndian.AppendUint16(out, tpid)
	out = binary.BigEndian.AppendUint16(out, tci)
	return append(out, frame[12:]...)
}

// TestXDPMetadataSenders sends with each of the generators' senders from
// the peer. AF_PACKET frames carry the kernel's hash of the frame. XDP live
// frames reach the host end's XDP program without an skb, so veth has no
// hash, tag or timestamp for them (ENODATA): with nothing to tell, the
// program writes no record, and they arrive all the same.
// AF_XDP copy-mode transmissions arrive as skbs, but with a hash of no type
// that is not the frame's (see docs/afxdp.md; frames of one sending socket
// share it): the test pins that, so that a kernel that changes it is
// noticed.
func TestXDPMetadataSenders(t *testing.T) {
	xdptest.RequireRoot(t)
	xdptest.SkipIfNotSupported(t, LiveFramesSupported())
	l := newMetaLab(t)
	if err := PrepareReceiver(l.Host); err != nil {
		t.Fatal(err)
	}
	o := newHashOracle(t)
	ft, frames := testTable(l.HostMAC, []int{60, 200}, []uint32{0, 1})
	for _, tt := range senderKinds(t, l.Lab, ft) {
		t.Run(tt.name, func(t *testing.T) {
			const n = 8
			sendWith(t, l.Lab, tt, 0, n)
			got := l.receive(t, n, 5*time.Second)
			for i, r := range got {
				m := r.meta
				if tt.name == "afxdp" {
					if want := kernelHash(t, o, frames[i%2]); !m.HasHash() || m.HashType != RSSTypeNone || m.Hash == want {
						t.Errorf("frame %d: metadata %+v; want a hash of no type, not the frame's %#08x", i, m, want)
					}
					continue
				}
				if tt.name == "xdp" {
					if m.Valid {
						t.Errorf("frame %d: metadata %+v, want none (every kfunc fails with ENODATA)", i, m)
					}
					continue
				}
				if want := kernelHash(t, o, frames[i%2]); !m.HasHash() || m.Hash != want || !m.HashType.IsL4() {
					t.Errorf("frame %d: metadata %+v, want an L4 hash %#08x", i, m, want)
				}
			}
		})
	}
}

// TestXSKMetadataForgotten checks that a frame's metadata does not outlive
// it: after the socket gives a frame back, its magic is gone.
func TestXSKMetadataForgotten(t *testing.T) {
	l := newMetaLab(t)
	frames := metaFrames(l.HostMAC)
	xdptest.Send(t, l.Lab, [][]byte{frames[0].frame})
	l.receive(t, 1, 5*time.Second)
	addr := l.xsk.held[0].Addr
	if !ParseXDPMetadata(l.xsk.umem[addr-XDPMetadataLen : addr]).Valid {
		t.Fatal("no metadata in front of the received frame")
	}
	l.xsk.Receive(1) // gives the frame back
	if m := ParseXDPMetadata(l.xsk.umem[addr-XDPMetadataLen : addr]); m.Valid {
		t.Errorf("metadata %+v still there after the frame went back to the kernel", m)
	}
}

func TestXSKMetadataAllocs(t *testing.T) {
	l := newMetaLab(t)
	frames := metaFrames(l.HostMAC)
	xdptest.Send(t, l.Lab, [][]byte{frames[0].frame, frames[1].frame})
	l.receive(t, 2, 5*time.Second)
	// receive took both in one Receive or in two; either way the socket
	// holds the last batch, at least one frame.
	var m XDPMetadata
	if allocs := testing.AllocsPerRun(100, func() { m = l.xsk.Metadata(0) }); allocs != 0 {
		t.Errorf("Metadata allocates %.0f times", allocs)
	}
	if !m.HasHash() {
		t.Errorf("metadata %+v: no hash", m)
	}
	batch := make([]XDPMetadata, 0, 64)
	if allocs := testing.AllocsPerRun(100, func() { batch = l.xsk.AppendMetadata(batch[:0]) }); allocs != 0 {
		t.Errorf("AppendMetadata allocates %.0f times", allocs)
	}
	if len(batch) != l.xsk.heldFrames() || batch[0] != m {
		t.Errorf("AppendMetadata gave %d records, the first %+v; want %d, the first %+v", len(batch), batch[0], l.xsk.heldFrames(), m)
	}
}

// BenchmarkParseXDPMetadata decodes one record.
func BenchmarkParseXDPMetadata(b *testing.B) {
	head := make([]byte, XDPMetadataLen)
	binary.NativeEndian.PutUint32(head[metaMagic:], xdpMetadataMagic)
	var m XDPMetadata
	for b.Loop() {
		m = ParseXDPMetadata(head)
	}
	if !m.Valid {
		b.Fatal("not valid")
	}
}

// BenchmarkRedirectProgram measures the kernel's time in the plain and the
// metadata redirect program per frame (BPF run-time statistics), for frames
// the peer sends through its stack and the socket receives, metadata read.
// Sub-benchmarks alternate, so -count=N interleaves them.
func BenchmarkRedirectProgram(b *testing.B) {
	for _, name := range []string{"plain", "metadata"} {
		b.Run(name, func(b *testing.B) {
			lab := newLab(b, 1)
			var r *XSKRedirect
			var err error
			if name == "plain" {
				r, err = LoadXSKRedirect(1)
			} else {
				r, err = LoadXSKMetadataRedirect(lab.HostIndex, 1, XDPNative)
			}
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			if (name == "metadata") != r.Choice().Metadata {
				b.Fatalf("%s: %v", name, r.Choice())
			}
			if err := r.Attach(lab.HostIndex, XDPNative); err != nil {
				b.Fatal(err)
			}
			xsk, err := NewXSK(lab.HostIndex, 0, XSKConfig{Frames: 512, RingSize: 256})
			if err != nil {
				b.Fatal(err)
			}
			defer xsk.Close()
			if err := r.Register(xsk); err != nil {
				b.Fatal(err)
			}
			var fd int
			if err := lab.InPeer(func() (err error) {
				fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
				return err
			}); err != nil {
				b.Fatal(err)
			}
			defer unix.Close(fd)
			stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
			if err != nil {
				b.Fatal(err)
			}
			defer stats.Close()
			frame := testFrame(lab.HostMAC, 1, 60)
			to := &unix.SockaddrLinklayer{Ifindex: lab.PeerIndex}
			var hashes int
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(64, b.N-done)
				for range n {
					if err := unix.Sendto(fd, frame, 0, to); err != nil {
						b.Fatal(err)
					}
				}
				for got := 0; got < n; {
					if err := xsk.Wait(); err != nil {
						b.Fatal(err)
					}
					k := xsk.Receive(n - got)
					for i := range k {
						if xsk.Metadata(i).HasHash() {
							hashes++
						}
					}
					got += k
				}
				done += n
			}
			b.StopTimer()
			st, err := r.prog.Stats()
			if err != nil {
				b.Fatal(err)
			}
			if st.RunCount < uint64(b.N) {
				b.Fatalf("program ran %d times for %d frames", st.RunCount, b.N)
			}
			if want := map[bool]int{true: b.N}[name == "metadata"]; hashes != want {
				b.Fatalf("%d frames with a device hash, want %d", hashes, want)
			}
			b.ReportMetric(float64(st.Runtime.Nanoseconds())/float64(st.RunCount), "prog-ns/frame")
		})
	}
}
