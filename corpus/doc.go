// Package corpus crafts Ethernet frames for cross-checking a flow dissector
// and hash against the running kernel's skb_get_hash (the oracle in
// internal/kernel). It is ordinary code: `xdphash verify` uses it at run
// time, and tests and fuzz targets use it for seeds.
//
// # Frame builder
//
// Stack lays protocol headers (Ethernet, VLAN, PPPoE, MPLS, IPv4, IPv6 and
// its extension headers, TCP, UDP, UDP-Lite, SCTP, DCCP, ESP, AH, ICMP, GRE
// and PPTP, ARP, TIPC, batman-adv, HSR/PRP, 802.3 and raw payloads) one after
// another. Each header fills in the Ethernet type, IP protocol, PPP protocol
// and lengths from what follows unless they are set. Addresses come only
// from 198.18.0.0/15 and 2001:db8::/32, MACs are locally administered.
//
// # The corpus
//
// Build returns a fixed list of frames grouped in families. A family is one
// shape (say IPv4+GRE with key+IPv4+TCP) as a base frame plus single-field
// mutations of it: ports, addresses, flow label, VLAN fields, GRE key, MPLS
// label, fragment bits, IHL, protocol numbers, direction swaps, fields the
// dissector must ignore (TTL, checksums, lengths, payload), and, for one
// representative of each major shape, truncation at every byte. Frame names
// read family/mutation: "ipv4/tcp/l4.sport=1026", "gre-k/ipv4/tcp/trunc=37",
// "depth/vlan/n=16/base". Within a family, some frames must stay in the base
// frame's flow and some must leave it, so a family tests both directions of
// the partition. Depth families nest VLAN tags, IPv6 hop-by-hop headers,
// IPIP, GRE and IPv6-in-IPv6 13 to 18 deep, around the dissector's limit of
// 15 re-dispatches.
//
// The oracle cannot judge every frame; Comparable says which it can. The
// kernel's test run refuses frames shorter than 14 or longer than 3712 bytes
// and an IPv4 (IPv6) Ethernet type with fewer than 20 (40) bytes after the
// Ethernet header, so IPv4 and IPv6 truncations sit behind a PPPoE session
// header, which adds no flow key. TIPC link keep-alives get a random key in
// the kernel and are left out.
//
// # Metadata VLAN tags
//
// MetadataTags are the tags every frame is also checked with as if a device
// had stripped them into the skb's metadata (none, 802.1Q, 802.1AD), and
// InsertTag puts such a tag back in line, the frame as it was on the wire.
//
// # Random mutation
//
// Mutate applies one random, mostly single-field change (a bit flip, a byte
// or 16-bit protocol value, a truncation, padding, a port, a direction swap)
// to a frame, typically one of Bases, for `xdphash verify --count N --seed S`
// and fuzz targets.
package corpus
