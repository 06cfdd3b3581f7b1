// Package kernel is the one place in xdphash that talks to the Linux kernel
// through BPF and raw system calls (cilium/ebpf and x/sys/unix). It holds the
// hash oracle (below); the XDP redirect program, its XSKMAP and its BPF-link
// attach with a netlink fallback (xdp_linux.go); the device-bound variant
// that writes the device's RX metadata (hash, stripped VLAN tag, timestamp)
// in front of each frame, its probes and the record's reader (xdpmeta*.go);
// the AF_XDP sockets built on asavie/xdp, with that library's traps worked
// around (xdpsock_linux.go, whose doc comment lists them); the traffic
// generators: XDP live frames through BPF_PROG_RUN, AF_XDP and AF_PACKET
// senders, and a packet capture for tests (xdpgen*.go); a TCX egress program
// that gives frames a hardware VLAN tag (vlanpush_linux.go); the device's RSS
// key, indirection table and hash fields through ethtool (rss*.go); and CPU
// affinity (affinity_linux.go).
//
// # Kernel features
//
// What the kernel may lack is probed the way cilium/ebpf probes it, with
// package feature (internal/kernel/feature): LiveFramesSupported,
// HaveXDPLinks and HaveXDPMetadataKfuncs keep only a conclusive answer (nil,
// or a *feature.UnsupportedFeatureError that names the first Linux version
// with the feature and is ErrNotSupported); a probe that a missing privilege
// stopped answers ErrNotPermitted and runs again on the next call. Tests
// pass those errors to internal/xdptest.SkipIfNotSupported, which skips on
// an older kernel and fails on one that should have the feature.
//
// # Hash oracle
//
// HashOracle returns the running kernel's skb_get_hash of an Ethernet frame by
// running a two-instruction SCHED_CLS program (call bpf_get_hash_recalc, exit)
// over it with BPF_PROG_TEST_RUN. The kernel's SipHash key is drawn at boot and
// cannot be read, so only the partition is comparable: frames with equal
// kernel hashes are one flow to the kernel, and the kernel's hash is
// direction-symmetric.
//
// The test run builds the skb like a transmit path: skb->protocol comes from
// eth_type_trans (the Ethernet type if >= 0x0600, else 0x0001 when the payload
// starts with FF FF and 0x0004 otherwise), the network header is at offset 14,
// so the dissector's thoff counts from the Ethernet header. Hash sets no
// hardware VLAN tag: tags stay in the frame and are dissected from it.
// HashTagged runs a second program that first calls bpf_skb_vlan_push, which
// on an untagged skb only fills skb->vlan_proto and skb->vlan_tci: the frame
// as received from a device that stripped its tag into the metadata. The
// dissector takes that tag as the first one without reading a byte, so a
// frame with a metadata tag hashes like the same frame with the tag in line,
// but for 802.3 frames (docs/kernel-fidelity.md).
//
// # Frames the test run refuses
//
// Measured on Linux 6.18.44 (x86-64, 4 KiB pages); each refusal is EINVAL from
// BPF_PROG_TEST_RUN and comes back from Hash wrapped in ErrFrameRefused:
//
//   - fewer than 14 bytes (no whole Ethernet header);
//   - more than 3712 bytes: the test run allocates one page for the skb
//     (4096 minus 64 bytes of headroom minus 320 bytes of skb_shared_info);
//   - Ethernet type 0x0800 with fewer than 20 bytes after the Ethernet header
//     (the 20 bytes need not be a valid header: IHL, version and total length
//     are not checked);
//   - Ethernet type 0x86DD with fewer than 40 bytes after the Ethernet header.
//
// Nothing else is refused: every other Ethernet type, including 802.1Q/802.1AD
// and PPPoE with a short or empty payload, and 802.3 length frames, is
// accepted from 14 bytes on. A short IPv4 or IPv6 header can therefore be
// tested behind a PPPoE session header, which the flow dissector follows
// without writing any key of its own.
package kernel
