package hash

// HashTuple returns the Toeplitz hash of a NIC's input tuple: src and dst
// (both 4 or both 16 bytes, network order), then sport and dport when
// withPorts is set, transformed by sym first. It is what a NIC computes from
// the fields its own parse found (package nicrss), where [Toeplitz.FromKeys]
// takes the kernel dissector's keys. It panics if src and dst differ in
// length or are neither 4 nor 16 bytes: a programming error.
func (t *Toeplitz) HashTuple(src, dst []byte, sport, dport uint16, withPorts bool, sym Symmetry) uint32 {
	if sym == SymmetricNone {
		// The fixed-size paths: what most NICs hash, without a transform.
		switch {
		case len(src) == 4 && len(dst) == 4:
			return t.HashIPv4((*[4]byte)(src), (*[4]byte)(dst), sport, dport, withPorts)
		case len(src) == 16 && len(dst) == 16:
			return t.HashIPv6((*[16]byte)(src), (*[16]byte)(dst), sport, dport, withPorts)
		}
	}
	n := len(src)
	if n != len(dst) || (n != 4 && n != 16) {
		panic("hash: HashTuple wants two 4- or two 16-byte addresses")
	}
	var in [36]byte
	copy(in[:n], src)
	copy(in[n:2*n], dst)
	in[2*n], in[2*n+1] = byte(sport>>8), byte(sport)
	in[2*n+2], in[2*n+3] = byte(dport>>8), byte(dport)
	if sym != SymmetricNone {
		symmetrize(in[0:n], in[n:2*n], sym)
		symmetrize(in[2*n:2*n+2], in[2*n+2:2*n+4], sym)
	}
	return t.Hash(in[:tupleLen(n, withPorts)])
}
