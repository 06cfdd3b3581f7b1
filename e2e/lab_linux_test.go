package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xdphash/xdphash/internal/vethlab"
	"github.com/xdphash/xdphash/internal/xdptest"
)

// labChildEnv marks the child process of TestNewLabInterrupted.
const labChildEnv = "XDPHASH_E2E_LAB_CHILD"

// TestNewLabInterrupted makes a lab in a child process, interrupts the child
// with SIGINT, and checks that the child removed its lab before it died of
// the signal.
func TestNewLabInterrupted(t *testing.T) {
	if os.Getenv(labChildEnv) != "" {
		lab := xdptest.NewLab(t, vethlab.Config{Queues: 1, Named: true})
		os.Stdout.WriteString(strings.Join([]string{lab.Host, lab.Peer, lab.NSName}, " ") + "\n")
		select {} // until the signal; the parent kills it after 10 s
	}
	xdptest.RequireRoot(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewLabInterrupted$")
	cmd.Env = append(os.Environ(), labChildEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := startChild(t, cmd)
	t.Cleanup(vethlab.Sweep) // the labs of a child that died without removing them
	line, err := bufio.NewReader(stdout).ReadString('\n')
	names := strings.Fields(line)
	if err != nil || len(names) != 3 {
		t.Fatalf("the child made no lab: %q, %v\nstderr:\n%s", line, err, &c.stderr)
	}
	lab := &vethlab.Lab{Host: names[0], Peer: names[1], NSName: names[2]}
	// Peer lies inside the namespace: this one sees Host and the namespace.
	if left := xdptest.LabLeftovers(lab); len(left) != 2 {
		t.Fatalf("the child's lab %v shows as %v", names, left)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	c.wait(t, 10*time.Second)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("the child ended with %v, want death by SIGINT", cmd.ProcessState)
	}
	if left := xdptest.LabLeftovers(lab); len(left) > 0 {
		t.Errorf("the interrupted child left %v", left)
	}
}
