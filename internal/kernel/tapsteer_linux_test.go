package kernel

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/xdphash/xdphash/internal/xdptest"
)

// TestTapSteeringByMark sends marked frames (PacketSender with
// FrameTable.Marks) into a 4-queue tap that has the steering program: each
// frame must come out of the queue its mark names, one whose mark names no
// queue out of queue 0, and the program's counts must say so.
func TestTapSteeringByMark(t *testing.T) {
	xdptest.RequireRoot(t)
	const queues = 4
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ns.Close()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
	}()
	// No IPv6 router solicitations: only the test's frames cross the tap.
	for _, c := range []string{"default", "all"} {
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+c+"/disable_ipv6", []byte("1"), 0o644); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	name := fmt.Sprintf("xhs%d", os.Getpid())
	fds := make([]int, queues)
	for i := range fds {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		var ifr struct {
			name  [unix.IFNAMSIZ]byte
			flags uint16
			_     [22]byte
		}
		copy(ifr.name[:], name)
		ifr.flags = unix.IFF_TAP | unix.IFF_NO_PI | unix.IFF_MULTI_QUEUE
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
			t.Fatalf("TUNSETIFF queue %d: %v", i, errno)
		}
		fds[i] = fd
	}
	link, err := netlink.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}

	// Frame k carries k after its Ethernet header; the last one a mark
	// that names no queue.
	const frames = 9
	ft := &FrameTable{Heads: make([]byte, frames*HeadLen), Lens: make([]uint16, frames), Order: make([]uint32, frames), Marks: make([]uint32, frames)}
	for k := range frames {
		h := ft.Heads[k*HeadLen:]
		copy(h, []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5, byte(k)})
		ft.Lens[k], ft.Order[k], ft.Marks[k] = MinFrameLen, uint32(k), uint32(k*3%queues)
	}
	ft.Marks[frames-1] = 1000
	steer, err := AttachTapSteering(fds[0], queues)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := steer.Close(); err != nil {
			t.Error(err)
		}
	}()
	snd, err := NewPacketSender(link.Attrs().Index, ft, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	if n, err := snd.Send(frames); err != nil || n != frames {
		t.Fatalf("sent %d of %d frames: %v", n, frames, err)
	}

	got := map[int]int{} // frame -> queue it came out of
	buf := make([]byte, 2048)
	for q, fd := range fds {
		for {
			n, err := unix.Read(fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				break
			}
			if err != nil {
				t.Fatalf("read queue %d: %v", q, err)
			}
			if n >= 15 && buf[12] == 0x88 && buf[13] == 0xb5 {
				if prev, seen := got[int(buf[14])]; seen {
					t.Errorf("frame %d came out of queues %d and %d", buf[14], prev, q)
				}
				got[int(buf[14])] = q
			}
		}
	}
	want := TapSteered{Queues: make([]uint64, queues), Unmarked: 1}
	for k := range frames {
		wq := int(ft.Marks[k])
		if wq >= queues {
			wq = 0
		} else {
			want.Queues[wq]++
		}
		if q, ok := got[k]; !ok || q != wq {
			t.Errorf("frame %d (mark %d): out of queue %d (seen %v), want %d", k, ft.Marks[k], q, ok, wq)
		}
	}
	c, err := steer.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c) != fmt.Sprint(want) || c.Total() != frames {
		t.Errorf("steering counts %+v (total %d), want %+v", c, c.Total(), want)
	}
}
