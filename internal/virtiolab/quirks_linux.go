package virtiolab

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

// qemuVersion matches the first line of `qemu-system-x86_64 --version`.
var qemuVersion = regexp.MustCompile(`QEMU emulator version (\d+)\.(\d+)`)

// NICQuirks are the quirks (nicrss.NIC.Quirks, xdphash run --rss-quirks) of
// the lab's virtio-net device, by the version of QEMU that runs it:
// "qemu-7.2" before QEMU 8.0, whose RSS parse differs from later versions
// (docs/nic-rss.md), none after.
func NICQuirks() ([]string, error) {
	out, err := exec.Command(QEMU, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("read the version of %s: %w", QEMU, err)
	}
	m := qemuVersion.FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("read the version of %s: no version in %q", QEMU, out)
	}
	if major, _ := strconv.Atoi(string(m[1])); major < 8 {
		return []string{"qemu-7.2"}, nil
	}
	return nil, nil
}
