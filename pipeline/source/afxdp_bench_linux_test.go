package source

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// BenchmarkAFXDP measures the bare receive loop (Drain) on Host while the
// lab's Peer end sends corpus frames as fast as an AF_PACKET socket can
// (sendmmsg, 64 frames a call): one op is one frame received. On veth the
// sender's CPU also runs the kernel's receive work (the XDP program and the
// copy into the UMEM), so the rate is the slowest of sender, kernel and
// receiver. Mpps is frames received per second; drops are the kernel's
// (XDP_STATISTICS) per frame received.
func BenchmarkAFXDP(b *testing.B) {
	for _, queues := range []int{1, 2} {
		for _, mode := range XDPModes {
			for _, rx := range []RxMode{RxSpin, RxPoll} {
				b.Run(fmt.Sprintf("queues=%d/%s/%s", queues, mode, rx), func(b *testing.B) {
					benchmarkAFXDP(b, queues, AFXDPConfig{Mode: mode, RxMode: rx})
				})
			}
		}
	}
}

func benchmarkAFXDP(b *testing.B, queues int, cfg AFXDPConfig) {
	lab := xdptest.NewLab(b, vethlab.Config{Queues: queues})
	cfg.Iface = lab.Host
	src := openSource(b, cfg)
	sender := newPeerSender(b, lab)
	frames := taggedFrames(2)[:senderBatch]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := sender.send(frames); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ResetTimer()
	start := time.Now()
	got, err := Drain(src, uint64(b.N), time.Now().Add(time.Minute))
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	var total, drops uint64
	for i, q := range src.Queues() {
		total += got[i]
		drops += q.Stats().KernelDrops()
	}
	if total < uint64(b.N) {
		b.Fatalf("received %d frames of %d in a minute", total, b.N)
	}
	b.ReportMetric(float64(total)/elapsed.Seconds()/1e6, "Mpps")
	b.ReportMetric(float64(drops)/float64(total), "drops/frame")
}

// BenchmarkAFXDPReceive measures Receive alone, the user-space side of the
// receive loop, on an RX ring filled beforehand (outside the timer): one op
// is one frame handed out in batches of DefaultAFXDPBatch. It is the ceiling
// of one queue's receive loop on this CPU, with the kernel's work (the XDP
// program and the copy into the UMEM) paid by the sender.
func BenchmarkAFXDPReceive(b *testing.B) {
	lab := xdptest.NewLab(b, vethlab.Config{Queues: 1})
	src := openSource(b, AFXDPConfig{Iface: lab.Host, RxMode: RxPoll})
	sender := newPeerSender(b, lab)
	frames := taggedFrames(20)[:1024] // half the RX ring: none is dropped
	q := src.Queues()[0]
	batch := NewBatch(DefaultAFXDPBatch)
	b.ResetTimer()
	for received := 0; received < b.N; {
		b.StopTimer()
		sender.sendAll(b, frames)
		b.StartTimer()
		for got := 0; got < len(frames); got += batch.Len() {
			if err := q.Receive(batch); err != nil {
				b.Fatal(err)
			}
		}
		received += len(frames)
	}
	b.StopTimer()
	if d := q.Stats().KernelDrops(); d != 0 {
		b.Errorf("%d frames dropped by the kernel", d)
	}
}
