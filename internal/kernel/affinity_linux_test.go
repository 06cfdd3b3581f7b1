package kernel

import (
	"runtime"
	"slices"
	"testing"
)

// TestSetAffinity pins a locked thread to each allowed CPU in turn and reads
// the mask back. The goroutine never unlocks, so its pinned thread ends with
// it.
func TestSetAffinity(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) == 0 {
		t.Fatal("no allowed CPU")
	}
	for _, cpu := range allowed {
		got := make(chan []int)
		errs := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			if err := SetAffinity(cpu); err != nil {
				errs <- err
				got <- nil
				return
			}
			cpus, err := AllowedCPUs()
			errs <- err
			got <- cpus
		}()
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if cpus := <-got; !slices.Equal(cpus, []int{cpu}) {
			t.Errorf("pinned to %d, the thread may run on %v", cpu, cpus)
		}
	}
	// The test's own thread keeps its mask.
	if now, _ := AllowedCPUs(); !slices.Equal(now, allowed) {
		t.Errorf("the test thread's CPUs changed from %v to %v", allowed, now)
	}
	if err := SetAffinity(-1); err == nil {
		t.Error("no error pinning to CPU -1")
	}
	if err := SetAffinity(cpuSetSize); err == nil {
		t.Errorf("no error pinning to CPU %d", cpuSetSize)
	}
}
