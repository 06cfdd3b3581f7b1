package kernel

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestCPUTimesMove(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, err := ThreadCPUTime()
	if err != nil {
		t.Fatal(err)
	}
	p0, err := ProcessCPUTime(0)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the thread's clock moves by a few ticks: the reading must
	// follow the thread's own work.
	var x uint64
	for {
		for i := range 1 << 20 {
			x += uint64(i) * x
		}
		t1, err := ThreadCPUTime()
		if err != nil {
			t.Fatal(err)
		}
		if t1-t0 >= 3*time.Second/userHZ {
			break
		}
	}
	p1, err := ProcessCPUTime(0)
	if err != nil {
		t.Fatal(err)
	}
	// The kernel scales a thread's and a thread group's tick counts to
	// their run time each on its own (cputime_adjust), so the two readings
	// can differ by a tick or so: the process's must move, by at least one
	// of the thread's three ticks.
	if p1-p0 < time.Second/userHZ {
		t.Errorf("the process used %s while its thread used more than %s", p1-p0, 3*time.Second/userHZ)
	}
	if _, err := SoftirqTime(); err != nil {
		t.Error(err)
	}
	if _, err := ProcessCPUTime(-1); err == nil {
		t.Error("ProcessCPUTime(-1) read something")
	}
	_ = x
}

func TestStatCPUTimeNameWithParens(t *testing.T) {
	path := t.TempDir() + "/stat"
	// A command named "a) (b" and utime 250, stime 50 ticks.
	line := "42 (a) (b) R 1 1 1 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := statCPUTime(path)
	if err != nil || got != 3*time.Second {
		t.Errorf("statCPUTime = %s, %v, want 3s", got, err)
	}
}

func TestParseCPUTime(t *testing.T) {
	stat := []byte("cpu  900 10 300 5000 20 7 70 9 0 0\n" +
		"cpu0 400 5 100 2500 10 3 30 4 0 0\n" +
		"cpu1 500 5 200 2500 10 4 40 5 0 0\n" +
		"intr 12345 0 0\n")
	got, err := parseCPUTime(stat, "cpu1")
	// user 500 + nice 5 + system 200 + irq 4 + softirq 40; not idle, iowait or steal.
	if want := (CPUTime{Busy: 749 * time.Second / userHZ, Softirq: 40 * time.Second / userHZ}); err != nil || got != want {
		t.Errorf("cpu1: %+v, %v, want %+v", got, err, want)
	}
	if got, err := parseCPUTime(stat, "cpu"); err != nil || got.Softirq != 70*time.Second/userHZ {
		t.Errorf("all CPUs: %+v, %v, want softirq 700ms", got, err)
	}
	if _, err := parseCPUTime(stat, "cpu2"); err == nil {
		t.Error("cpu2 of a 2-CPU /proc/stat: no error")
	}
	if _, err := parseCPUTime([]byte("cpu0 1 2 x 4 5 6 7\n"), "cpu0"); err == nil {
		t.Error("a field that is no number: no error")
	}
	if _, err := CPUTimeOf(0); err != nil {
		t.Errorf("CPU 0 of this machine: %v", err)
	}
}
