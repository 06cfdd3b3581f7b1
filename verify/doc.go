// Package verify cross-checks xdphash's dissector and flow hash against the
// running kernel's skb_get_hash.
//
// The kernel's SipHash key is secret and random per boot, so hash values cannot be
// compared. What can be compared is the partition they induce: two frames get the
// same kernel hash exactly when the kernel puts them in the same flow. verify
// checks that xdphash puts the same frames together and apart, over a set of
// frames (Partition) or over pairs of a frame and a mutation of it (Pairs), and
// describes each disagreement: the two frames, what each side said, and the key
// fields in which xdphash's view of the two frames differs.
//
// A frame may be received with a VLAN tag in its metadata, stripped by the
// device (Sample.Tag): xdphash dissects it with dissect.DissectFrameTagged
// and the kernel's side comes from kernel.HashOracle.HashTagged, so tagged
// and untagged frames share one partition: a frame with a metadata tag must
// fall in the flow of the same frame with the tag in line, where the kernel
// puts it there.
package verify
