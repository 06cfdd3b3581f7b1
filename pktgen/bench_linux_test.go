package pktgen

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRun measures each mode's rate on a veth lab with nothing attached
// to the receiving end (GRO on, which veth needs for XDP_TX frames; the
// kernel drops the frames after its IPv4 receive path), with 1 and 2
// threads, for the simple profile (64-byte frames, 1024 flows). One op is one
// frame; Mpps is the whole run's rate and Mpps/thread the mean of the
// threads'.
//
//	go test -run '^$' -bench 'Run/xdp' -benchtime 4000000x -count 7 ./pktgen/
func BenchmarkRun(b *testing.B) {
	lab := newLab(b)
	s := newScheduleTo(b, builtinSchedule(b, "simple").Profile(), lab)
	cpus := mustAllowedCPUs(b)
	for _, mode := range []Mode{ModeXDP, ModeAFXDP, ModePacket} {
		for _, threads := range []int{1, 2} {
			if threads > len(cpus) {
				continue
			}
			b.Run(fmt.Sprintf("%s/threads=%d", mode, threads), func(b *testing.B) {
				rep, err := Run(context.Background(), s, Config{Iface: lab.Peer, Enter: lab.InPeer, Mode: mode, Threads: threads, Count: uint64(b.N)})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Frames != uint64(b.N) || rep.LinkTxPackets != uint64(b.N) {
					b.Fatalf("sent %d frames, link counted %d, want %d: %v", rep.Frames, rep.LinkTxPackets, b.N, rep.Warnings)
				}
				var perThread float64
				for _, t := range rep.Threads {
					perThread += t.PPS()
				}
				b.ReportMetric(rep.PPS()/1e6, "Mpps")
				b.ReportMetric(perThread/float64(len(rep.Threads))/1e6, "Mpps/thread")
				b.ReportMetric(float64(rep.Elapsed.Nanoseconds())/float64(b.N), "ns/op")
			})
		}
	}
}
