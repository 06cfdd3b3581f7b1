package corpus

import (
	"bytes"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
)

// A family is a base frame of one shape and the single-field mutations
// applied to it. Its frames are named family/mutation, the base family/base.
type family struct {
	name   string
	layers []Layer
	muts   []mutation
}

// A mutation derives named variants from a base frame and its fields; emit
// ignores variants equal to the base.
type mutation func(base []byte, fields []field, emit func(name string, frame []byte))

// frames returns the family's base frame followed by its variants, leaving
// out frames the oracle cannot compare.
func (fam family) frames() []Frame {
	base, fields := stack(fam.layers...)
	out := []Frame{{Name: fam.name + "/base", Data: base}}
	emit := func(name string, frame []byte) {
		if bytes.Equal(frame, base) || !Comparable(frame) {
			return
		}
		out = append(out, Frame{Name: fam.name + "/" + name, Data: frame})
	}
	for _, m := range fam.muts {
		m(base, fields, emit)
	}
	return out
}

// lookup finds the field named by sel: "outer.NAME" is the first field called
// NAME, plain "NAME" the last one (the innermost header). A selector that
// matches nothing is a mistake in a family definition.
func lookup(fields []field, sel string) field {
	name, outer := strings.CutPrefix(sel, "outer.")
	found, ok := field{}, false
	for _, f := range fields {
		if f.Name == name {
			found, ok = f, true
			if outer {
				break
			}
		}
	}
	if !ok {
		panic(fmt.Sprintf("corpus: no field %q", sel))
	}
	return found
}

func (f field) read(frame []byte) uint64 {
	var v uint64
	for _, b := range frame[f.Off : f.Off+f.Len] {
		v = v<<8 | uint64(b)
	}
	return v
}

// write stores v in the field: the whole field, or the bits of Mask with v
// shifted into place.
func (f field) write(frame []byte, v uint64) {
	if f.Mask != 0 {
		shift := bits.TrailingZeros64(f.Mask)
		v = f.read(frame)&^f.Mask | v<<shift&f.Mask
	}
	for i := f.Len - 1; i >= 0; i-- {
		frame[f.Off+i] = byte(v)
		v >>= 8
	}
}

// decimalFields are shown in decimal in frame names; others in hex.
var decimalFields = []string{"sport", "dport", "ttl", "hlim", "vid", "pcp", "dei", "ihl", "ver", "fragoff", "off", "callid", "label", "session", "seq", "mf", "df", "m", "s", "c", "k", "r", "a"}

func formatValue(sel string, v uint64) string {
	name := sel[strings.LastIndexByte(sel, '.')+1:]
	if slices.Contains(decimalFields, name) || strings.HasSuffix(name, "len") {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%#x", v)
}

// set writes each value into the field sel.
func set(sel string, values ...uint64) mutation {
	return func(base []byte, fields []field, emit func(string, []byte)) {
		f := lookup(fields, sel)
		for _, v := range values {
			frame := bytes.Clone(base)
			f.write(frame, v)
			emit(sel+"="+formatValue(sel, v), frame)
		}
	}
}

// addr writes each address into the address field sel.
func addr(sel string, addrs ...string) mutation {
	return func(base []byte, fields []field, emit func(string, []byte)) {
		f := lookup(fields, sel)
		for _, s := range addrs {
			a := netip.MustParseAddr(s)
			frame := bytes.Clone(base)
			if f.Len == 4 {
				copy(frame[f.Off:], addr4(a))
			} else {
				copy(frame[f.Off:], addr16(a))
			}
			emit(sel+"="+s, frame)
		}
	}
}

// fill sets every byte of the field sel to each of the values in turn:
// for fields the flow dissector must ignore, such as payloads.
func fill(sel string, values ...byte) mutation {
	return func(base []byte, fields []field, emit func(string, []byte)) {
		f := lookup(fields, sel)
		for _, v := range values {
			frame := bytes.Clone(base)
			for i := range f.Len {
				frame[f.Off+i] = v
			}
			emit(fmt.Sprintf("%s=fill-%02x", sel, v), frame)
		}
	}
}

// Direction swaps: which address and port pairs trade places.
const (
	swapAll   = iota // every IP header and the transport header: the reply packet
	swapInner        // the innermost IP header and the transport header
	swapAddrs        // the innermost IP addresses only
	swapPorts        // the transport ports only
)

var swapNames = [...]string{"swap", "swap-inner", "swap-addrs", "swap-ports"}

// swap exchanges source and destination as selected by scope. In IP and
// transport headers the destination lies right after the source.
func swap(scope int) mutation {
	return func(base []byte, fields []field, emit func(string, []byte)) {
		var addrs, ports [][]byte // source and destination together
		frame := bytes.Clone(base)
		for i := 1; i < len(fields); i++ {
			src, dst := fields[i-1], fields[i]
			switch span := frame[src.Off : dst.Off+dst.Len]; {
			case src.Name == "l4.sport" && dst.Name == "l4.dport":
				ports = append(ports, span)
			case src.Name == "ipv4.src" && dst.Name == "ipv4.dst", src.Name == "ipv6.src" && dst.Name == "ipv6.dst":
				addrs = append(addrs, span)
			}
		}
		var spans [][]byte
		switch scope {
		case swapAll:
			spans = append(addrs, ports...)
		case swapInner:
			spans = append(addrs[len(addrs)-1:], ports...)
		case swapAddrs:
			spans = addrs[len(addrs)-1:]
		case swapPorts:
			spans = ports
		}
		for _, span := range spans {
			swapHalves(span)
		}
		emit(swapNames[scope], frame)
	}
}

// truncs cuts the frame at every byte boundary from 14 bytes on.
func truncs() mutation {
	return func(base []byte, _ []field, emit func(string, []byte)) {
		for n := minFrameLen; n < len(base); n++ {
			emit(fmt.Sprintf("trunc=%d", n), bytes.Clone(base[:n]))
		}
	}
}

// trunc cuts the frame to each of the lengths ns.
func trunc(ns ...int) mutation {
	return func(base []byte, _ []field, emit func(string, []byte)) {
		for _, n := range ns {
			if n < len(base) {
				emit(fmt.Sprintf("trunc=%d", n), bytes.Clone(base[:n]))
			}
		}
	}
}

// pad appends n bytes of value v, as Ethernet padding or a trailer would.
func pad(v byte, ns ...int) mutation {
	return func(base []byte, _ []field, emit func(string, []byte)) {
		for _, n := range ns {
			frame := append(bytes.Clone(base), bytes.Repeat([]byte{v}, n)...)
			emit(fmt.Sprintf("pad=%d-%02x", n, v), frame)
		}
	}
}
