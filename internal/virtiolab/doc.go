// Package virtiolab runs xdphash on a real NIC driver without hardware: a
// QEMU guest (TCG) with a multi-queue virtio-net device (RSS, hash reports,
// one MSI-X vector per queue), booted from a Debian cloud kernel that the
// lab fetches into a cache (FetchKernel) and an initramfs that it writes
// itself: an executable as /init (package guest's Main; with its shared
// libraries when it is dynamically linked), the virtio-net modules and the
// guest's Config. The host end of the device is a multi-queue tap in a
// network namespace of the lab's own, where frames go in through an AF_PACKET
// socket, each on the tap queue of the device queue its RSS picks
// (Lab.SteerByRSS: QEMU 7.2 stalls when it has to move frames between
// queues); the guest's console streams to a log, its results come back as an
// archive on its second serial port.
//
// Nothing outlives the lab's process: the namespace is held by a file
// descriptor (and by QEMU, which runs in it); QEMU dies with the thread
// that started it (PR_SET_PDEATHSIG), and the tap with the namespace. Close
// kills QEMU and removes the lab's directory; a lab directory left by a
// process killed with SIGKILL is removed by the next New (Sweep).
package virtiolab
