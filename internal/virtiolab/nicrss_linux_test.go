package virtiolab_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/xdphash/xdphash/capture"
	"github.com/xdphash/xdphash/corpus"
	"github.com/xdphash/xdphash/internal/kernel"
	"github.com/xdphash/xdphash/internal/virtiolab"
	"github.com/xdphash/xdphash/internal/virtiolab/guest"
	"github.com/xdphash/xdphash/internal/xdptest"
	"github.com/xdphash/xdphash/nicrss"
	"github.com/xdphash/xdphash/pktgen"
	"github.com/xdphash/xdphash/runstats"
)

// Where the guest's run of TestNICRSSOnDevice writes its frames.
const guestFrames = "/tmp/frames.pcapng"

// The traffic of TestNICRSSOnDevice: every corpus frame once, then
// profileFrames frames of the datacenter profile, paced.
const (
	corpusRate    = 1000
	profileFrames = 4096
	profileRate   = 1000
)

// nicTestKey and nicTestTable are the RSS key and table the test sets on
// the device: not the driver's (a random key, a round-robin table).
var (
	nicTestKey = func() []byte {
		k := make([]byte, 40)
		for i := range k {
			k[i] = byte(0x3c ^ i*37 ^ i>>2)
		}
		return k
	}()
	nicTestTable = func() []uint32 {
		t := make([]uint32, 128)
		for i := range t {
			t[i] = uint32((i*5 + i/16) % 4)
		}
		return t
	}()
)

// TestNICRSSOnDevice proves package nicrss, the NIC model, frame by frame on
// the virtio-net device: the guest runs xdphash with --check-device-hash
// and writes every frame it receives with its queue and device hash
// (--write); the host sends each frame of the corpus once (every shape,
// tunnels, IPv6 with and without flow labels, fragments, ICMP, non-IP,
// mutations, truncations) and then the datacenter profile. For every frame:
// when the device hashed it, nicrss hashes it too, to exactly the device's
// hash, with the device's hash type, and it came in on the queue nicrss
// predicts (table[hash % 128]); when the device did not, nicrss gives no
// hash and predicts queue 0, where virtio-net puts such frames. Twice: with
// the driver's RSS configuration, and with a key, a table and address-only
// UDP fields (ethtool -N rx-flow-hash udp4 sd, udp6 sd) set by the test.
func TestNICRSSOnDevice(t *testing.T) {
	k := requireLab(t, "")
	bin := xdptest.XdphashBinary(t)
	// The model of the lab's QEMU: the quirks of its version.
	quirks, err := virtiolab.NICQuirks()
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	names := map[string]string{}
	for _, f := range corpus.Build() {
		if len(f.Data) < 14 || len(f.Data) > 1514 {
			continue
		}
		frames = append(frames, f.Data)
		names[frameKey(f.Data)] = f.Name
	}
	sd := uint64(kernel.RXHIPSrc | kernel.RXHIPDst)
	for _, c := range []struct {
		name string
		rss  *guest.RSS
	}{
		{name: "driver-defaults"},
		{
			name: "test-key-table-udp-addresses",
			rss: &guest.RSS{Key: nicTestKey, Table: nicTestTable, Fields: []guest.FlowFields{
				{Flow: uint32(kernel.UDPv4Flow), Fields: sd}, {Flow: uint32(kernel.UDPv6Flow), Fields: sd},
			}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, st, sent, dir := runNICLab(t, k, bin, c.rss, quirks, frames)
			ifc := res.Report.Iface
			t.Logf("guest %s: key %s, table %v, fields set: %q, fields now %v", res.Report.Kernel, ifc.RSSKey, ifc.RSSTable, ifc.FieldsSet, ifc.HashFields)
			if c.rss != nil {
				if ifc.RSSKey != hex.EncodeToString(nicTestKey) || !slices.Equal(ifc.RSSTable, nicTestTable) {
					t.Fatalf("the device has key %s and table %v after the test set key %x and table %v", ifc.RSSKey, ifc.RSSTable, nicTestKey, nicTestTable)
				}
			}
			nic := deviceNICModel(t, ifc, c.rss, quirks)
			if b, err := json.Marshal(nic); err == nil {
				// Kept with the capture (XDPHASH_LAB_KEEP=1).
				os.WriteFile(filepath.Join(dir, "nic.json"), b, 0o644)
			}
			h, err := nic.Hasher()
			if err != nil {
				t.Fatal(err)
			}
			checkEveryFrame(t, h, res.Files[guestFrames], sent, names)
			checkRunAgrees(t, st, sent)
		})
	}
}

