package kernel

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of /proc's CPU times, USER_HZ: 100 on every Linux
// architecture's user ABI.
const userHZ = 100

func ticks(n uint64) time.Duration { return time.Duration(n) * time.Second / userHZ }

// ThreadCPUTime is the CPU time (user and system) the calling OS thread has
// used, from /proc/thread-self/stat. The caller holds its thread
// (runtime.LockOSThread) between two readings.
func ThreadCPUTime() (time.Duration, error) { return statCPUTime("/proc/thread-self/stat") }

// ProcessCPUTime is the CPU time (user and system) process pid has used,
// all its threads, living and ended; pid 0 is this process.
func ProcessCPUTime(pid int) (time.Duration, error) {
	path := "/proc/self/stat"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/stat"
	}
	return statCPUTime(path)
}

// statCPUTime reads utime and stime (fields 14 and 15) of a /proc stat
// file. The command name (field 2) may hold spaces and parentheses: the
// fields are counted after its last ')'.
func statCPUTime(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read CPU time: %w", err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("read CPU time: %s: no command name", path)
	}
	f := bytes.Fields(b[i+1:])
	// After the name: state (3), ..., utime (14), stime (15).
	if len(f) < 13 {
		return 0, fmt.Errorf("read CPU time: %s: %d fields", path, len(f)+2)
	}
	var sum uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read CPU time: %s: %w", path, err)
		}
		sum += n
	}
	return ticks(sum), nil
}

// SoftirqTime is the time every CPU has spent in softirqs since boot, from
// /proc/stat: where the kernel's receive work (NAPI polls, XDP, the
// AF_XDP redirect) is counted when it runs outside a task's own time.
func SoftirqTime() (time.Duration, error) {
	t, err := readCPUTime("cpu")
	if err != nil {
		return 0, fmt.Errorf("read softirq time: %w", err)
	}
	return t.Softirq, nil
}

// CPUTimeOf reads CPU cpu's times from /proc/stat.
func CPUTimeOf(cpu int) (CPUTime, error) {
	t, err := readCPUTime("cpu" + strconv.Itoa(cpu))
	if err != nil {
		return CPUTime{}, fmt.Errorf("read the time of CPU %d: %w", cpu, err)
	}
	return t, nil
}

func readCPUTime(name string) (CPUTime, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTime{}, err
	}
	return parseCPUTime(b, name)
}

// parseCPUTime finds the line of CPU name ("cpu" for all, "cpu3") in the
// text of /proc/stat: "cpu3 user nice system idle iowait irq softirq steal
// ...", in ticks.
func parseCPUTime(stat []byte, name string) (CPUTime, error) {
	for len(stat) > 0 {
		var line []byte
		line, stat, _ = bytes.Cut(stat, []byte("\n"))
		f := bytes.Fields(line)
		if len(f) == 0 || string(f[0]) != name {
			continue
		}
		if len(f) < 8 {
			return CPUTime{}, fmt.Errorf("/proc/stat: %q has %d fields, want at least 8", line, len(f))
		}
		var v [7]uint64
		for i := range v {
			n, err := strconv.ParseUint(string(f[1+i]), 10, 64)
			if err != nil {
				return CPUTime{}, fmt.Errorf("/proc/stat: %q: %w", line, err)
			}
			v[i] = n
		}
		user, nice, system, irq, softirq := v[0], v[1], v[2], v[5], v[6]
		return CPUTime{Busy: ticks(user + nice + system + irq + softirq), Softirq: ticks(softirq)}, nil
	}
	return CPUTime{}, fmt.Errorf("/proc/stat has no line %q", name)
}
