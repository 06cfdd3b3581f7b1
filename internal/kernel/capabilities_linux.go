package kernel

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capBPF is CAP_BPF (Linux 5.8). x/sys/unix has the constant, but kernels older
// than 5.8 do not know the bit, which is why missingCapabilities needs lastCap.
const capBPF = unix.CAP_BPF

// MissingCapabilities names the capabilities the calling thread lacks in its
// effective set to load and test-run a SCHED_CLS program, among CAP_BPF,
// CAP_NET_ADMIN and CAP_SYS_ADMIN. It returns none when loading is allowed,
// which is always the case for root without a reduced capability set.
//
// The kernel's rule (kernel/bpf/syscall.c, bpf_prog_load): loading any program
// other than an unprivileged socket filter needs CAP_BPF, and a networking
// program type such as SCHED_CLS also needs CAP_NET_ADMIN; CAP_SYS_ADMIN stands
// in for either. Kernels before 5.8 have no CAP_BPF and require CAP_SYS_ADMIN.
func MissingCapabilities() ([]string, error) {
	eff, err := effectiveCapabilities()
	if err != nil {
		return nil, fmt.Errorf("read capabilities: %w", err)
	}
	lastCap, err := lastCapability()
	if err != nil {
		return nil, fmt.Errorf("read capabilities: %w", err)
	}
	return missingCapabilities(eff, lastCap), nil
}

// missingCapabilities applies the rule of MissingCapabilities to an effective
// capability set (bit n = capability n) on a kernel whose highest capability
// number is lastCap.
func missingCapabilities(eff uint64, lastCap int) []string {
	has := func(c int) bool { return eff&(1<<uint(c)) != 0 }
	if has(unix.CAP_SYS_ADMIN) {
		return nil
	}
	if lastCap < capBPF {
		return []string{"CAP_SYS_ADMIN"}
	}
	var missing []string
	if !has(capBPF) {
		missing = append(missing, "CAP_BPF")
	}
	if !has(unix.CAP_NET_ADMIN) {
		missing = append(missing, "CAP_NET_ADMIN")
	}
	return missing
}

// effectiveCapabilities returns the calling thread's effective capability set.
func effectiveCapabilities() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, fmt.Errorf("capget: %w", err)
	}
	return uint64(data[1].Effective)<<32 | uint64(data[0].Effective), nil
}

// lastCapability returns the highest capability number the running kernel
// knows, from /proc/sys/kernel/cap_last_cap (Linux 3.2).
func lastCapability() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("parse cap_last_cap: %w", err)
	}
	return n, nil
}