// deviceNICModel is the nicrss configuration of the device as the guest
// reported it: its key, table and hash fields, and the quirks of the lab's
// QEMU. Where the device took a
// request of the test's (rss.Fields), its fields
// must now be the ones asked for; where it refused, the test says what it
// answered and models what the device does.
func deviceNICModel(t *testing.T, ifc guest.Iface, rss *guest.RSS, quirks []string) *nicrss.NIC {
	t.Helper()
	n := &nicrss.NIC{HashFunction: "toeplitz", Key: ifc.RSSKey, Indirection: ifc.RSSTable, Fields: map[string]string{}, Quirks: quirks}
	for flow, bits := range ifc.HashFields {
		n.Fields[flow] = nicrss.FieldLetters(bits)
	}
	if rss == nil {
		return n
	}
	if len(ifc.FieldsSet) != len(rss.Fields) {
		t.Fatalf("the guest answered %d of %d hash field requests", len(ifc.FieldsSet), len(rss.Fields))
	}
	for i, f := range rss.Fields {
		flow := kernel.RSSFlowType(f.Flow).String()
		switch got, want := n.Fields[flow], nicrss.FieldLetters(f.Fields); {
		case ifc.FieldsSet[i] != "":
			t.Logf("the device refused rx-flow-hash %s %s: %s; its fields stay %q", flow, want, ifc.FieldsSet[i], got)
		case got != want:
			t.Errorf("rx-flow-hash %s: the device took %q but reports %q", flow, want, got)
		default:
			t.Logf("the device took rx-flow-hash %s %s", flow, want)
		}
	}
	return n
}

// runNICLab boots the guest with rss, sends it every frame once and then the
// profile, and returns its results, its run statistics, the frames sent and
// the lab's directory.
func runNICLab(t *testing.T, k virtiolab.Kernel, bin string, rss *guest.RSS, quirks []string, frames [][]byte) (*virtiolab.Result, *runstats.RunStats, uint64, string) {
	total := uint64(len(frames)) + profileFrames
	args := []string{guest.InitPath, "run", "--iface", "eth0", "--queues", "all", "--xdp-mode", "native",
		"--hash", "toeplitz", "--rss-key", "device", "--check-device-hash", "--check-device-queue",
		"--workers", "2", "--out", "/tmp/run.json", "--write", guestFrames, "--write-count", fmt.Sprint(total), "--stop-on-eof"}
	if len(quirks) > 0 {
		args = append(args, "--rss-quirks", strings.Join(quirks, ","))
	}
	l := bootLab(t, virtiolab.Config{
		Kernel: k, Binary: bin, RXHash: true, Queues: 4, RSS: rss,
		Steps: []guest.Step{{
			Args:  args,
			Ready: "xdp program", ResetRSS: true, StopOnEOF: true, Files: []string{"/tmp/run.json", guestFrames}, Timeout: 4 * time.Minute,
		}},
	})
	t.Logf("boot to /init: %v", l.BootTime())
	cs, err := pktgen.NewCaptureSchedule("corpus", frames, pktgen.MACs{Dst: virtiolab.GuestMAC})
	if err != nil {
		t.Fatal(err)
	}
	mark := steer(t, l)
	var sent uint64
	for _, part := range []struct {
		s     *pktgen.Schedule
		count uint64
		rate  float64
	}{{cs, uint64(len(frames)), corpusRate}, {datacenter(t), profileFrames, profileRate}} {
		rep, err := pktgen.Run(context.Background(), part.s, pktgen.Config{
			Iface: l.Tap, Enter: l.InNS, Mode: pktgen.ModePacket, Count: part.count, Rate: part.rate, Mark: mark,
		})
		sent += rep.Frames
		if err != nil {
			t.Fatal(err)
		}
	}
	if sent != total {
		t.Fatalf("the generator sent %d frames, want %d", sent, total)
	}
	if err := l.Stop(sent); err != nil {
		t.Fatal(err)
	}
	res, err := l.Wait()
	if err != nil {
		t.Fatal(err)
	}
	step := res.Report.Steps[0]
	if step.Exit != 0 || step.Error != "" {
		t.Fatalf("xdphash run in the guest: exit %d %s, want 0 (stopped as asked, at the end of its input)\n%s", step.Exit, step.Error, step.Stderr)
	}
	checkSteered(t, l, sent, res.Report.Iface)
	// Kept with the lab's directory (XDPHASH_LAB_KEEP=1) for a look.
	if err := os.WriteFile(filepath.Join(l.Dir, "frames.pcapng"), res.Files[guestFrames], 0o644); err != nil {
		t.Error(err)
	}
	var st runstats.RunStats
	if err := json.Unmarshal(res.Files["/tmp/run.json"], &st); err != nil {
		t.Fatalf("the guest's run.json: %v", err)
	}
	return res, &st, sent, l.Dir
}

