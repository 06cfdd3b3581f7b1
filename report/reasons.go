package report

import "strings"

// dropMeanings says in one line what each drop reason a report can show
// means, by its "stage/reason" name: the engine's (runstats.DropReason),
// the kernel's before the receive loops ("kernel/" and the keys of
// runstats.Accounting.KernelDrops), and the stages before the run that the
// command which made it counts (a soak's veth and guest NIC). Every name
// the code emits has a line here; a test holds it to that.
var dropMeanings = map[string]string{
	// The sending side, counted by a soak (Upstream).
	"veth/tx_dropped":  "the sending veth end could not put the frame on its peer's receive ring (peer tx_dropped)",
	"guest/rx_dropped": "the guest's virtio-net driver dropped the frame before XDP saw it (guest eth0 rx_dropped)",

	// The kernel, before a receive loop took the frame.
	"kernel/rx_ring_full":     "the receive ring was full: the receive loop did not take frames off AF_XDP's RX ring fast enough (XDP_STATISTICS rx_ring_full)",
	"kernel/rx_dropped":       "the kernel dropped the frame before the AF_XDP ring: in copy mode mostly because the fill ring was empty (no free UMEM frame), else a frame too big for one (XDP_STATISTICS rx_dropped)",
	"kernel/rx_invalid_descs": "the fill ring handed the kernel an invalid descriptor (XDP_STATISTICS rx_invalid_descs)",
	"kernel/rx_left_on_ring":  "the kernel put the frame on AF_XDP's RX ring, but the run stopped before a receive loop took it (more than one ring's worth arrived during the stop)",
	"replay/ring_full":        "a receive loop fell behind the paced capture replay and its ring of batches was full (--replay-drops, the model of a NIC's full RX ring; no kernel is involved)",
	"replay/unreceived":       "a capture replay read and queued the frame, but the run stopped before a receive loop took it",
	"ring/full":               "the ring from the receive loop to the worker was full: the kernel's backlog drop (netdev_max_backlog, --ring-size)",
	"worker/flow_limit":       "the RPS flow limit dropped it: one flow held too much of a nearly full backlog (skb_flow_limit)",
	"consumer/overlimit":      "the worker's queueing discipline was at its packet limit (fifo, fq, fq_codel limit)",
	"consumer/overmemory":     "fq_codel was at its memory limit (memory_limit)",
	"consumer/codel":          "CoDel's control law dropped it: the flow's packets had waited above target for an interval (fq_codel)",
	"consumer/flow_limit":     "the flow was at fq's per-flow packet limit (flow_limit)",
	"unserved":                "not lost: held in a worker's queueing discipline when the run ended, never served (a --service-rate below the load leaves them)",
	"kernel/fill_ring_empty":  "not a drop count: the times the kernel found the fill ring empty; in copy mode each such frame is dropped and counted in rx_dropped",
}

// DropMeaning is the one-line meaning of a drop reason ("kernel/rx_dropped",
// "ring/full", ...), "" for a name it does not know.
func DropMeaning(reason string) string { return dropMeanings[reason] }

// lossStages groups the drop reasons into the stages a loss summary names,
// in the order a frame passes them; a reason of another stage (the sending
// side a command counts) is its own stage, named by its prefix, before the
// kernel.
var lossStages = []struct {
	name     string
	prefixes []string
}{
	{"kernel", []string{"kernel"}},
	{"worker rings", []string{"ring", "worker"}},
	{"consumers", []string{"consumer"}},
}

// isLossStage reports whether s is one of lossStages.
func isLossStage(s string) bool {
	for _, ls := range lossStages {
		if ls.name == s {
			return true
		}
	}
	return false
}

// stageOf is the loss summary's stage of reason.
func stageOf(reason string) string {
	prefix, _, _ := strings.Cut(reason, "/")
	for _, s := range lossStages {
		for _, p := range s.prefixes {
			if p == prefix {
				return s.name
			}
		}
	}
	return prefix
}
