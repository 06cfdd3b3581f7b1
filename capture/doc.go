// Package capture reads and writes capture files: pcap and pcapng, plain
// or gzip-compressed, read with the bounds and errors of [Open] (a record
// longer than the longest any capture tool writes, a block that does not
// add up, a second link type: each refused with its offset); pcapng written
// by [Writer] with the options xdphash run --write records (epb_queue,
// epb_hash, epb_flags), the per-frame [Comment] in which it records what
// the receive loop found, and the section comment of the run's [Settings]
// (hash kind, key, symmetry, descent), read back by xdphash dissect and
// verify to hash as the run did.
//
// It is a leaf: it imports dissect (the VLAN tag of a comment) and
// gopacket, and nothing of the kernel, AF_XDP or the pipeline, so that the
// commands that only read captures link none of them.
package capture