// checkEveryFrame reads the guest's capture and checks every frame in it
// against the NIC model h; the capture must hold every frame sent.
func checkEveryFrame(t *testing.T, h *nicrss.Hasher, pcapng []byte, sent uint64, names map[string]string) {
	t.Helper()
	r, err := pcapgo.NewNgReader(bytes.NewReader(pcapng), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatalf("the guest's %s: %v", guestFrames, err)
	}
	var (
		tu                                              nicrss.Tuple
		n, hashed, unhashed, wrongHash, wrongQueue, bad uint64
		byReport                                        [16]uint64
	)
	fail := func(format string, args ...any) {
		if bad++; bad <= 40 {
			t.Errorf(format, args...)
		}
	}
	for {
		data, _, opts, err := r.ReadPacketDataWithOptions()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the guest's %s, frame %d: %v", guestFrames, n+1, err)
		}
		n++
		dev, err := frameDevice(opts)
		if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		hv, ok := h.Hash(&tu, data)
		name := names[frameKey(data)]
		if !dev.hashed {
			unhashed++
			if ok {
				fail("%s: the device gave no hash, nicrss hashes it (%s, %08x): %x", name, tu.Report, hv, data)
			}
			if dev.queue != 0 {
				wrongQueue++
				fail("%s: no device hash, on queue %d; want 0: %x", name, dev.queue, data)
			}
			continue
		}
		hashed++
		byReport[tu.Report]++
		switch {
		case !ok:
			wrongHash++
			fail("%s: the device hashed it (%08x, %s), nicrss gives no hash: %x", name, dev.hash, dev.typ, data)
		case hv != dev.hash || !sameReport(tu.Report, dev.typ):
			wrongHash++
			fail("%s: device %08x (%s), nicrss %08x (%s, stale %v): %x", name, dev.hash, dev.typ, hv, tu.Report, tu.Stale, data)
		case int(dev.queue) != h.Queue(hv, ok):
			wrongQueue++
			fail("%s: hash %08x on queue %d, nicrss predicts %d", name, hv, dev.queue, h.Queue(hv, ok))
		}
	}
	t.Logf("frames checked: %d (%d hashed by the device, %d not); hash or type differs: %d; queue differs: %d", n, hashed, unhashed, wrongHash, wrongQueue)
	for rep, c := range byReport {
		if c > 0 {
			t.Logf("  hashed as %s: %d", nicrss.Report(rep), c)
		}
	}
	if n != sent {
		t.Errorf("the guest wrote %d frames, want all %d sent", n, sent)
	}
	if hashed == 0 || unhashed == 0 {
		t.Errorf("%d frames hashed by the device, %d not: want both kinds", hashed, unhashed)
	}
}

// deviceFrame is what the guest's capture says of one frame.
type deviceFrame struct {
	hashed bool
	hash   uint32
	typ    kernel.RSSHashType
	queue  uint32
}

