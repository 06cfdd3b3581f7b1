package kernel

import (
	"testing"
)

// inlineTag returns f with the VLAN tag (tpid, tci) put in line after the MAC
// addresses: the frame as it was on the wire before the device stripped it.
func inlineTag(f []byte, tpid, tci uint16) []byte {
	out := append([]byte(nil), f[:12]...)
	out = append(out, byte(tpid>>8), byte(tpid), byte(tci>>8), byte(tci))
	return append(out, f[12:]...)
}

// llc is an 802.3 frame of n payload bytes with an LLC header: its type field
// is a length, so eth_type_trans gives skb->protocol 0x0004 (ETH_P_802_2).
func llc(n int) []byte {
	f := []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0, byte(n), 0xaa, 0xaa, 0x03}
	return append(f, make([]byte, n-3)...)
}

// TestHashTagged pins what the kernel does with a metadata VLAN tag
// (bpf_skb_vlan_push, then skb_get_hash): each case is a pair of frames and
// tags and whether the kernel puts the two in one flow.
func TestHashTagged(t *testing.T) {
	o := newHashOracle(t)
	type received struct {
		frame     []byte
		tpid, tci uint16 // the metadata tag; 0, 0 for none
	}
	const q, ad = 0x8100, 0x88a8
	f := ipv4TCP()
	tests := []struct {
		name     string
		a, b     received
		sameFlow bool
	}{
		// The tag counts as if it were in the frame (flow_keys' VLAN key is
		// hashed): the first tag of the dissection, whichever way it came.
		{"metadata tag = the same tag in line", received{f, q, 3<<13 | 100}, received{inlineTag(f, q, 3<<13|100), 0, 0}, true},
		{"802.1AD metadata tag = in line", received{f, ad, 5}, received{inlineTag(f, ad, 5), 0, 0}, true},
		{"metadata tag != no tag", received{f, q, 100}, received{f, 0, 0}, false},
		{"priority tag of VLAN 0 != no tag", received{f, q, 0}, received{f, 0, 0}, false},
		{"VLAN id counts", received{f, q, 100}, received{f, q, 101}, false},
		{"priority counts", received{f, q, 100}, received{f, q, 3<<13 | 100}, false},
		{"DEI does not count", received{f, q, 100}, received{f, q, 1<<12 | 100}, true},
		{"TPID counts", received{f, q, 100}, received{f, ad, 100}, false},
		// A tag left in the frame is the second one (the CVLAN key, not
		// hashed): stripped outer tag + in-line inner tag = both in line.
		{"in-line tag after it = both in line", received{inlineTag(f, q, 7), ad, 100}, received{inlineTag(inlineTag(f, q, 7), ad, 100), 0, 0}, true},
		{"in-line tag after it does not count", received{inlineTag(f, q, 7), ad, 100}, received{inlineTag(f, q, 8), ad, 100}, true},
		// 802.3: after the metadata tag the dissector goes on with
		// skb->protocol (0x0004), not the length field the in-line tag's
		// type holds, so the hash no longer depends on the length.
		{"802.3, metadata tag, any length", received{llc(46), q, 100}, received{llc(48), q, 100}, true},
		{"802.3, in-line tag, length counts", received{inlineTag(llc(46), q, 100), 0, 0}, received{inlineTag(llc(48), q, 100), 0, 0}, false},
		{"802.3 metadata tag != in line", received{llc(46), q, 100}, received{inlineTag(llc(46), q, 100), 0, 0}, false},
	}
	hash := func(t *testing.T, r received) uint32 {
		t.Helper()
		h, err := o.HashTagged(r.frame, r.tpid, r.tci)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ha, hb := hash(t, tt.a), hash(t, tt.b)
			if (ha == hb) != tt.sameFlow {
				t.Errorf("hashes %#08x and %#08x: same flow = %v, want %v", ha, hb, ha == hb, tt.sameFlow)
			}
		})
	}
}

func TestHashTaggedArguments(t *testing.T) {
	o := newHashOracle(t)
	f := ipv4TCP()
	plain, err := o.HashTagged(f, 0, 0)
	if err != nil || plain != kernelHash(t, o, f) {
		t.Errorf("no tag: %#08x, %v; want Hash's %#08x", plain, err, kernelHash(t, o, f))
	}
	if _, err := o.HashTagged(f, 0x9100, 1); err == nil {
		t.Error("TPID 0x9100 accepted, want an error")
	}
	if _, err := o.HashTagged(f[:10], 0x8100, 1); err == nil {
		t.Error("a 10-byte frame accepted, want the test run's refusal")
	}
	o.Close()
	if _, err := o.HashTagged(f, 0x8100, 1); err == nil {
		t.Error("HashTagged after Close succeeded")
	}
}
