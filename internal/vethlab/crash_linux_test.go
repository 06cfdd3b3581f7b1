package vethlab_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestKilledLabLeavesNothing creates a lab in a child process, kills the
// child with SIGKILL, and checks that the kernel removes its namespace and
// veth pair without anyone sweeping, and that no mount is left: the lab holds
// its namespace by file descriptor only.
func TestKilledLabLeavesNothing(t *testing.T) {
	if os.Getenv("VETHLAB_CHILD") == "1" {
		l, err := vethlab.New(vethlab.Config{})
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Stdout.WriteString(l.Host + "\n")
		select {}
	}
	xdptest.RequireRoot(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledLabLeavesNothing$")
	host := xdptest.StartChild(t, cmd, "VETHLAB_CHILD=1", nil)
	xdptest.KillAndWaitGone(t, cmd, host)
	prefix := strings.TrimSuffix(host, "h")
	for _, l := range vethlab.Leftovers() {
		if strings.Contains(l, prefix) {
			t.Errorf("left behind: %s", l)
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), prefix) {
		t.Errorf("a mount of %s is left in /proc/self/mountinfo", prefix)
	}
}

// TestNewWithoutCapSysAdmin creates a lab in a child process that runs as an
// unprivileged user with CAP_NET_ADMIN, CAP_BPF and CAP_NET_RAW but not
// CAP_SYS_ADMIN: New must return an error that names what is missing, and
// promptly.
func TestNewWithoutCapSysAdmin(t *testing.T) {
	if os.Getenv("VETHLAB_CHILD") == "1" {
		_, err := vethlab.New(vethlab.Config{})
		if err == nil {
			os.Stdout.WriteString("no error\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(err.Error() + "\n")
		os.Exit(0)
	}
	xdptest.RequireRoot(t)
	// The test binary sits in a directory only root may enter: copy it where
	// the unprivileged child can run it.
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "vethlab.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestNewWithoutCapSysAdmin$")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: 65534, Gid: 65534},
		AmbientCaps: []uintptr{unix.CAP_NET_ADMIN, unix.CAP_BPF, unix.CAP_NET_RAW},
	}
	cmd.Dir = dir
	line := xdptest.StartChild(t, cmd, "VETHLAB_CHILD=1", nil)
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("New hung without CAP_SYS_ADMIN (killed after 30 s); it wrote %q", line)
	}
	if err != nil {
		t.Fatalf("child: %v; it wrote %q", err, line)
	}
	t.Logf("New: %s", line)
	if !strings.Contains(line, "CAP_SYS_ADMIN") {
		t.Errorf("error %q does not name CAP_SYS_ADMIN", line)
	}
}