// frameDevice reads a frame's queue and device hash from its pcapng
// options and its xdphash comment.
func frameDevice(opts pcapgo.NgPacketOptions) (deviceFrame, error) {
	var d deviceFrame
	if opts.Queue == nil {
		return d, errors.New("no epb_queue")
	}
	d.queue = *opts.Queue
	for _, s := range opts.Comments {
		c, ok, err := capture.ParseComment(s)
		if err != nil || !ok {
			continue
		}
		if !c.HasDeviceHash {
			return d, errors.New("no device hash in the comment: the device gave none, not even virtio-net's none")
		}
		typ, err := parseRSSType(c.DeviceHashType)
		if err != nil {
			return d, err
		}
		d.hash, d.typ = c.DeviceHash, typ
		// virtio-net's "no hash" is a success: 0, type none.
		d.hashed = d.hash != 0 || d.typ != kernel.RSSTypeNone
		return d, nil
	}
	return d, fmt.Errorf("no xdphash comment in %q", opts.Comments)
}

// parseRSSType reads kernel.RSSHashType's String back.
func parseRSSType(s string) (kernel.RSSHashType, error) {
	if s == "none" {
		return kernel.RSSTypeNone, nil
	}
	var t kernel.RSSHashType
	for _, part := range strings.Split(s, "|") {
		found := false
		for bit := kernel.RSSL3IPv4; bit <= kernel.RSSL4ICMP; bit <<= 1 {
			if bit.String() == part {
				t |= bit
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("device hash type %q: %q is no xdp_rss_hash_type bit", s, part)
		}
	}
	return t, nil
}

// sameReport tells whether the device's hash type is nicrss's report as
// virtio_net hands it to XDP (virtnet_xdp_rss_type): the family, the ports,
// and the _EX types as L3 dynamic headers.
func sameReport(r nicrss.Report, t kernel.RSSHashType) bool {
	want := kernel.RSSL3IPv4
	if r.IsIPv6() {
		want = kernel.RSSL3IPv6
	}
	switch r {
	case nicrss.ReportTCPv4, nicrss.ReportTCPv6, nicrss.ReportTCPv6Ex:
		want |= kernel.RSSL4 | kernel.RSSL4TCP
	case nicrss.ReportUDPv4, nicrss.ReportUDPv6, nicrss.ReportUDPv6Ex:
		want |= kernel.RSSL4 | kernel.RSSL4UDP
	}
	switch r {
	case nicrss.ReportIPv6Ex, nicrss.ReportTCPv6Ex, nicrss.ReportUDPv6Ex:
		want |= kernel.RSSL3DynHdr
	}
	return t == want
}

// checkRunAgrees checks what the guest's xdphash run found itself: its
// device-hash check (nicrss's parse, by equality) and its queue check saw
// every frame and found no conflict.
func checkRunAgrees(t *testing.T, st *runstats.RunStats, sent uint64) {
	t.Helper()
	d, q := st.DeviceHash, st.DeviceQueue
	if d == nil || q == nil {
		t.Fatal("run.json has no device_hash or device_queue")
	}
	t.Logf("xdphash run: received %d; device hash (%s): %d frames, %d with a hash, %d conflicts, %d fields differ, classes %+v; queue: %d checked, %d mismatches",
		st.Accounting.Received, d.Method, d.Frames, d.WithHash, d.Conflicts, d.FieldsDiffer, d.Classes, q.Checked, q.Mismatches)
	if st.Accounting.Received != sent || d.Method != "equality" || d.Frames != sent || d.Conflicts != 0 || d.FieldsDiffer != 0 || d.NotHashedByDevice != 0 || q.Mismatches != 0 {
		t.Errorf("xdphash run: %d received of %d sent; device hash check %s: %d frames, %d conflicts, %d fields differ, %d not hashed by the device; queue check: %d mismatches; want every frame, none; samples %+v",
			st.Accounting.Received, sent, d.Method, d.Frames, d.Conflicts, d.FieldsDiffer, d.NotHashedByDevice, q.Mismatches, d.Samples)
	}
}

// frameKey identifies a corpus frame as the guest received it: the
// generator rewrote the destination address and sent the first
// kernel.HeadLen bytes, zeros after, padded to 60 bytes.
func frameKey(f []byte) string {
	b := f[6:min(len(f), kernel.HeadLen)]
	b = bytes.TrimRight(b, "\x00")
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(b)))
	return string(n[:]) + string(b)
}
