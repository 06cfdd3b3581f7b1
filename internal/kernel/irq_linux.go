package kernel

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// QueueIRQCPUs returns, for each of iface's receive queues in queues, the
// CPUs that may run its kernel receive work: the smp_affinity_list of the
// device's MSI interrupts (/sys/class/net/IF/device/msi_irqs,
// /proc/irq/N/smp_affinity_list). An interrupt is matched to a queue by the
// number its name in /proc/interrupts ends with ("eth1-TxRx-3",
// "mlx5_comp3@pci:...", "virtio0-input.3"); when no name tells the queues
// apart, every queue gets the union of the device's interrupts. A device
// without interrupts of its own (veth, a tap, lo) gives an empty map and no
// error: its receive work runs on the sending CPU, which no file names.
func QueueIRQCPUs(iface string, queues []int) (map[int][]int, error) {
	return queueIRQCPUs("/sys", "/proc", iface, queues)
}

// irqQueueName finds the queue number an interrupt's name ends with.
var irqQueueName = regexp.MustCompile(`(?i)(?:rx|txrx|comp|input|queue|-)[._-]?(\d+)(?:@.*)?$`)

func queueIRQCPUs(sys, proc, iface string, queues []int) (map[int][]int, error) {
	entries, err := os.ReadDir(filepath.Join(sys, "class/net", iface, "device/msi_irqs"))
	if os.IsNotExist(err) && onVirtioBus(sys, iface) {
		// virtio-net's device is a virtio device; its MSI-X vectors belong
		// to the PCI function the virtio device sits on.
		// Not filepath.Join: it would clean "device/.." away instead of
		// leaving the kernel to go up from where the link points.
		entries, err = os.ReadDir(filepath.Join(sys, "class/net", iface, "device") + "/../msi_irqs")
	}
	if err != nil {
		if os.IsNotExist(err) {
			return map[int][]int{}, nil
		}
		return nil, fmt.Errorf("read IRQs of %s: %w", iface, err)
	}
	irqs := map[int]bool{}
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			irqs[n] = true
		}
	}
	names, err := irqNames(filepath.Join(proc, "interrupts"))
	if err != nil {
		return nil, err
	}
	perQueue := map[int][]int{}
	var all []int
	for irq := range irqs {
		cpus, err := readCPUList(filepath.Join(proc, "irq", strconv.Itoa(irq), "smp_affinity_list"))
		if err != nil {
			continue // an interrupt that went away, or one without an affinity file
		}
		all = append(all, cpus...)
		if m := irqQueueName.FindStringSubmatch(names[irq]); m != nil {
			q, _ := strconv.Atoi(m[1])
			perQueue[q] = append(perQueue[q], cpus...)
		}
	}
	out := map[int][]int{}
	for _, q := range queues {
		cpus := perQueue[q]
		if len(cpus) == 0 {
			cpus = all
		}
		if len(cpus) > 0 {
			out[q] = sortedSet(cpus)
		}
	}
	return out, nil
}

// onVirtioBus tells whether iface's device is a virtio device.
func onVirtioBus(sys, iface string) bool {
	bus, err := os.Readlink(filepath.Join(sys, "class/net", iface, "device/subsystem"))
	return err == nil && filepath.Base(bus) == "virtio"
}

// irqNames reads /proc/interrupts: the last field of each numbered line.
func irqNames(path string) (map[int]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read interrupts: %w", err)
	}
	defer f.Close()
	names := map[int]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(fields[0], ":"))
		if err != nil {
			continue
		}
		names[n] = fields[len(fields)-1]
	}
	return names, sc.Err()
}

// readCPUList reads a CPU list file such as "0-3,8".
func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCPUList(strings.TrimSpace(string(b)))
}

// ParseCPUList parses the kernel's CPU list format, "0-3,8,10-11", as
// /proc and /sys print it; an empty string is no CPU.
func ParseCPUList(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	// A set of CPUs, not a list of elements: "0-1023" repeated costs a
	// pass over the set each time, never more memory.
	var set [cpuSetSize]bool
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= cpuSetSize {
			return nil, fmt.Errorf("parse CPU list %q: bad element %q", s, part)
		}
		for c := a; c <= b; c++ {
			set[c] = true
		}
	}
	var cpus []int
	for c, in := range set {
		if in {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

func sortedSet(cpus []int) []int {
	out := slices.Clone(cpus)
	slices.Sort(out)
	return slices.Compact(out)
}
