package kernel

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// removeMemlock lifts RLIMIT_MEMLOCK where the kernel charges BPF objects
// against it (before 5.11; later ones charge the memory cgroup, and
// rlimit.RemoveMemlock does nothing there). It is not cached: lifting the
// limit needs CAP_SYS_RESOURCE, and a thread without it that tried first is
// not the last word for the process.
func removeMemlock() error { return rlimit.RemoveMemlock() }

// HashOracle asks the running kernel for its skb_get_hash of a frame. It holds
// a SCHED_CLS program whose whole body is "return bpf_get_hash_recalc(skb)"
// and runs it with BPF_PROG_TEST_RUN; and a second one that first gives the
// skb a metadata VLAN tag (HashTagged, hashoracle_vlan_linux.go).
//
// The kernel's hash key is random per boot and unreadable, so its values can
// only be compared with each other: two frames get the same value exactly when
// the kernel puts them in the same flow.
//
// Hash may be called from several goroutines at once, but not concurrently
// with Close.
type HashOracle struct {
	prog     *ebpf.Program
	vlanProg *ebpf.Program
}

// NewHashOracle loads the oracle's two programs. It needs CAP_BPF and CAP_NET_ADMIN
// (or CAP_SYS_ADMIN); without them the error wraps ErrNotPermitted and names
// the missing capabilities.
func NewHashOracle() (*HashOracle, error) {
	prog, err := loadOracleProgram(&ebpf.ProgramSpec{
		Name: "xdphash_oracle",
		Type: ebpf.SchedCLS,
		// R1 holds the skb context on entry, which is the helper's only
		// argument; R0 carries its result out. The helper is not GPL-only,
		// so no license is needed.
		Instructions: asm.Instructions{
			asm.FnGetHashRecalc.Call(),
			asm.Return(),
		},
	}, "SCHED_CLS programs with bpf_get_hash_recalc (Linux 4.8) and BPF_PROG_TEST_RUN (4.12)")
	if err != nil {
		return nil, fmt.Errorf("load hash oracle: %w", err)
	}
	vlanProg, err := loadOracleProgram(vlanOracleSpec(), "bpf_skb_vlan_push (Linux 4.3) and an __sk_buff context in BPF_PROG_TEST_RUN (5.2)")
	if err != nil {
		prog.Close()
		return nil, fmt.Errorf("load hash oracle for tagged frames: %w", err)
	}
	return &HashOracle{prog: prog, vlanProg: vlanProg}, nil
}

// loadOracleProgram loads one of the oracle's programs; needs names what it
// takes from the kernel, for the error on a kernel without it.
func loadOracleProgram(spec *ebpf.ProgramSpec, needs string) (*ebpf.Program, error) {
	// Lifting the limit needs CAP_SYS_RESOURCE on kernels that charge it,
	// and cilium/ebpf's probe for those kernels needs CAP_BPF: without
	// privilege it fails before the load would. Load anyway, so that a
	// refusal names the capabilities the load itself lacks.
	memlockErr := removeMemlock()
	prog, err := ebpf.NewProgram(spec)
	switch {
	case err == nil:
		return prog, nil
	case errors.Is(err, os.ErrPermission) && memlockErr != nil:
		return nil, fmt.Errorf("%w: %s: %w (raising RLIMIT_MEMLOCK failed too: %w)", ErrNotPermitted, permissionHint(), err, memlockErr)
	case errors.Is(err, os.ErrPermission):
		return nil, fmt.Errorf("%w: %s: %w", ErrNotPermitted, permissionHint(), err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return nil, fmt.Errorf("%w: needs %s: %w", ErrNotSupported, needs, err)
	default:
		return nil, err
	}
}

// permissionHint says which capabilities to grant after the kernel refused to
// load the program.
func permissionHint() string {
	missing, err := MissingCapabilities()
	switch {
	case err != nil:
		return fmt.Sprintf("cannot tell which capability is missing (%v); run as root or grant CAP_BPF and CAP_NET_ADMIN", err)
	case len(missing) == 1 && missing[0] == "CAP_SYS_ADMIN":
		return "missing CAP_SYS_ADMIN, which this kernel (before 5.8, no CAP_BPF) requires; run as root or grant CAP_SYS_ADMIN"
	case len(missing) > 0:
		return "missing " + strings.Join(missing, " and ") + "; run as root or grant CAP_BPF and CAP_NET_ADMIN"
	default:
		return "CAP_BPF and CAP_NET_ADMIN are effective, so a security module, seccomp or kernel lockdown refused"
	}
}

// Hash returns the kernel's skb_get_hash of frame, a whole Ethernet frame
// starting at the destination MAC address.
//
// The test run builds the skb the way a transmit path would see it: protocol
// from eth_type_trans, network header at offset 14. A frame the test run
// refuses (see the package documentation) gives an error wrapping
// ErrFrameRefused.
func (o *HashOracle) Hash(frame []byte) (uint32, error) {
	if o.prog == nil {
		return 0, fmt.Errorf("kernel test run of %d-byte frame: %w", len(frame), ErrClosed)
	}
	hash, err := o.prog.Run(&ebpf.RunOptions{Data: frame})
	switch {
	case err == nil:
		return hash, nil
	case errors.Is(err, unix.EINVAL):
		return 0, fmt.Errorf("kernel test run of %d-byte frame: %w: %w", len(frame), ErrFrameRefused, err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return 0, fmt.Errorf("kernel test run of %d-byte frame: %w: %w", len(frame), ErrNotSupported, err)
	default:
		return 0, fmt.Errorf("kernel test run of %d-byte frame: %w", len(frame), err)
	}
}

// Close unloads the program. Closing twice is allowed.
func (o *HashOracle) Close() error {
	if o.prog == nil {
		return nil
	}
	err := errors.Join(o.prog.Close(), o.vlanProg.Close())
	o.prog, o.vlanProg = nil, nil
	if err != nil {
		return fmt.Errorf("close hash oracle: %w", err)
	}
	return nil
}
