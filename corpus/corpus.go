package corpus

import "strings"

// Frame is one test frame: a whole Ethernet frame starting at the
// destination MAC address, named family/mutation, e.g.
// "ipv4/tcp/l4.sport=1026" or "gre-k/ipv4/tcp/trunc=37".
type Frame struct {
	Name string
	Data []byte
}

// Family returns the frame's family: its name without the last element, the
// shape whose base frame the mutation changed.
func (f Frame) Family() string {
	i := strings.LastIndexByte(f.Name, '/')
	if i < 0 {
		return f.Name
	}
	return f.Name[:i]
}

// Mutation returns the last element of the frame's name: "base" for a base
// frame, otherwise the field and its new value, "trunc=N", or a swap.
func (f Frame) Mutation() string {
	return f.Name[strings.LastIndexByte(f.Name, '/')+1:]
}

// Build returns the corpus: for every family, its base frame and its
// single-field mutations, in a fixed order. Every frame is Comparable.
// Each call builds new frames, so callers may modify them.
func Build() []Frame {
	var out []Frame
	for _, fam := range families() {
		out = append(out, fam.frames()...)
	}
	return out
}

// Bases returns the base frame of every family, in the order of Build: a
// seed for fuzzing and for Mutate.
func Bases() []Frame {
	fams := families()
	out := make([]Frame, 0, len(fams))
	for _, fam := range fams {
		out = append(out, Frame{Name: fam.name + "/base", Data: Stack(fam.layers...)})
	}
	return out
}
