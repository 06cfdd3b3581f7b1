package kernel

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestQueueIRQCPUs reads a made-up /sys and /proc: interrupts named after
// their queues give each queue its own CPUs; a device whose names do not
// tell the queues apart gives every queue all of them; a device without
// interrupts (veth) gives nothing.
func TestQueueIRQCPUs(t *testing.T) {
	root := t.TempDir()
	sys, proc := filepath.Join(root, "sys"), filepath.Join(root, "proc")
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	irq := func(dev string, n int, cpus string) {
		write(filepath.Join(sys, "class/net", dev, "device/msi_irqs", strconv.Itoa(n)), "msix\n")
		write(filepath.Join(proc, "irq", strconv.Itoa(n), "smp_affinity_list"), cpus+"\n")
	}
	write(filepath.Join(proc, "interrupts"), `           CPU0       CPU1
  40:          0          0  PCI-MSI 1-edge      eth1
  41:         10          0  PCI-MSI 2-edge      eth1-TxRx-0
  42:          0         20  PCI-MSI 3-edge      eth1-TxRx-1
  50:          5          5  PCI-MSI 4-edge      mlx5_async@pci:0000:00:05.0
  51:          5          5  PCI-MSI 5-edge      other
`)
	irq("eth1", 40, "0-3")
	irq("eth1", 41, "2")
	irq("eth1", 42, "3")
	irq("eth2", 51, "0-1")
	got, err := queueIRQCPUs(sys, proc, "eth1", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], []int{2}) || !slices.Equal(got[1], []int{3}) {
		t.Errorf("eth1: %v, want queue 0 on CPU 2, queue 1 on CPU 3", got)
	}
	got, err = queueIRQCPUs(sys, proc, "eth2", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], []int{0, 1}) || !slices.Equal(got[1], []int{0, 1}) {
		t.Errorf("eth2: %v, want every queue on CPUs 0-1", got)
	}
	// virtio-net: the net device's device is a virtio device (subsystem
	// virtio) on the PCI function that has the MSI-X vectors.
	pci := filepath.Join(sys, "devices/pci0000:00/0000:00:02.0")
	for n, cpus := range map[int]string{60: "0-1", 61: "1", 62: "0", 63: "0"} {
		write(filepath.Join(pci, "msi_irqs", strconv.Itoa(n)), "msix\n")
		write(filepath.Join(proc, "irq", strconv.Itoa(n), "smp_affinity_list"), cpus+"\n")
	}
	write(filepath.Join(sys, "bus/virtio/.keep"), "")
	if err := os.MkdirAll(filepath.Join(pci, "virtio0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(sys, "bus/virtio"), filepath.Join(pci, "virtio0/subsystem")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(sys, "class/net/eth3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(pci, "virtio0"), filepath.Join(sys, "class/net/eth3/device")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(proc, "interrupts"), `           CPU0       CPU1
  60:          0          0  PCI-MSIX-0000:00:02.0   0-edge      virtio0-config
  61:          7          0  PCI-MSIX-0000:00:02.0   1-edge      virtio0-input.0
  62:          0          9  PCI-MSIX-0000:00:02.0   2-edge      virtio0-output.0
  63:          0          9  PCI-MSIX-0000:00:02.0   3-edge      virtio0-input.1
`)
	got, err = queueIRQCPUs(sys, proc, "eth3", []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[0], []int{1}) || !slices.Equal(got[1], []int{0}) {
		t.Errorf("virtio eth3: %v, want queue 0 on CPU 1 (input.0), queue 1 on CPU 0 (input.1), output.0 counted for no queue", got)
	}
	got, err = queueIRQCPUs(sys, proc, "veth0", []int{0})
	if err != nil || len(got) != 0 {
		t.Errorf("veth0: %v, %v; want nothing and no error", got, err)
	}
}

// FuzzParseCPUList: a CPU list either fails or is sorted, unique and within
// the CPU set.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-3,8", "", "3-1", "0-1023", "1024", "a", "0,,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		for i, c := range cpus {
			if c < 0 || c >= cpuSetSize || i > 0 && c <= cpus[i-1] {
				t.Fatalf("ParseCPUList(%q) = %v", s, cpus)
			}
		}
	})
}
