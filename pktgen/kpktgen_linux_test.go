package pktgen

import (
	"net"
	"slices"
	"testing"
	"time"
)

// TestPktgenScript checks the commands the kernel mode writes for two
// threads of the simple profile, against the kernel's sample scripts'
// vocabulary.
func TestPktgenScript(t *testing.T) {
	s := builtinSchedule(t, "simple")
	dst := net.HardwareAddr{0x02, 0x78, 0x68, 0, 0, 1}
	got := pktgenScript(s, Config{Iface: "veth1", Threads: 2, Count: 1001, Rate: 2e6}, []int{0, 3}, dst, DefaultSrcMAC)
	dev0 := func(cmd string) pktgenWrite { return pktgenWrite{"veth1@0", cmd} }
	want := []pktgenWrite{
		{"kpktgend_0", "rem_device_all"}, {"kpktgend_0", "add_device veth1@0"},
		dev0("count 501"), dev0("clone_skb 0"), dev0("burst 32"), dev0("ratep 1000000"), dev0("pkt_size 64"),
		dev0("dst_mac 02:78:68:00:00:01"), dev0("src_mac 02:70:67:00:00:01"),
		dev0("dst_min 198.19.0.1"), dev0("dst_max 198.19.0.1"), dev0("src_min 198.18.0.0"), dev0("src_max 198.18.3.255"),
		dev0("udp_src_min 1024"), dev0("udp_src_max 1024"), dev0("udp_dst_min 443"), dev0("udp_dst_max 443"),
		dev0("flows 1024"), dev0("flowlen 4"), dev0("flag QUEUE_MAP_CPU"), dev0("flag NO_TIMESTAMP"),
		{"kpktgend_3", "rem_device_all"}, {"kpktgend_3", "add_device veth1@1"},
		{"veth1@1", "count 500"},
	}
	if !slices.Equal(got[:len(want)], want) {
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("command %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	imix, _ := Builtin("datacenter")
	got = pktgenScript(newSchedule(t, imix), Config{Iface: "veth1", Threads: 1, Duration: time.Second}, []int{1}, dst, DefaultSrcMAC)
	for _, w := range []pktgenWrite{{"veth1@0", "count 0"}, {"veth1@0", "delay 0"}, {"veth1@0", "imix_weights 64,7 576,4 1500,1"}} {
		if !slices.Contains(got, w) {
			t.Errorf("datacenter for a duration: no %+v in %+v", w, got)
		}
	}
}

func TestParsePktgenResult(t *testing.T) {
	// The tail of a device file after a run (net/core/pktgen.c, pktgen_if_show).
	res := []byte(`Params: count 1000  min_pkt_size: 64  max_pkt_size: 64
     frags: 0  delay: 0  clone_skb: 0  ifname: veth1@0
Current:
     pkts-sofar: 1000  errors: 0
     started: 1234us  stopped: 5678us idle: 12us
Result: OK: 4444(c4000+d444) usec, 1000 (64byte,0frags)
  225022pps 115Mb/sec (115211264bps) errors: 0
`)
	got := parsePktgenResult(res)
	if got.Frames != 1000 || got.Elapsed != 4444*time.Microsecond || got.Bytes != 64000 {
		t.Errorf("parsePktgenResult = %+v", got)
	}
}
