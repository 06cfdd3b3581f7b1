// Package nicrss models a NIC's receive-side scaling as the device computes
// it, which is not the kernel's view: the device parses the frame itself (an
// Ethernet header, its VLAN tags, the outer IPv4 or IPv6 header and, for
// unfragmented TCP and UDP, the ports), picks one hash type per frame from
// the types its configuration enables (falling back from TCP or UDP to the
// address-only type), and hashes that tuple with its key, through its input
// transform, into its indirection table.
//
// [ParseConfig.Parse] is the device's parse; it fills a [Tuple] and allocates
// nothing. [NIC] is a device's whole RSS configuration (key, table, hash
// function, input transform, the fields of each flow type, the header level),
// read from a device or from a JSON file ([Load]); [NIC.Hasher] hashes frames
// as that device does and [Predict] summarises how it would spread a capture
// over its queues, with the best `ethtool -X weight` table for that load.
//
// The rules follow QEMU's software RSS of virtio-net (hw/net/virtio-net.c,
// net/eth.c), which is the project's lab device; [QuirkQEMU72] adds the
// behaviours of QEMU 7.2 that later versions fixed. docs/nic-rss.md says which
// rules come from reading sources and which were measured.
package nicrss
